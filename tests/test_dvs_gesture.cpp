// The DVS128 Gesture layout: the real label file, and a directory written with egret's own
// writers read back sample by sample (exact events, labels, slicing), with named errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "camera/datasets/dvs_gesture.hpp"
#include "camera/formats/camera_readers.hpp"
#include "tests/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using egret::CameraEvent;
using egret::testing::error_of;

TEST(DvsGesture, RealLabelFile) {
  const auto path = (fs::path(EGRET_SOURCE_DIR) / ".." / "shared" / "data" / "dvsgesture" /
                     "user01_natural_labels.csv")
                        .string();
  const auto labels = egret::read_gesture_labels(path);
  ASSERT_EQ(labels.size(), 12u);  // 12 data lines in the file
  EXPECT_EQ(labels.front().cls, 1);
  EXPECT_EQ(labels.front().start_us, 53036986);
  EXPECT_EQ(labels.front().end_us, 59508469);
  std::vector<int> seen(12, 0);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    EXPECT_LT(labels[i].start_us, labels[i].end_us);
    if (i > 0) {
      EXPECT_GE(labels[i].start_us, labels[i - 1].end_us);  // gestures do not overlap
    }
    ++seen[static_cast<std::size_t>(labels[i].cls)];
  }
  for (int c = 1; c <= 11; ++c) EXPECT_GE(seen[static_cast<std::size_t>(c)], 1) << c;
  EXPECT_EQ(seen[8], 2);  // class 8 appears twice in this file
}

TEST(DvsGesture, DirectoryRoundTripWithSlicing) {
  const fs::path dir = fs::path(::testing::TempDir()) / "egret_gesture_dir";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // user01: class 3 on [1000, 5000), class 7 on [6000, 9000); user24 (test): class 11.
  std::vector<CameraEvent> a, b;
  for (std::int64_t t = 0; t < 10000; t += 250)
    a.push_back({t, static_cast<std::uint16_t>(t % 128),
                 static_cast<std::uint16_t>((t / 128) % 128),
                 static_cast<std::uint8_t>((t / 250) % 2)});
  for (std::int64_t t = 0; t < 4000; t += 500) b.push_back({t, 5, 6, 1});
  egret::write_aedat31((dir / "user01_led.aedat").string(), a);
  egret::write_aedat31((dir / "user24_led.aedat").string(), b);
  egret::write_gesture_labels((dir / "user01_led_labels.csv").string(),
                              {{3, 1000, 5000}, {7, 6000, 9000}});
  egret::write_gesture_labels((dir / "user24_led_labels.csv").string(), {{11, 500, 3500}});
  std::ofstream(dir / "trials_to_train.txt") << "user01_led.aedat\n";
  std::ofstream(dir / "trials_to_test.txt") << "user24_led.aedat\n\n";

  const auto train = egret::load_gesture_split(dir.string(), "train");
  ASSERT_EQ(train.size(), 2u);
  EXPECT_EQ(train[0].label, 2);
  EXPECT_EQ(train[0].trial, "user01_led");
  ASSERT_EQ(train[0].events.size(), 16u);  // t = 1000, 1250, ..., 4750
  EXPECT_EQ(train[0].events.front().t, 0);
  EXPECT_EQ(train[0].events.back().t, 3750);
  EXPECT_EQ(train[0].events.front().x, a[4].x);
  EXPECT_EQ(train[1].label, 6);
  EXPECT_EQ(train[1].events.size(), 12u);  // 6000 .. 8750
  const auto test = egret::load_gesture_split(dir.string(), "test");
  ASSERT_EQ(test.size(), 1u);
  EXPECT_EQ(test[0].label, 10);
  EXPECT_EQ(test[0].events.size(), 6u);  // 500 .. 3000
  // Slices of 1.5 ms: [1000,2500) [2500,4000) for the first gesture (the 1 ms rest is dropped),
  // [6000,7500) [7500,9000) for the second.
  const auto sliced = egret::load_gesture_split(dir.string(), "train", 1500);
  ASSERT_EQ(sliced.size(), 4u);
  EXPECT_EQ(sliced[0].events.size(), 6u);
  EXPECT_EQ(sliced[1].start_us, 2500);
  EXPECT_EQ(sliced[2].label, 6);
  EXPECT_EQ(sliced[3].start_us, 7500);
  EXPECT_EQ(sliced[3].events.size(), 6u);

  // Errors name the file and line.
  std::ofstream(dir / "user24_led_labels.csv") << "class,startTime_usec,endTime_usec\n12,0,10\n";
  EXPECT_NE(error_of([&] {
              egret::load_gesture_split(dir.string(), "test");
            }).find("user24_led_labels.csv:2: class outside 1-11"),
            std::string::npos);
  std::ofstream(dir / "user24_led_labels.csv") << "cls,start,end\n";
  EXPECT_NE(error_of([&] {
              egret::load_gesture_split(dir.string(), "test");
            }).find("expected the header"),
            std::string::npos);
  fs::remove(dir / "user24_led_labels.csv");
  EXPECT_NE(
      error_of([&] { egret::load_gesture_split(dir.string(), "test"); }).find("has no label file"),
      std::string::npos);
  EXPECT_THROW(egret::load_gesture_split(dir.string(), "validation"), std::invalid_argument);
}

