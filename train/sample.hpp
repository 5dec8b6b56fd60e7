// One training or test example: an input stream, when to read out, and what the logits should
// say there.
#pragma once

#include <utility>
#include <vector>

#include "adjoint/losses.hpp"
#include "events/input_stream.hpp"
#include "sim/engine.hpp"

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

}  // namespace egret
