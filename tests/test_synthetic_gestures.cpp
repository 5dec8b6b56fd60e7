// The contrast-threshold sensor model against hand-computed crossings, and the synthetic gesture
// dataset: deterministic per seed, readable by the dataset loader, plausible DVS statistics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "camera/camera_transforms.hpp"
#include "camera/datasets/dvs_gesture.hpp"
#include "camera/datasets/synthetic_gesture_dataset.hpp"
#include "camera/datasets/synthetic_gestures.hpp"
#include "camera/dvs_sensor_model.hpp"

namespace {

namespace fs = std::filesystem;

egret::DvsSensorConfig quiet_pixel() {
  egret::DvsSensorConfig c;
  c.width = 1;
  c.height = 1;
  c.threshold = 0.2;
  c.threshold_spread = 0;
  c.refractory_us = 0;
  c.leak_rate_hz = 0;
  c.shot_noise_rate_hz = 0;
  c.eps = 1e-9;
  return c;
}

TEST(SyntheticGestures, SensorModelEmitsAtInterpolatedThresholdCrossings) {
  // ln I rises by 1.1 between frames at t = 0 and t = 1000 us: 5 ON events (thresholds 0.2) at
  // 1000 k 0.2 / 1.1 = 181.8, 363.6, 545.5, 727.3, 909.1 us; then falls by 0.6 until 2000 us:
  // OFF events 0.2 and 0.4 below the last reference (1.0): at 1500 and 1833.3 us.
  egret::DvsSensorModel m(quiet_pixel());
  std::vector<egret::CameraEvent> ev;
  m.add_frame({1.0f}, 0, ev);
  m.add_frame({static_cast<float>(std::exp(1.1))}, 1000, ev);
  m.add_frame({static_cast<float>(std::exp(0.5))}, 2000, ev);
  ASSERT_EQ(ev.size(), 7u);
  const double want[7] = {181.8, 363.6, 545.5, 727.3, 909.1, 1500, 1833.3};
  for (int i = 0; i < 7; ++i) {
    EXPECT_NEAR(static_cast<double>(ev[i].t), want[i], 1.0) << i;
    EXPECT_EQ(ev[i].p, i < 5 ? 1 : 0) << i;
  }
  // A 300 us refractory period keeps 181.8, 545.5, 909.1 (drops 363.6, 727.3), 1500, 1833.3.
  auto c = quiet_pixel();
  c.refractory_us = 300;
  egret::DvsSensorModel r(c);
  ev.clear();
  r.add_frame({1.0f}, 0, ev);
  r.add_frame({static_cast<float>(std::exp(1.1))}, 1000, ev);
  r.add_frame({static_cast<float>(std::exp(0.5))}, 2000, ev);
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_NEAR(static_cast<double>(ev[1].t), 545.5, 1.0);
  EXPECT_NEAR(static_cast<double>(ev[3].t), 1500, 1.0);
  EXPECT_THROW(r.add_frame({1.0f}, 1500, ev), std::invalid_argument);  // time must increase
  EXPECT_THROW(r.add_frame({-1.0f}, 3000, ev), std::invalid_argument);
}

TEST(SyntheticGestures, DatasetIsDeterministicAndLoadable) {
  egret::SyntheticGestureConfig cfg;
  cfg.train_users = 1;
  cfg.test_users = 1;
  cfg.lightings = {"led"};
  cfg.gesture_us = 0.25e6;
  cfg.gap_us = 0.05e6;
  cfg.seed = 4;
  const fs::path a = fs::path(::testing::TempDir()) / "egret_synth_a";
  const fs::path b = fs::path(::testing::TempDir()) / "egret_synth_b";
  fs::remove_all(a);
  fs::remove_all(b);
  const auto sa = egret::write_synthetic_gesture_dataset(a.string(), cfg);
  egret::write_synthetic_gesture_dataset(b.string(), cfg);
  EXPECT_EQ(sa.trials, 2);
  for (const char* f : {"user01_led.aedat", "user24_led.aedat", "user01_led_labels.csv"}) {
    std::ifstream fa(a / f, std::ios::binary), fb(b / f, std::ios::binary);
    const std::string da((std::istreambuf_iterator<char>(fa)), {}),
        db((std::istreambuf_iterator<char>(fb)), {});
    EXPECT_FALSE(da.empty());
    EXPECT_EQ(da, db) << f << " differs between two runs with the same seed";
  }
  EXPECT_THROW(egret::write_synthetic_gesture_dataset(a.string(), cfg), std::invalid_argument);

  const auto train = egret::load_gesture_split(a.string(), "train");
  const auto test = egret::load_gesture_split(a.string(), "test");
  ASSERT_EQ(train.size(), 11u);
  ASSERT_EQ(test.size(), 11u);
  for (int c = 0; c < 11; ++c) {
    const auto& s = train[static_cast<std::size_t>(c)];
    EXPECT_EQ(s.label, c);
    EXPECT_GT(s.events.size(), 500u) << "class " << c;
    std::size_t on = 0;
    for (const auto& e : s.events) {
      on += e.p;
      EXPECT_LT(e.x, 128);
      EXPECT_LT(e.y, 128);
      EXPECT_GE(e.t, 0);
      EXPECT_LT(e.t, 250000);
    }
    const double share = static_cast<double>(on) / static_cast<double>(s.events.size());
    EXPECT_GT(share, 0.3) << "class " << c;
    EXPECT_LT(share, 0.7) << "class " << c;
  }
}

}  // namespace

