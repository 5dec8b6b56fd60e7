// A contrast-threshold DVS sensor model (as in v2e / ESIM): frames of intensity in, events out.
//
// Per pixel: log intensity L = ln(I + eps); a reference L_ref set at the first frame. Between two
// frames the log intensity is taken as linear in time; each time it moves a full threshold away
// from the reference an event is emitted at the interpolated crossing time and the reference
// follows (ON for +C_on, OFF for -C_off). Thresholds differ per pixel (normal around `threshold`
// with relative spread `threshold_spread`). A pixel is blind for `refractory_us` after an event
// (the crossing is consumed without an event). Leak: the reference drifts down at
// `leak_rate_hz` thresholds per second (occasional ON events in static scenes). Shot noise: Poisson
// ON/OFF events at `shot_noise_rate_hz` per pixel, more in the dark. Hot pixels: a share
// `hot_pixel_share` of pixels fire ON events as a Poisson process of their own rate (log-uniform
// in [hot_pixel_rate_hz / 4, hot_pixel_rate_hz]), whatever the scene. Deterministic per seed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "camera/camera_event.hpp"
#include "events/random.hpp"

namespace egret {

struct DvsSensorConfig {
  int width = 128, height = 128;
  double threshold = 0.2;          // mean contrast threshold (log intensity)
  double threshold_spread = 0.15;  // relative standard deviation across pixels
  double refractory_us = 500;
  double leak_rate_hz = 0.1;
  double shot_noise_rate_hz = 0.5;
  double eps = 1e-3;              // added to the intensity before the log
  double hot_pixel_share = 0;     // share of pixels that fire regardless of the scene
  double hot_pixel_rate_hz = 50;  // the fastest hot pixel's rate
  std::uint64_t seed = 1;
};

class DvsSensorModel {
 public:
  explicit DvsSensorModel(const DvsSensorConfig& cfg) : cfg_(cfg), rng_(cfg.seed) {
    if (cfg.width <= 0 || cfg.height <= 0 || !(cfg.threshold > 0) || cfg.threshold_spread < 0 ||
        cfg.refractory_us < 0 || cfg.leak_rate_hz < 0 || cfg.shot_noise_rate_hz < 0 ||
        !(cfg.eps > 0) || !(cfg.hot_pixel_share >= 0 && cfg.hot_pixel_share <= 1) ||
        !(cfg.hot_pixel_rate_hz > 0 && std::isfinite(cfg.hot_pixel_rate_hz)))
      throw std::invalid_argument("DvsSensorModel: impossible sensor parameters");
    const std::size_t n =
        static_cast<std::size_t>(cfg.width) * static_cast<std::size_t>(cfg.height);
    on_.resize(n);
    off_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      on_[i] = std::max(0.01, cfg.threshold * (1 + cfg.threshold_spread * normal()));
      off_[i] = std::max(0.01, cfg.threshold * (1 + cfg.threshold_spread * normal()));
    }
    // Drawn after the thresholds, and only when asked for: sensors without hot pixels draw the
    // same numbers as before hot pixels existed.
    const auto hot =
        static_cast<std::size_t>(std::llround(cfg.hot_pixel_share * static_cast<double>(n)));
    for (std::size_t k = 0; k < hot; ++k) {
      const auto pixel = static_cast<std::size_t>(uniform() * static_cast<double>(n)) % n;
      const double rate = cfg.hot_pixel_rate_hz * std::pow(4.0, -uniform());
      hot_.push_back({pixel, rate, -1});
    }
    ref_.assign(n, 0);
    last_log_.assign(n, 0);
    last_frame_.assign(n, -1);
    last_event_.assign(n, -1e18);
  }

  SensorSize sensor() const { return {cfg_.width, cfg_.height}; }

