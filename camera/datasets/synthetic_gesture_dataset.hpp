// Writes a synthetic DVS128 Gesture-style directory (AEDAT 3.1 recordings, label CSVs, split
// files) with camera/datasets/synthetic_gestures.hpp: every trial is one user under one lighting
// doing the 11 gestures in turn, as in the real dataset. The same loader
// (camera/datasets/dvs_gesture.hpp) reads it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace egret {

struct SyntheticGestureConfig {
  int train_users = 4;  // user01 ... (the real train split is users 01-23)
  int test_users = 2;   // user24 ... (the real test split is users 24-29)
  std::vector<std::string> lightings = {"led", "fluorescent"};
  double gesture_us = 1.8e6;  // each gesture
  double gap_us = 0.3e6;      // between gestures
  double frame_us = 2000;     // rendering rate (500 Hz)
  std::uint64_t seed = 1;
};

struct SyntheticGestureSummary {
  int trials = 0;
  std::uint64_t events = 0;
};

// Creates `dir` (which must not hold a dataset already) and fills it.
SyntheticGestureSummary write_synthetic_gesture_dataset(const std::string& dir,
                                                        const SyntheticGestureConfig& cfg);

}  // namespace egret
