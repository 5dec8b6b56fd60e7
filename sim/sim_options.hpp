// What one simulation is asked to do (end time, readouts, snapshots, tape, sink, event budget)
// and the checks that run before the first event: a bad request is refused up front, naming the
// offending value.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/network.hpp"
#include "sim/recorder.hpp"
#include "sim/tape.hpp"

namespace egret {

// Events one simulation may process by default (inputs, internal events, releases, readouts,
// snapshots): generous for any sample egret's examples and tasks run, yet it stops a network
// whose event rate has no useful bound within seconds instead of growing without end.
inline constexpr std::uint64_t kDefaultEventBudget = 100'000'000;

// Thrown when a simulation needs more events than SimOptions::max_events.
class EventBudgetExceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class Scalar>
struct SimOptions {
  Scalar end_time = 0;                // events with time <= end_time are processed [ms]
  std::vector<Scalar> readout_times;  // sample the last layer's output trace (and logits)
  // Average the last layer's output trace over [begin, end] (begin < end); their records follow
  // the point readouts in SimResult::readouts.
  std::vector<std::pair<Scalar, Scalar>> readout_windows;
  std::vector<Scalar> snapshot_times;  // record every layer's state
  bool record_trace = true;            // keep every emitted event in the result
  Tape<Scalar>* tape = nullptr;        // if set, record what the exact backward pass needs
  TraceSink<Scalar>* sink = nullptr;   // if set, receives every emitted event as it happens
  // The event budget: a run that would process more events stops with EventBudgetExceeded.
  // Configurations set it as "simulation": {"max_events": N}; the CLI as --max-events N.
  std::uint64_t max_events = kDefaultEventBudget;
  // The step at which a continuous-time layer's counts are compared with a dense, clocked
  // equivalent (Dense, ActivationSparsity; docs/metrics.md): the model's input bin where it has
  // one. Clocked layers use their own tick. Configurations: "simulation": {"dense_step": ms}.
  Scalar dense_step = 1;
  // With a tape: keep the layers' state every K of a layer's steps and recompute the rest in the
  // backward pass (sim/tape.hpp TapeSettings); 0: each family chooses. Configurations:
  // "simulation": {"tape_checkpoint_every": K}.
  std::int64_t tape_checkpoint_every = 0;
  // With a tape: record the external inputs that reach layer 0 at one time as one step, and
  // their releases likewise, where the layer's family allows it
  // (Layer::tape_merges_simultaneous_inputs). Only for a backward pass that discards the inputs'
  // per-event time and value adjoints (training, batch gradients): a merged step's time adjoint
  // belongs to no single input. A binned input stream is mostly such steps (docs/speed.md).
  bool tape_merge_simultaneous_inputs = false;
  // Layer 0's external inputs as the changes of each channel's window sum, where its family
  // takes them (Layer::netted_input_window; events/window_changes.hpp): an input and the end of
  // the same channel's earlier input at its time become one weight column, or none where the
  // values are equal. Exact by the model's definition; the results move by rounding only, and
  // the counts, events processed and budget are unchanged. Without a tape, or with one that
  // merges simultaneous inputs (the inputs' own adjoints are then not computed); false: every
  // input and release one by one.
  bool net_input_windows = true;
};

// What a network's configuration sets for every run, whatever the sample ("simulation":
// max_events, dense_step, tape_checkpoint_every, net_input_windows): samples carry their own end
// time and readouts (train/sample.hpp) and take these from here.
struct RunSettings {
  std::uint64_t max_events = kDefaultEventBudget;
  double dense_step = 1;
  std::int64_t tape_checkpoint_every = 0;
  bool net_input_windows = true;

