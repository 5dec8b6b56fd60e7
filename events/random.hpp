// Portable random numbers from std::mt19937_64's bits (std distributions differ between standard
// libraries, which would make seeded inputs and datasets platform-dependent).
#pragma once

#include <random>

namespace egret::detail {

// Uniform in (0, 1): never exactly 0 or 1, so logs and inverse CDFs are safe.
inline double uniform01(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
}

}  // namespace egret::detail
