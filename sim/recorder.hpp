// What a run records: the event trace, per-layer counts, readouts of the output trace and state
// snapshots. The engine calls it; it does no simulation itself.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/layer.hpp"

namespace egret {

template <class Scalar>
struct TraceEvent {
  Scalar time = 0;
  Index layer = 0;
  Index unit = 0;
  Scalar value = 0;
  friend bool operator==(const TraceEvent& a, const TraceEvent& b) {
    return a.time == b.time && a.layer == b.layer && a.unit == b.unit && a.value == b.value;
  }
};

// Receives every emitted event while a run goes on (e.g. a trace file writer streaming to disk).
template <class Scalar>
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void on_event(const TraceEvent<Scalar>& event) = 0;
};

struct LayerCounts {
  Index units = 0;
  std::uint64_t events = 0;           // events the layer's units emitted
  std::uint64_t inputs_received = 0;  // input events that reached the layer
  std::uint64_t releases = 0;         // release events processed
  std::uint64_t internal_steps = 0;   // fire() calls: crossings (continuous) or ticks (discrete)
  bool clocked = false;               // discrete-time layer: internal_steps are ticks
  OperationCounts operations;         // counted by the layer (sim/operation_counts.hpp)
  DenseCost dense;                    // the same layer run densely, per step
  // Steps of the dense comparison: ticks (clocked), or ceil(end_time / dense_step) steps of
  // SimOptions::dense_step; and the (unit, step) pairs with at least one event.
  std::uint64_t steps = 0;
  std::uint64_t active_unit_steps = 0;
  double step_ms = 0;

  // Adds the counts of another run of the same layer.
  LayerCounts& operator+=(const LayerCounts& o) {
    units = o.units;
    clocked = o.clocked;
    events += o.events;
    inputs_received += o.inputs_received;
    releases += o.releases;
    internal_steps += o.internal_steps;
    operations += o.operations;
    dense = o.dense;
    steps += o.steps;
    active_unit_steps += o.active_unit_steps;
    step_ms = o.step_ms;
    return *this;
  }
};

// A point readout (begin == time) samples the last layer's output trace o(t); a window readout
// averages it over [begin, time].
template <class Scalar>
struct ReadoutRecord {
  Scalar begin = 0;
  Scalar time = 0;
  std::vector<Scalar> trace;   // o(t), or the mean of o over the window
  std::vector<Scalar> logits;  // W_o trace + b_o, if the network has a readout
  bool is_window() const { return time > begin; }
};

template <class Scalar>
struct SnapshotRecord {
  Scalar time = 0;
  std::vector<LayerState<Scalar>> layers;  // state of every layer (plus its output trace "o")
};

template <class Scalar>
struct SimResult {
  Scalar end_time = 0;
  std::vector<TraceEvent<Scalar>> trace;  // emitted events in processing order
  std::vector<LayerCounts> layers;
  std::vector<ReadoutRecord<Scalar>> readouts;
  std::vector<SnapshotRecord<Scalar>> snapshots;
  std::uint64_t events_processed = 0;  // all events the engine dispatched (inputs, releases,
                                       // internal events, readouts, snapshots)

  std::uint64_t total_emitted() const {
    std::uint64_t s = 0;
    for (const auto& l : layers) s += l.events;
    return s;
  }
  // Events per unit per second of simulated time (time unit: ms).
  double rate_per_unit(std::size_t layer) const {
    const auto& l = layers.at(layer);
    if (l.units == 0 || end_time <= 0) return 0;
    return static_cast<double>(l.events) / (static_cast<double>(l.units) * end_time * 1e-3);
  }
  // Activity sparsity of a clocked layer: 1 - active unit-steps / all unit-steps.
  double activity_sparsity(std::size_t layer) const {
    const auto& l = layers.at(layer);
    const double steps = static_cast<double>(l.internal_steps) * static_cast<double>(l.units);
    return steps > 0 ? 1.0 - static_cast<double>(l.events) / steps : 1.0;
  }
};

}  // namespace egret
