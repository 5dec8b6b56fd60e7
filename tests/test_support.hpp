// Helpers shared by the tests.
#pragma once

#include <string>

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
