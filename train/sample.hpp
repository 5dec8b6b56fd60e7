// One training or test example: an input stream, when to read out, and what the logits should
// say there.
#pragma once

#include <type_traits>
#include <utility>
#include <vector>

#include "adjoint/losses.hpp"
#include "events/input_stream.hpp"
#include "sim/engine.hpp"
#include "sim/precision_cast.hpp"

namespace egret {

template <class Scalar>
struct Sample {
  InputStream<Scalar> input;
  Scalar end_time = 0;
  std::vector<Scalar> readout_times;
  std::vector<std::pair<Scalar, Scalar>> readout_windows;  // targets follow the points' targets
  ReadoutTargets<Scalar> targets;

  // The run of this sample: its end time and readouts, and the network's settings for every run.
  SimOptions<Scalar> options(const RunSettings& run = {}) const {
    SimOptions<Scalar> o;
    run.apply_to(o);
    o.end_time = end_time;
    o.readout_times = readout_times;
    o.readout_windows = readout_windows;
    return o;
  }
};

// The sample in another scalar (a float run of a sample read or built in double).
template <class To, class From>
Sample<To> cast_sample(const Sample<From>& s) {
  if constexpr (std::is_same_v<To, From>) {
    return s;
  } else {
    Sample<To> out;
    out.input = cast_input<To>(s.input);
    out.end_time = narrow_checked<To>(s.end_time, "sample end_time");
    out.readout_times = cast_values<To>(s.readout_times, "readout time");
    for (const auto& [b, e] : s.readout_windows)
      out.readout_windows.emplace_back(narrow_checked<To>(b, "readout window"),
                                       narrow_checked<To>(e, "readout window"));
    out.targets.labels = s.targets.labels;
    for (const auto& v : s.targets.values)
      out.targets.values.push_back(cast_values<To>(v, "target"));
    return out;
  }
}

template <class To, class From>
std::vector<Sample<To>> cast_samples(const std::vector<Sample<From>>& in) {
  std::vector<Sample<To>> out;
  out.reserve(in.size());
  for (const auto& s : in) out.push_back(cast_sample<To>(s));
  return out;
}

}  // namespace egret
