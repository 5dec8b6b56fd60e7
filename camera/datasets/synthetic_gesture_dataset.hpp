// Writes a synthetic DVS128 Gesture-style directory (AEDAT 3.1 recordings, label CSVs, split
// files) with camera/datasets/synthetic_gestures.hpp: every trial is one user under one lighting
// doing the 11 gestures in turn, as in the real dataset. The same loader
// (camera/datasets/dvs_gesture.hpp) reads it, and the real set drops in for it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace egret {

struct SyntheticGestureConfig {
  int train_users = 23;  // user01 ... user23, as the real train split
  int test_users = 6;    // user24 ... user29, as the real test split
  // Each user is recorded under this many of the five lighting conditions, drawn per user (the
  // real set has about 4 per user: 5 is the full size) ...
  int lightings_per_user = 2;
  // ... unless this names the conditions every user is recorded under.
  std::vector<std::string> lightings;
  double gesture_us = 1.5e6;  // each gesture
  double gap_us = 0.3e6;      // between gestures
  double frame_us = 2000;     // rendering rate (500 Hz)
  int threads = 0;            // trials rendered in parallel; 0: one per core
  std::uint64_t seed = 1;
};

struct SyntheticGestureSummary {
  int trials = 0;
  std::uint64_t events = 0;
};

// Called after each recording is written, with the number written so far (1, 2, ... total), one
// call at a time, from the thread that wrote it: the caller reports progress (the whole set takes
// about a minute on 2 cores).
using SyntheticGestureProgress = std::function<void(int written, int total)>;

// Creates `dir` (which must not hold a dataset already) and fills it. The files do not depend on
// `threads` (nor on `progress`).
SyntheticGestureSummary write_synthetic_gesture_dataset(
    const std::string& dir, const SyntheticGestureConfig& cfg,
    const SyntheticGestureProgress& progress = {});

}  // namespace egret
