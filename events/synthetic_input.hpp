// Seeded synthetic input streams: homogeneous Poisson input, and a "sweep" whose active channel
// group moves across the channels over time (a stand-in for a moving edge on a sensor row).
// Deterministic per seed on every platform (mt19937_64 and our own uniform/exponential maps).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "events/input_stream.hpp"
#include "events/random.hpp"

namespace egret {

// Every channel fires as a Poisson process of `rate_hz` over [0, end_ms); values 1.
template <class Scalar>
InputStream<Scalar> poisson_input(Index channels, double rate_hz, double end_ms,
                                  std::uint64_t seed) {
  if (channels <= 0 || !(rate_hz >= 0) || !(end_ms >= 0) || !std::isfinite(rate_hz) ||
      !std::isfinite(end_ms))
    throw std::invalid_argument("poisson_input: need channels > 0, finite rate >= 0, end >= 0");
  std::mt19937_64 rng(seed);
  std::vector<InputEvent<Scalar>> events;
  const double total_rate_per_ms = rate_hz * 1e-3 * static_cast<double>(channels);
  if (total_rate_per_ms > 0) {
    double t = 0;
    for (;;) {
      t += -std::log(detail::uniform01(rng)) / total_rate_per_ms;
      if (t >= end_ms) break;
      const Index ch = static_cast<Index>(rng() % static_cast<std::uint64_t>(channels));
      events.push_back({static_cast<Scalar>(t), ch, Scalar(1)});
    }
  }
  return InputStream<Scalar>(std::move(events), channels);
}

// A group of `width` adjacent channels fires at `rate_hz` each, the group's position sweeping
// back and forth across the channels with period `period_ms`; all other channels fire at
// `background_hz`.
template <class Scalar>
InputStream<Scalar> sweep_input(Index channels, Index width, double rate_hz, double background_hz,
                                double period_ms, double end_ms, std::uint64_t seed) {
  if (channels <= 0 || width <= 0 || width > channels || !(period_ms > 0))
    throw std::invalid_argument("sweep_input: need 0 < width <= channels and period > 0");
  std::mt19937_64 rng(seed);
  std::vector<InputEvent<Scalar>> events;
  const double max_rate = std::max(rate_hz, background_hz) * 1e-3;  // per channel per ms
  if (max_rate <= 0) return InputStream<Scalar>({}, channels);
  // Thinning: candidate events at the maximum rate, kept with probability rate(t, ch) / max.
  for (Index ch = 0; ch < channels; ++ch) {
    double t = 0;
    for (;;) {
      t += -std::log(detail::uniform01(rng)) / max_rate;
      if (t >= end_ms) break;
      const double phase = std::fmod(t, period_ms) / period_ms;    // [0, 1)
      const double tri = phase < 0.5 ? 2 * phase : 2 - 2 * phase;  // 0 -> 1 -> 0
      const double lo = tri * static_cast<double>(channels - width);
      const bool in_group = static_cast<double>(ch) >= lo && static_cast<double>(ch) < lo + width;
      const double rate = (in_group ? rate_hz : background_hz) * 1e-3;
      if (detail::uniform01(rng) * max_rate < rate)
        events.push_back({static_cast<Scalar>(t), ch, Scalar(1)});
    }
  }
  return InputStream<Scalar>(std::move(events), channels);
}

}  // namespace egret
