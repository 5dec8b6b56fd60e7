// The interface between the engine and a layer of units. The engine owns time and the order of
// events; a layer owns its state and its equations. Every cell family (continuous EGRU, discrete
// EGRU, ...) implements this interface, so the engine, recorder and batch runner are generic.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "events/event.hpp"
#include "events/event_queue.hpp"
#include "events/input_stream.hpp"
#include "events/window_changes.hpp"
#include "sim/layer_adjoint.hpp"
#include "sim/operation_counts.hpp"
#include "sim/parameters.hpp"

namespace egret {

// What a layer may ask of the engine while handling an event: schedule a future event of its
// own (a release) on the shared queue.
template <class Scalar>
class Scheduler {
 public:
  Scheduler(EventQueue<Scalar>& queue, Index layer, std::int64_t source_base = -1)
      : queue_(queue), layer_(layer), next_source_(source_base) {}
  // The scheduler of the k-th event of a batch (Layer::receive_inputs): its releases link to the
  // tape item k places after this one's first.
  Scheduler for_item(Index k) const {
    return Scheduler(queue_, layer_, next_source_ < 0 ? -1 : next_source_ + k);
  }
  // Releases are scheduled in the order of the contributions they end (one per input event, one
  // per emitting unit in unit order); when the engine records a tape, the k-th release of a call
  // is linked to the k-th tape item of that call.
  void schedule(Scalar time, EventKind kind, Index index, Scalar value, Scalar aux = 0) {
    Event<Scalar> e;
    e.time = time;
    e.kind = kind;
    e.layer = layer_;
    e.index = index;
    e.value = value;
    e.aux = aux;
    e.source = next_source_;
    if (next_source_ >= 0) ++next_source_;
    queue_.push(e);
  }

 private:
  EventQueue<Scalar>& queue_;
  Index layer_;
  std::int64_t next_source_;
};

// One event emitted by a unit of a layer: it is recorded, it feeds the output trace, and it is
// delivered to the next layer as an input on channel `unit`.
template <class Scalar>
struct Emission {
  Index unit = 0;
  Scalar value = 0;
  Scalar aux = 0;  // cell-specific factor of the event (continuous EGRU: the sender's r(s-))
  // A surrogate event (value 0) of a unit that did not fire but whose pseudo-derivative is not
  // zero: emitted only while a tape is recorded, so that the backward pass reaches the unit
  // through every consumer of its output. The engine records it and delivers it as a value-0
  // input, but it is not an event: it is not counted, traced or added to the output trace.
  bool surrogate = false;
};

// Appends an emission to `out`, its fields written in place. push_back of a braced temporary
// stores the fields one by one, then copies the struct with wider loads that the CPU cannot
// forward from those narrower stores: perf put that stall at about 6 % of the suGRU step at 256
// units (docs/speed.md).
template <class Scalar>
void emit(std::vector<Emission<Scalar>>& out, Index unit, Scalar value, Scalar aux = Scalar(0),
          bool surrogate = false) {
  Emission<Scalar>& e = out.emplace_back();
  e.unit = unit;
  e.value = value;
  e.aux = aux;
  e.surrogate = surrogate;
}

// The next internal event a layer will produce if nothing else happens first.
template <class Scalar>
struct InternalEvent {
  Scalar time = never<Scalar>();
  Index unit = 0;  // smallest unit firing at `time` (orders simultaneous layers' events)
};

// Named state vectors of a layer at one time (a_u, a_r, a_z, c, ...). `primary` names the one
// whose crossing of the threshold makes a unit fire (c for EGRU, v for LIF): what a figure of
// the units' states plots; empty means the first.
template <class Scalar>
struct LayerState {
  std::vector<std::pair<std::string, std::vector<Scalar>>> variables;
  std::string primary;
  const std::string& primary_name() const {
    return primary.empty() ? variables.front().first : primary;
  }
  const std::vector<Scalar>& at(const std::string& name) const {
    for (const auto& [n, v] : variables)
      if (n == name) return v;
    throw std::out_of_range("layer state has no variable '" + name + "'");
  }
};

template <class Scalar>
class Layer {
 public:
  virtual ~Layer() = default;

  virtual std::string type_name() const = 0;
  virtual Index units() const = 0;
  virtual Index inputs() const = 0;
  // The time constant of unit n's output trace (sim/output_trace.hpp); +inf for a held output.
  virtual Scalar output_time_constant(Index unit) const = 0;
  // True for layers driven by a tick schedule (discrete time): their internal events are ticks.
  virtual bool clocked() const = 0;

  // Delta semantics (docs/model.md): a layer whose output is a real-valued state (BMRU's h, ...)
  // emits only its changes; an event's value is h_k - h_{k-1}. Its output trace then holds the
  // sum of the changes, h itself (output_time_constant(n) is +inf), and the layer above must hold
  // its inputs: Network::add_layer calls set_input_held(true) on it. A family that cannot
  // consume changes refuses.
  virtual bool output_is_held() const { return false; }
  virtual void set_input_held(bool held) {
    if (held)
      throw std::invalid_argument("a " + type_name() +
                                  " layer cannot consume the changes of a held output (delta "
                                  "semantics); put a tick-schedule layer after it");
  }