  template <class Scalar>
  void apply_to(SimOptions<Scalar>& o) const {
    o.max_events = max_events;
    o.dense_step = static_cast<Scalar>(dense_step);
    o.tape_checkpoint_every = tape_checkpoint_every;
    o.net_input_windows = net_input_windows;
  }
};

namespace detail {

template <class Scalar>
[[noreturn]] void event_budget_exceeded(std::uint64_t budget, Scalar t, Scalar end_time,
                                        const std::string& busiest_layer) {
  std::ostringstream os;
  os << "simulate: event budget exceeded: " << budget << " events processed by t = " << t
     << " ms of end_time = " << end_time << " ms; " << busiest_layer
     << " (the network's event rate may have no useful bound; if the run is legitimate, "
        "raise the budget: \"simulation\": {\"max_events\": N} in the configuration, "
        "--max-events N on the command line, or SimOptions::max_events)";
  throw EventBudgetExceeded(os.str());
}

template <class Scalar>
void check_request_times(const std::vector<Scalar>& times, Scalar end_time, const char* what) {
  for (Scalar t : times) {
    if (!std::isfinite(t) || t < 0 || t > end_time) {
      std::ostringstream os;
      os << "simulate: " << what << " time " << t << " is outside [0, end_time = " << end_time
         << "]";
      throw std::invalid_argument(os.str());
    }
  }
}

}  // namespace detail

// Everything simulate() refuses before it starts: a network and input that do not fit, times
// outside [0, end_time], empty windows, a zero budget, and a tape for a layer without a backward
// pass.
template <class Scalar>
void validate_simulation(const Network<Scalar>& net, Index input_channels,
                         const SimOptions<Scalar>& options) {
  if (net.empty()) throw std::invalid_argument("simulate: the network has no layers");
  if (input_channels != net.input_channels()) {
    std::ostringstream os;
    os << "simulate: input stream has " << input_channels << " channels but the first layer ("
       << net.layer(0).type_name() << ") expects " << net.input_channels();
    throw std::invalid_argument(os.str());
  }
  if (options.tape_checkpoint_every < 0)
    throw std::invalid_argument("simulate: tape_checkpoint_every must be >= 0 (0: automatic)");
  if (options.max_events == 0)
    throw std::invalid_argument("simulate: the event budget (max_events) must be positive");
  if (!std::isfinite(options.dense_step) || !(options.dense_step > 0)) {
    std::ostringstream os;
    os << "simulate: dense_step must be finite and > 0 [ms], got " << options.dense_step;
    throw std::invalid_argument(os.str());
  }
  if (!std::isfinite(options.end_time) || options.end_time < 0) {
    std::ostringstream os;
    os << "simulate: end_time must be finite and >= 0, got " << options.end_time;
    throw std::invalid_argument(os.str());
  }
  // An event-driven layer's activity is counted in dense_step bins (sim/recorder.hpp); their
  // index must stay an exact integer. Clocked layers count ticks against the event budget.
  const double bins =
      static_cast<double>(options.end_time) / static_cast<double>(options.dense_step);
  for (Index l = 0; l < net.size(); ++l) {
    if (net.layer(l).clocked() || bins <= 9007199254740992.0) continue;  // 2^53
    std::ostringstream os;
    os << "simulate: end_time = " << options.end_time << " ms is " << bins << " dense_step bins of "
       << options.dense_step << " ms for layer " << l << " (" << net.layer(l).type_name()
       << "); at most 2^53 can be counted. Raise dense_step or "
       << "shorten end_time";
    throw std::invalid_argument(os.str());
  }
  detail::check_request_times(options.readout_times, options.end_time, "readout");
  detail::check_request_times(options.snapshot_times, options.end_time, "snapshot");
  for (const auto& [a, b] : options.readout_windows) {
    detail::check_request_times<Scalar>({a, b}, options.end_time, "readout window");
    if (!(a < b)) {
      std::ostringstream os;
      os << "simulate: readout window [" << a << ", " << b << "] must have begin < end";
      throw std::invalid_argument(os.str());
    }
  }
  if (!options.tape) return;
  for (Index l = 0; l < net.size(); ++l) {
    if (!net.layer(l).has_adjoint()) {
      throw std::invalid_argument("simulate: layer " + std::to_string(l) + " (" +
                                  net.layer(l).type_name() +
                                  ") has no exact backward pass; cannot record an adjoint tape");
    }
    // The tape stores units and channels in 32 bits (sim/tape.hpp).
    const Index limit = std::numeric_limits<std::int32_t>::max();
    if (net.layer(l).units() > limit || net.layer(l).inputs() > limit)
      throw std::invalid_argument("simulate: layer " + std::to_string(l) +
                                  " has more than 2^31 - 1 units or inputs; cannot record a tape");
  }
}

}  // namespace egret