namespace {

std::string file_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

TEST(SyntheticGestures, LayoutFollowsTheRealSplitAndDoesNotDependOnThreads) {
  egret::SyntheticGestureConfig cfg;
  cfg.train_users = 2;
  cfg.test_users = 2;
  cfg.lightings_per_user = 3;
  cfg.gesture_us = 0.03e6;  // short: the layout and the bytes are the point (32 s under ASan
  cfg.gap_us = 0.01e6;      // at 0.1 s per gesture)
  cfg.seed = 9;
  const fs::path a = fs::path(::testing::TempDir()) / "egret_synth_threads1";
  const fs::path b = fs::path(::testing::TempDir()) / "egret_synth_threads2";
  fs::remove_all(a);
  fs::remove_all(b);
  // The progress callback hears of every recording once, in order, with the total.
  std::vector<std::pair<int, int>> calls;
  const auto progress = [&calls](int written, int total) { calls.emplace_back(written, total); };
  std::vector<std::pair<int, int>> expected_calls;
  for (int i = 1; i <= 12; ++i) expected_calls.emplace_back(i, 12);
  cfg.threads = 1;
  const auto sa = egret::write_synthetic_gesture_dataset(a.string(), cfg, progress);
  EXPECT_EQ(calls, expected_calls);
  calls.clear();
  cfg.threads = 2;
  egret::write_synthetic_gesture_dataset(b.string(), cfg, progress);
  EXPECT_EQ(calls, expected_calls);
  EXPECT_EQ(sa.trials, 12);  // 4 users x 3 lightings
  const auto train = egret::read_trial_list((a / "trials_to_train.txt").string());
  const auto test = egret::read_trial_list((a / "trials_to_test.txt").string());
  ASSERT_EQ(train.size(), 6u);
  ASSERT_EQ(test.size(), 6u);
  const std::vector<std::string> names = {"fluorescent", "fluorescent_led", "led", "natural",
                                          "lab"};
  std::map<std::string, std::set<std::string>> lightings;  // per user
  for (const auto* list : {&train, &test})
    for (const std::string& trial : *list) {
      const std::string user = trial.substr(0, 6), light = trial.substr(7, trial.size() - 13);
      EXPECT_NE(std::find(names.begin(), names.end(), light), names.end()) << trial;
      lightings[user].insert(light);
      EXPECT_EQ(file_text(a / trial), file_text(b / trial)) << trial << " depends on threads";
    }
  // Users 01-02 train and 24-25 test, as the real set numbers them; 3 distinct lightings each.
  EXPECT_EQ(train.front().substr(0, 6), "user01");
  EXPECT_EQ(test.front().substr(0, 6), "user24");
  ASSERT_EQ(lightings.size(), 4u);
  for (const auto& [user, set] : lightings) EXPECT_EQ(set.size(), 3u) << user;
  cfg.lightings_per_user = 6;
  EXPECT_THROW(egret::write_synthetic_gesture_dataset((a / "x").string(), cfg),
               std::invalid_argument);
  cfg.lightings_per_user = 2;
  cfg.lightings = {"disco"};
  EXPECT_THROW(egret::write_synthetic_gesture_dataset((a / "y").string(), cfg),
               std::invalid_argument);
}

// Clockwise and counter-clockwise differ only in the direction of the hand's angle around the
// circle's centre: the angle grows for class 3 (clockwise with y down) and falls for class 4.
TEST(SyntheticGestures, DirectionPairsTurnOppositeWays) {
  egret::GestureStyle s;
  egret::GestureTrial t;
  t.onset_s = 0;
  s.sway = 0;
  const double cx = s.center_x + 0.22 * s.scale, cy = s.center_y + 0.45;
  for (int cls : {3, 4}) {
    double turned = 0, last = 0;
    for (int k = 0; k <= 100; ++k) {
      const auto h = egret::gesture_hands(cls, 0.005 * k, s, t);
      const double angle = std::atan2(h.ry - cy, h.rx - cx);
      if (k > 0) turned += std::remainder(angle - last, 2 * M_PI);
      last = angle;
    }
    // 0.5 s at 1 turn per second: half a turn, in the class's direction.
    EXPECT_NEAR(turned, cls == 3 ? M_PI : -M_PI, 1e-9) << "class " << cls;
  }
}

// A left-handed user strums the air guitar with the other hand: the hand that moves is the
// image-left one, mirrored about the body's centre line.
TEST(SyntheticGestures, LeftHandedUsersMirrorTheGesturesNotDefinedByTheHand) {
  egret::GestureStyle s;
  s.sway = 0;
  egret::GestureTrial t;
  t.onset_s = 0;
  auto moved = [&](bool left_handed, int cls) {
    s.left_handed = left_handed;
    const auto a = egret::gesture_hands(cls, 0.0, s, t), b = egret::gesture_hands(cls, 0.04, s, t);
    return std::pair<double, double>{std::hypot(b.rx - a.rx, b.ry - a.ry),
                                     std::hypot(b.lx - a.lx, b.ly - a.ly)};
  };
  const auto right = moved(false, 9), left = moved(true, 9);
  EXPECT_GT(right.first, 0.01);
  EXPECT_EQ(right.second, 0);
  EXPECT_EQ(left.first, 0);
  EXPECT_NEAR(left.second, right.first, 1e-12);
  // A right-hand wave stays a right-hand wave.
  EXPECT_EQ(moved(true, 1).second, 0);
  EXPECT_GT(moved(true, 1).first, 0);
}

// Hot pixels fire in a static scene at their own rates: with share 1/64 of 64 pixels (one) at
// 2 kHz, 1 s of a constant frame gives a Poisson count of mean in [500, 2000].
TEST(SyntheticGestures, HotPixelsFireInAStaticScene) {
  egret::DvsSensorConfig c = quiet_pixel();
  c.width = 8;
  c.height = 8;
  c.hot_pixel_share = 1.0 / 64;
  c.hot_pixel_rate_hz = 2000;
  egret::DvsSensorModel m(c);
  std::vector<egret::CameraEvent> ev;
  const std::vector<float> frame(64, 0.5f);
  for (int k = 0; k <= 1000; ++k) m.add_frame(frame, 1000.0 * k, ev);
  ASSERT_GT(ev.size(), 400u);
  EXPECT_LT(ev.size(), 2200u);
  for (const auto& e : ev) {
    EXPECT_EQ(e.x, ev.front().x);  // one pixel
    EXPECT_EQ(e.y, ev.front().y);
    EXPECT_EQ(e.p, 1);
  }
  // Without hot pixels the same sensor is silent.
  c.hot_pixel_share = 0;
  egret::DvsSensorModel quiet(c);
  ev.clear();
  for (int k = 0; k <= 1000; ++k) quiet.add_frame(frame, 1000.0 * k, ev);
  EXPECT_TRUE(ev.empty());
}

// The augmentation's map by hand: a quarter turn about the centre of a 4x4 sensor takes the
// pixel centre (0.5, 0.5) to (3.5, 0.5) (x' = c - (y - c), y' = c + (x - c) with c = 2), then a
// shift of +0.6 in y moves it to row 1; an event mapped outside the sensor is dropped.
TEST(SyntheticGestures, SpatialAugmentationMapsPixelsByHand) {
  egret::SpatialAugmentation a;
  a.rotation_rad = M_PI / 2;
  a.shift_y = 0.6;
  const std::vector<egret::CameraEvent> in = {{10, 0, 0, 1}, {20, 3, 3, 0}};
  const auto out = egret::augment_spatially(in, {4, 4}, a);
  ASSERT_EQ(out.size(), 1u);  // (3, 3) goes to (0.5, 4.1): outside
  EXPECT_EQ(out[0].x, 3);
  EXPECT_EQ(out[0].y, 1);
  EXPECT_EQ(out[0].t, 10);
  EXPECT_EQ(out[0].p, 1);
  egret::SpatialAugmentation zoom;
  zoom.zoom = 2;  // (0.5, 0.5) -> (2 - 3, 2 - 3): outside; (1.5, 1.5) -> (1, 1)
  const auto z = egret::augment_spatially({{1, 0, 0, 1}, {2, 1, 1, 1}}, {4, 4}, zoom);
  ASSERT_EQ(z.size(), 1u);
  EXPECT_EQ(z[0].x, 1);
  EXPECT_EQ(z[0].y, 1);
  zoom.zoom = 0;
  EXPECT_THROW(egret::augment_spatially(in, {4, 4}, zoom), std::invalid_argument);
}

}  // namespace
