#include "camera/datasets/synthetic_gesture_dataset.hpp"

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "camera/datasets/dvs_gesture.hpp"
#include "camera/datasets/synthetic_gestures.hpp"
#include "camera/formats/camera_readers.hpp"
#include "io/event_csv.hpp"

namespace egret {

SyntheticGestureSummary write_synthetic_gesture_dataset(const std::string& dir,
                                                        const SyntheticGestureConfig& cfg) {
  namespace fs = std::filesystem;
  if (cfg.train_users <= 0 || cfg.test_users <= 0 || cfg.train_users + cfg.test_users > 99 ||
      cfg.lightings.empty() || !(cfg.gesture_us > 0) || cfg.gap_us < 0 || !(cfg.frame_us > 0))
    throw std::invalid_argument("synthetic gestures: impossible configuration");
  fs::create_directories(dir);
  if (fs::exists(fs::path(dir) / "trials_to_train.txt"))
    throw std::invalid_argument(dir + ": already holds a gesture dataset");
  std::mt19937_64 rng(cfg.seed);
  SyntheticGestureSummary summary;
  std::ostringstream train_list, test_list;
  const int users = cfg.train_users + cfg.test_users;
  for (int u = 0; u < users; ++u) {
    const bool test = u >= cfg.train_users;
    const int number = test ? 24 + (u - cfg.train_users) : 1 + u;
    const GestureStyle style = random_style(rng);
    for (const std::string& light_name : cfg.lightings) {
      Lighting light = gesture_lightings()[0];
      bool found = false;
      for (const auto& l : gesture_lightings())
        if (l.name == light_name) {
          light = l;
          found = true;
        }
      if (!found)
        throw std::invalid_argument("synthetic gestures: unknown lighting '" + light_name + "'");
      char stem[64];
      std::snprintf(stem, sizeof stem, "user%02d_%s", number, light_name.c_str());
      DvsSensorConfig sc;
      sc.seed = rng();
      sc.shot_noise_rate_hz = light.noise_hz;
      DvsSensorModel sensor(sc);
      std::vector<CameraEvent> events;
      std::vector<GestureLabel> labels;
      double t = 0;
      for (int cls = 0; cls < 11; ++cls) {
        t += cfg.gap_us;
        auto ev = render_gesture(cls, style, light, cfg.gesture_us, cfg.frame_us, sensor, t, rng());
        // Keep the gesture's own window (the sensor's first frame of a gesture only sets its
        // reference; events of the gap are not labelled, as in the real recordings).
        events.insert(events.end(), ev.begin(), ev.end());
        labels.push_back(
            {cls + 1, static_cast<std::int64_t>(t), static_cast<std::int64_t>(t + cfg.gesture_us)});
        t += cfg.gesture_us;
      }
      write_aedat31((fs::path(dir) / (std::string(stem) + ".aedat")).string(), events,
                    sensor.sensor());
      write_gesture_labels((fs::path(dir) / (std::string(stem) + "_labels.csv")).string(), labels);
      (test ? test_list : train_list) << stem << ".aedat\n";
      ++summary.trials;
      summary.events += events.size();
    }
  }
  write_file_atomically((fs::path(dir) / "trials_to_test.txt").string(), test_list.str());
  write_file_atomically((fs::path(dir) / "trials_to_train.txt").string(), train_list.str());
  return summary;
}

}  // namespace egret
