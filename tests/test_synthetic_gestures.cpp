// The contrast-threshold sensor model against hand-computed crossings, and the synthetic gesture
// dataset: deterministic per seed, readable by the dataset loader, plausible DVS statistics.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "camera/datasets/dvs_gesture.hpp"
#include "camera/datasets/synthetic_gesture_dataset.hpp"
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