// Label CSVs and split files are bounded and strict: numbers checked, times in the camera
// range, trial names plain file names in the dataset folder, long lines refused, errors with
// file:line.
TEST(DvsGesture, LabelAndSplitFilesAreStrict) {
  const fs::path dir = fs::path(::testing::TempDir()) / "egret_gesture_strict";
  fs::create_directories(dir);
  const std::string labels = (dir / "labels.csv").string();
  auto label_error = [&](const std::string& text) {
    std::ofstream(labels, std::ios::binary) << text;
    return error_of([&] { egret::read_gesture_labels(labels); });
  };
  const std::string header = "class,startTime_usec,endTime_usec\n";
  EXPECT_NE(label_error(header + "1,0,99999999999999999999\n").find("labels.csv:2: not an integer"),
            std::string::npos);
  EXPECT_NE(label_error(header + "1,0,nan\n").find("labels.csv:2: not an integer"),
            std::string::npos);
  EXPECT_NE(label_error(header + "1,0,9007199254740993\n")
                .find("labels.csv:2: need 0 <= start < end <= 2^53 us"),
            std::string::npos);
  EXPECT_NE(label_error(header + "1,5," + std::string(5000, '9') + "\n")
                .find("labels.csv:2: line longer than 4096 bytes"),
            std::string::npos);
  std::ofstream(labels, std::ios::binary) << header << "11,0,9007199254740992\r\n";
  const auto edge = egret::read_gesture_labels(labels);
  ASSERT_EQ(edge.size(), 1u);
  EXPECT_EQ(edge[0].end_us, std::int64_t{1} << 53);

  const std::string list = (dir / "trials_to_train.txt").string();
  auto list_error = [&](const std::string& text) {
    std::ofstream(list, std::ios::binary) << text;
    return error_of([&] { egret::read_trial_list(list); });
  };
  EXPECT_NE(list_error("user01_led.aedat\n../../etc/passwd.aedat\n")
                .find("trials_to_train.txt:2: expected a trial file name like user01_led.aedat"),
            std::string::npos);
  EXPECT_NE(list_error("/abs/user01.aedat\n").find("trials_to_train.txt:1:"), std::string::npos);
  EXPECT_NE(list_error("user01_led.txt\n").find("trials_to_train.txt:1:"), std::string::npos);
  EXPECT_NE(list_error(std::string(5000, 'a') + ".aedat\n").find("line longer than 4096 bytes"),
            std::string::npos);
  std::ofstream(list, std::ios::binary) << "user01_led.aedat\r\n\n user02_led.aedat \n";
  EXPECT_EQ(egret::read_trial_list(list),
            (std::vector<std::string>{"user01_led.aedat", "user02_led.aedat"}));
}

}  // namespace
