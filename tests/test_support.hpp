// Helpers shared by the tests.
#pragma once

#include <string>

// Whether AddressSanitizer is built in: gcc defines __SANITIZE_ADDRESS__, clang has the feature.
#if defined(__SANITIZE_ADDRESS__)
#define EGRET_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EGRET_TEST_ASAN 1
#endif
#endif
#ifndef EGRET_TEST_ASAN
#define EGRET_TEST_ASAN 0
#endif

namespace egret::testing {

// The message of the exception `f` throws, or "" if it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace egret::testing
