// The delay-copy task of the EGRU paper (Section 4.1, Fig. 1C-D): a binary pattern arrives at
// the start (one input event on channel k for every bit k that is 1), a delay much longer than
// the output trace's time constant follows, then a recall cue (an event on the last channel).
// After the cue the readout of the output traces must reproduce the pattern, bit by bit, and
// before the cue it must report all zeros (binary cross-entropy; a bit is right when its logit
// has the sign of the target). The network has to hold the pattern through the delay and answer
// only when cued. The readouts are window means of the output traces (continuous in the event
// times, so the exact gradient carries the whole signal; a point readout jumps whenever an event
// crosses it).
// Trials differ in the pattern and in their timing (onset, per-bit jitter, delay), so held-out
// trials are new trials.
#pragma once

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "train/trainer.hpp"

namespace egret {

struct DelayCopyConfig {
  int bits = 2;
  double onset_min = 1, onset_max = 3;       // pattern onset [ms]
  double jitter = 0.5;                       // extra per-bit delay, uniform in [0, jitter] [ms]
  double delay_min = 30, delay_max = 40;     // onset to cue [ms]
  double recall_begin = 1, recall_end = 11;  // recall window, relative to the cue [ms]
  double quiet_begin = -12, quiet_end = -2;  // quiet window before the cue (target 0) [ms]
  bool quiet_window = true;
  double tail = 1;                             // end of the trial after the recall window
  Index channels() const { return bits + 1; }  // bits, then the cue
  void validate() const {
    if (bits <= 0 || bits > 16) throw std::invalid_argument("delay_copy: bits must be in [1, 16]");
    if (!(onset_min >= 0 && onset_max >= onset_min && jitter >= 0 && delay_min > jitter &&
          delay_max >= delay_min && tail >= 0))
      throw std::invalid_argument("delay_copy: impossible timing parameters");
    if (!(recall_begin >= 0 && recall_end > recall_begin))
      throw std::invalid_argument("delay_copy: recall window must satisfy 0 <= begin < end");
    if (quiet_window &&
        !(quiet_begin > -delay_min + jitter && quiet_end > quiet_begin && quiet_end <= 0))
      throw std::invalid_argument(
          "delay_copy: quiet window must lie between the pattern and the cue (begin < end <= 0)");
  }
};

// `trials` trials; patterns cycle through all 2^bits values so every pattern is represented.
template <class Scalar>
std::vector<Sample<Scalar>> delay_copy_trials(const DelayCopyConfig& cfg, int trials,
                                              std::uint64_t seed) {
  cfg.validate();
  std::mt19937_64 rng(seed);
  auto uniform = [&rng](double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
  };
  const std::uint64_t patterns = std::uint64_t{1} << cfg.bits;
  const std::uint64_t offset = rng() % patterns;
  std::vector<Sample<Scalar>> out;
  for (int n = 0; n < trials; ++n) {
    const std::uint64_t pattern = (offset + static_cast<std::uint64_t>(n)) % patterns;
    const double onset = uniform(cfg.onset_min, cfg.onset_max);
    const double cue = onset + uniform(cfg.delay_min, cfg.delay_max);
    std::vector<InputEvent<Scalar>> events;
    std::vector<Scalar> target(static_cast<std::size_t>(cfg.bits));
    for (int b = 0; b < cfg.bits; ++b) {
      const bool on = (pattern >> b) & 1U;
      target[static_cast<std::size_t>(b)] = on ? Scalar(1) : Scalar(0);
      const double t = onset + uniform(0, cfg.jitter);
      if (on) events.push_back({static_cast<Scalar>(t), b, Scalar(1)});
    }
    events.push_back({static_cast<Scalar>(cue), cfg.bits, Scalar(1)});
    Sample<Scalar> s;
    s.input = InputStream<Scalar>(std::move(events), cfg.channels());
    if (cfg.quiet_window) {
      s.readout_windows.push_back(
          {static_cast<Scalar>(cue + cfg.quiet_begin), static_cast<Scalar>(cue + cfg.quiet_end)});
      s.targets.values.push_back(std::vector<Scalar>(static_cast<std::size_t>(cfg.bits), 0));
    }
    s.readout_windows.push_back(
        {static_cast<Scalar>(cue + cfg.recall_begin), static_cast<Scalar>(cue + cfg.recall_end)});
    s.targets.values.push_back(target);
    s.end_time = static_cast<Scalar>(cue + cfg.recall_end + cfg.tail);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace egret
