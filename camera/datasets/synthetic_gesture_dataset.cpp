#include "camera/datasets/synthetic_gesture_dataset.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "camera/datasets/dvs_gesture.hpp"
#include "camera/datasets/synthetic_gestures.hpp"
#include "camera/formats/camera_readers.hpp"
#include "io/event_csv.hpp"

namespace egret {
namespace {

// Everything random about one recording, drawn in order from the dataset's generator so that
// the files do not depend on how many threads render them.
struct TrialPlan {
  std::string stem;  // userNN_<lighting>
  bool test = false;
  GestureStyle style;
  Lighting light;
  DvsSensorConfig sensor;
  std::array<GestureTrial, 11> gestures;
};

void check(const SyntheticGestureConfig& cfg) {
  const int n = static_cast<int>(gesture_lightings().size());
  if (cfg.train_users <= 0 || cfg.test_users <= 0 || cfg.train_users + cfg.test_users > 99)
    throw std::invalid_argument(
        "synthetic gestures: need 1-99 users in all, at least one per split");
  if (cfg.lightings.empty() && (cfg.lightings_per_user < 1 || cfg.lightings_per_user > n))
    throw std::invalid_argument("synthetic gestures: lightings_per_user must be 1-" +
                                std::to_string(n));
  for (const auto& l : cfg.lightings) gesture_lighting(l);  // throws on an unknown name
  if (!(cfg.gesture_us > 0) || !(cfg.gap_us >= 0) || !(cfg.frame_us > 0) ||
      !std::isfinite(cfg.gesture_us) || !std::isfinite(cfg.gap_us) ||
      cfg.gesture_us / cfg.frame_us > 1e7 || cfg.threads < 0)
    throw std::invalid_argument(
        "synthetic gestures: gesture_us, frame_us must be > 0 and finite, gap_us >= 0, threads >= "
        "0");
}

// The lighting conditions of one user: the configured list, or a draw without replacement.
std::vector<Lighting> user_lightings(const SyntheticGestureConfig& cfg, std::mt19937_64& rng) {
  std::vector<Lighting> out;
  if (!cfg.lightings.empty()) {
    for (const auto& l : cfg.lightings) out.push_back(gesture_lighting(l));
    return out;
  }
  std::vector<Lighting> all(gesture_lightings().begin(), gesture_lightings().end());
  for (int i = 0; i < cfg.lightings_per_user; ++i) {
    const auto pick =
        static_cast<std::size_t>(detail::uniform01(rng) * static_cast<double>(all.size() - i)) +
        static_cast<std::size_t>(i);
    std::swap(all[static_cast<std::size_t>(i)], all[std::min(pick, all.size() - 1)]);
    out.push_back(all[static_cast<std::size_t>(i)]);
  }
  return out;
}

std::vector<TrialPlan> plan_trials(const SyntheticGestureConfig& cfg) {
  std::mt19937_64 rng(cfg.seed);
  std::vector<TrialPlan> plans;
  const int users = cfg.train_users + cfg.test_users;
  for (int u = 0; u < users; ++u) {
    const bool test = u >= cfg.train_users;
    const int number = test ? 24 + (u - cfg.train_users) : 1 + u;
    const GestureStyle style = random_style(rng);
    // One camera per user: its hot pixels stay with it across that user's lightings.
    const std::uint64_t camera_seed = rng();
    const double hot_share = uniform_in(rng, 0.0005, 0.003);
    for (const Lighting& light : user_lightings(cfg, rng)) {
      TrialPlan p;
      char stem[64];
      std::snprintf(stem, sizeof stem, "user%02d_%s", number, light.name.c_str());
      p.stem = stem;
      p.test = test;
      p.style = style;
      p.light = light;
      p.sensor.seed = camera_seed;
      p.sensor.shot_noise_rate_hz = light.noise_hz;
      p.sensor.hot_pixel_share = hot_share;
      p.sensor.hot_pixel_rate_hz = 60;
      for (auto& g : p.gestures) g = random_trial(rng);
      plans.push_back(p);
    }
  }
  return plans;
}

std::uint64_t write_trial(const std::string& dir, const TrialPlan& p,
                          const SyntheticGestureConfig& cfg) {
  namespace fs = std::filesystem;
  DvsSensorModel sensor(p.sensor);
  std::vector<CameraEvent> events;
  std::vector<GestureLabel> labels;
  double t = 0;
  for (int cls = 0; cls < 11; ++cls) {
    t += cfg.gap_us;
    const auto ev = render_gesture(cls, p.style, p.gestures[static_cast<std::size_t>(cls)], p.light,
                                   cfg.gesture_us, cfg.frame_us, sensor, t);
    // The sensor's first frame of a gesture only moves its reference from the last one; events
    // of the gap are not labelled, as in the real recordings.
    events.insert(events.end(), ev.begin(), ev.end());
    labels.push_back(
        {cls + 1, static_cast<std::int64_t>(t), static_cast<std::int64_t>(t + cfg.gesture_us)});
    t += cfg.gesture_us;
  }
  write_aedat31((fs::path(dir) / (p.stem + ".aedat")).string(), events, sensor.sensor());
  write_gesture_labels((fs::path(dir) / (p.stem + "_labels.csv")).string(), labels);
  return events.size();
}

}  // namespace

SyntheticGestureSummary write_synthetic_gesture_dataset(const std::string& dir,
                                                        const SyntheticGestureConfig& cfg,
                                                        const SyntheticGestureProgress& progress) {
  namespace fs = std::filesystem;
  check(cfg);
  fs::create_directories(dir);
  if (fs::exists(fs::path(dir) / "trials_to_train.txt"))
    throw std::invalid_argument(dir + ": already holds a gesture dataset");
  const std::vector<TrialPlan> plans = plan_trials(cfg);
  std::vector<std::uint64_t> counts(plans.size(), 0);
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex, progress_mutex;
  int written = 0;
  auto work = [&] {
    for (std::size_t i = next++; i < plans.size(); i = next++) {
      try {
        counts[i] = write_trial(dir, plans[i], cfg);
        const std::lock_guard<std::mutex> lock(progress_mutex);
        ++written;
        if (progress) progress(written, static_cast<int>(plans.size()));
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = std::min<std::size_t>(
      plans.size(), cfg.threads > 0 ? static_cast<std::size_t>(cfg.threads) : cores);
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);

  SyntheticGestureSummary summary;
  std::ostringstream train_list, test_list;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    (plans[i].test ? test_list : train_list) << plans[i].stem << ".aedat\n";
    ++summary.trials;
    summary.events += counts[i];
  }
  // The split files last: their presence marks a complete dataset.
  write_file_atomically((fs::path(dir) / "trials_to_test.txt").string(), test_list.str());
  write_file_atomically((fs::path(dir) / "trials_to_train.txt").string(), train_list.str());
  return summary;
}

}  // namespace egret