  // Feeds the frame at time t_us (row-major, width x height, intensities >= 0); appends the
  // events since the previous frame, sorted by time.
  void add_frame(const std::vector<float>& frame, double t_us, std::vector<CameraEvent>& out) {
    const std::size_t n = ref_.size();
    if (frame.size() != n) throw std::invalid_argument("DvsSensorModel: frame has the wrong size");
    if (started_ && !(t_us > t_prev_))
      throw std::invalid_argument("DvsSensorModel: frame times must increase");
    const std::size_t first = out.size();
    if (!started_) {
      for (std::size_t i = 0; i < n; ++i) {
        if (!(frame[i] >= 0) || !std::isfinite(frame[i]))
          throw std::invalid_argument("DvsSensorModel: intensities must be finite and >= 0");
        ref_[i] = last_log_[i] = std::log(frame[i] + cfg_.eps);
        last_frame_[i] = frame[i];
      }
      for (auto& h : hot_) h.next_us = t_us + exponential(h.rate_hz);
      started_ = true;
      t_prev_ = t_us;
      return;
    }
    const double dt = t_us - t_prev_;
    for (std::size_t i = 0; i < n; ++i) {
      if (!(frame[i] >= 0) || !std::isfinite(frame[i]))
        throw std::invalid_argument("DvsSensorModel: intensities must be finite and >= 0");
      // The log only where the intensity changed (most pixels of a scene hold still).
      const double l0 = last_log_[i];
      const double l1 = frame[i] == last_frame_[i] ? l0 : std::log(frame[i] + cfg_.eps);
      last_frame_[i] = frame[i];
      ref_[i] -= cfg_.leak_rate_hz * on_[i] * dt * 1e-6;  // leak toward ON events
      const auto x = static_cast<std::uint16_t>(i % static_cast<std::size_t>(cfg_.width));
      const auto y = static_cast<std::uint16_t>(i / static_cast<std::size_t>(cfg_.width));
      // Threshold crossings of the linear segment l0 -> l1, in time order.
      for (int guard = 0; guard < 1000; ++guard) {
        const double up = ref_[i] + on_[i], down = ref_[i] - off_[i];
        double frac;
        std::uint8_t pol;
        if (l1 >= up && l1 > l0) {
          frac = (up - l0) / (l1 - l0);
          pol = 1;
        } else if (l1 <= down && l1 < l0) {
          frac = (down - l0) / (l1 - l0);
          pol = 0;
        } else {
          break;
        }
        frac = std::clamp(frac, 0.0, 1.0);
        const double te = t_prev_ + frac * dt;
        ref_[i] = pol ? up : down;
        if (te - last_event_[i] >= cfg_.refractory_us) {
          out.push_back({static_cast<std::int64_t>(std::llround(te)), x, y, pol});
          last_event_[i] = te;
        }
      }
      last_log_[i] = l1;
      // Shot noise: more in the dark (rate scaled by 1 / (intensity + 0.1), capped at 10x).
      const double rate = cfg_.shot_noise_rate_hz * std::min(10.0, 1.0 / (frame[i] + 0.1));
      if (rate > 0 && uniform() < rate * dt * 1e-6) {
        out.push_back({static_cast<std::int64_t>(std::llround(t_prev_ + uniform() * dt)), x, y,
                       static_cast<std::uint8_t>(uniform() < 0.5)});
      }
    }
    for (auto& h : hot_)
      for (; h.next_us < t_us; h.next_us += exponential(h.rate_hz)) {
        const auto w = static_cast<std::size_t>(cfg_.width);
        out.push_back({static_cast<std::int64_t>(std::llround(h.next_us)),
                       static_cast<std::uint16_t>(h.pixel % w),
                       static_cast<std::uint16_t>(h.pixel / w), 1});
      }
    std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                     [](const CameraEvent& a, const CameraEvent& b) { return a.t < b.t; });
    t_prev_ = t_us;
  }

 private:
  double uniform() { return detail::uniform01(rng_); }  // events/random.hpp
  double normal() {                                     // Box-Muller
    const double a = uniform(), b = uniform();
    return std::sqrt(-2 * std::log(a)) * std::cos(6.283185307179586 * b);
  }

  // Waiting time [us] of a Poisson process of `rate_hz`; 1 - u keeps the log finite.
  double exponential(double rate_hz) { return -std::log(1 - uniform()) / rate_hz * 1e6; }

  struct HotPixel {
    std::size_t pixel;
    double rate_hz;
    double next_us;  // its next event
  };

  DvsSensorConfig cfg_;
  std::mt19937_64 rng_;
  std::vector<double> on_, off_, ref_, last_log_, last_event_;
  std::vector<float> last_frame_;
  std::vector<HotPixel> hot_;
  bool started_ = false;
  double t_prev_ = 0;
};

}  // namespace egret