  // A fresh layer with the same (shared, read-only) parameters and its own state: one per
  // worker thread in batch runs.
  virtual std::unique_ptr<Layer> clone() const = 0;

  // Initial state at t = 0.
  virtual void reset() = 0;

  // An input event (external channel, or a unit of the layer below) at time t.
  virtual void receive_input(Scalar t, Index channel, Scalar value, Scheduler<Scalar>& sched) = 0;

  // A release event this layer scheduled earlier.
  virtual void release(const Event<Scalar>& event) = 0;

  // A batch of events of one time that are consecutive in the event order (sim/engine.hpp): n
  // external inputs at t, in stream order, or n releases of one kind, in queue order. The result
  // must be that of the single calls in the same order; a family overrides these to pay its
  // per-event overhead (state brought to t, dispatch) once per batch. The k-th input's releases
  // are scheduled with sched.for_item(k).
  virtual void receive_inputs(Scalar t, const InputEvent<Scalar>* inputs, Index n,
                              Scheduler<Scalar>& sched) {
    for (Index k = 0; k < n; ++k) {
      Scheduler<Scalar> item = sched.for_item(k);
      receive_input(t, inputs[k].channel, inputs[k].value, item);
    }
  }
  virtual void release_all(const Event<Scalar>* events, Index n) {
    for (Index k = 0; k < n; ++k) release(events[k]);
  }

  // A layer whose external inputs are held for a finite window may take them as the changes of
  // each channel's window sum (events/window_changes.hpp): an input and the end of an earlier
  // one on its channel at one time are then one change, and no release is scheduled. It returns
  // the window here; the default, 0, takes inputs and releases one by one. The engine nets only
  // where nothing reads an input's own adjoints (sim/sim_options.hpp net_input_windows).
  virtual Scalar netted_input_window() const { return Scalar(0); }
  // The changes of one time, in channel order: the result must be that of the inputs and
  // releases they stand for in exact arithmetic, and the counts theirs exactly.
  virtual void receive_window_changes(Scalar /*t*/, const WindowChange<Scalar>* /*changes*/,
                                      Index /*n*/) {
    throw std::logic_error(type_name() + ": takes no window changes");
  }

  virtual InternalEvent<Scalar> next_internal_event() const = 0;
  // The run ends at end_time (told before reset()): an internal event after it is never asked
  // for, so a layer whose search for it is costly may stop there and report it as never.
  virtual void set_end_time(Scalar /*end_time*/) {}

  // Handle the internal event(s) at time t (every unit whose crossing is at t, or the tick at
  // t); append what the units emit, in unit order.
  virtual void fire(Scalar t, Scheduler<Scalar>& sched, std::vector<Emission<Scalar>>& out) = 0;

  // The state at time t >= the last event, without changing it.
  virtual LayerState<Scalar> state_at(Scalar t) const = 0;

  // The operations counted since reset() (sim/operation_counts.hpp: NeuroBench's definitions;
  // docs/metrics.md lists what each family counts), and what the same layer run densely would
  // cost per update step.
  virtual OperationCounts operation_counts() const = 0;
  virtual DenseCost dense_cost() const = 0;

  // The named parameters (sim/parameters.hpp), and a fresh layer of the same family and settings
  // with other values (validated like a configuration; an infeasible value is an error).
  virtual NamedParameters<Scalar> parameters() const = 0;
  virtual std::unique_ptr<Layer> with_parameters(const NamedParameters<Scalar>& values) const = 0;
  // The parameters' names and shapes, all zero: the shape of a gradient.
  virtual NamedParameters<Scalar> parameter_zeros() const { return parameters().zeros_like(); }
  // Magnitude pruning: the layer with each sender's connections cut to the `keep` share (of its
  // receivers) of largest weight, the others absent from then on; nullptr for a family without
  // sparse connectivity.
  virtual std::unique_ptr<Layer> pruned(double /*keep*/) const { return nullptr; }
  // Whether pruned() gives a layer (the family has sparse connectivity).
  virtual bool prunable() const { return false; }

  // The backward side (sim/layer_adjoint.hpp), or nullptr for a family without one. What the
  // adjoint needs is recorded on the tape by the two methods below: after every step of the
  // layer (`kind` is the step's kind) and once at the end of the run.
  virtual std::unique_ptr<LayerAdjoint<Scalar>> make_adjoint() const { return nullptr; }
  bool has_adjoint() const { return make_adjoint() != nullptr; }
  virtual void record_step_state(EventKind /*kind*/, std::vector<Scalar>& /*out*/) const {}
  virtual void record_end_state(std::vector<Scalar>& /*out*/) const {}
  // Whether the family's adjoint and replay take a step of several simultaneous external inputs
  // (or of their releases) on the tape: every item of the step, in order
  // (SimOptions::tape_merge_simultaneous_inputs).
  virtual bool tape_merges_simultaneous_inputs() const { return false; }
  // Called by the engine at the start of every run: whether a tape is recorded (a family may
  // then emit surrogate events, see Emission) and how (sim/tape.hpp).
  virtual void set_tape_recording(const TapeSettings& /*settings*/) {}
};

}  // namespace egret
