// The IBM DVS128 Gesture dataset layout: userNN_<lighting>.aedat (AEDAT 3.1) with
// userNN_<lighting>_labels.csv (class,startTime_usec,endTime_usec; classes 1-11; a sample is
// start <= t < end) and the split files trials_to_train.txt / trials_to_test.txt (one .aedat name
// per line). The same loader serves the real dataset and egret's synthetic one.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "camera/camera_event.hpp"

namespace egret {

inline constexpr std::array<const char*, 11> kGestureClasses = {"hand_clapping",
                                                                "right_hand_wave",
                                                                "left_hand_wave",
                                                                "right_arm_clockwise",
                                                                "right_arm_counter_clockwise",
                                                                "left_arm_clockwise",
                                                                "left_arm_counter_clockwise",
                                                                "arm_roll",
                                                                "air_drums",
                                                                "air_guitar",
                                                                "other_gestures"};

struct GestureLabel {
  int cls = 0;  // 1..11 as in the files
  std::int64_t start_us = 0, end_us = 0;
};

// Errors name the file and line (wrong header, non-numbers, class outside 1-11, start >= end).
std::vector<GestureLabel> read_gesture_labels(const std::string& path);
void write_gesture_labels(const std::string& path, const std::vector<GestureLabel>& labels);

// Trial names (e.g. "user01_fluorescent.aedat"), blank lines ignored.
std::vector<std::string> read_trial_list(const std::string& path);

struct GestureSample {
  int label = 0;      // 0..10 (class - 1)
  std::string trial;  // userNN_<lighting>
  std::int64_t start_us = 0;
  std::vector<CameraEvent> events;  // times relative to the sample's start
};

// Loads the samples of one split ("train" or "test"). slice_us > 0 cuts each labelled gesture
// into consecutive windows of that length (the EGRU paper used 1.7 s) and drops a final
// shorter remainder; 0 keeps whole gestures.
std::vector<GestureSample> load_gesture_split(const std::string& dir, const std::string& split,
                                              std::int64_t slice_us = 0);

}  // namespace egret
