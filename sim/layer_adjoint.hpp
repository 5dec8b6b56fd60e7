// The backward side of a layer, handed out by the layer as the layer is by its family: what the
// generic reverse sweep (adjoint/reverse_sweep.hpp) asks of one layer while it visits the
// recorded steps in reverse. The sweep owns the readout-trace adjoint, losses, regularizers and
// the routing of time and value adjoints between layers and to input events; the family owns
// its state's adjoint, the adjoint of its jumps and of its flow, and its parameter gradient.
//
// For each step of the layer, latest first, the sweep calls
//   1. jump_adjoint       the items the step applied (inputs, releases, the step's emissions);
//   2. emission_adjoint   each emission of an internal step, once every later use of it has
//                         been visited (its value and aux adjoints are complete);
//   3. interval_adjoint   back across the interval that ends at the step;
// and after the last step finish(), then gradient().
#pragma once

#include <cstdint>
#include <string>

#include "sim/parameters.hpp"
#include "sim/tape.hpp"

namespace egret {

// What the backward pass met on the way. A gradient with nonfinite_steps > 0 must not be used.
struct BackwardReport {
  std::size_t steps = 0;
  // Several units crossing at exactly one time: the event time's dependence is taken from the
  // first unit; under a perturbation the events would separate (not differentiable).
  std::size_t simultaneous_crossings = 0;
  // Crossings whose rate at the threshold is below grazing_rate: the event time is
  // ill-conditioned (its derivatives grow like the inverse rate).
  std::size_t grazing_crossings = 0;
  double grazing_rate = 1e-6;
  // Surrogate-gradient families: (unit, step) pairs visited and those whose pseudo-derivative
  // was zero; their ratio is the backward sparsity.
  std::uint64_t surrogate_pairs = 0;
  std::uint64_t zero_surrogate_pairs = 0;
  std::uint64_t backward_macs = 0;  // multiply-accumulates of weight products in the sweep
  double state_cost = 0;            // the state regulariser's value (adjoint/state_regularizer.hpp)
  std::size_t nonfinite_steps = 0;
  std::string first_problem;  // the first non-finite step, with its time, layer and kind
  bool ok() const { return nonfinite_steps == 0; }
  double backward_sparsity() const {
    return surrogate_pairs ? static_cast<double>(zero_surrogate_pairs) / surrogate_pairs : 0.0;
  }
  BackwardReport& operator+=(const BackwardReport& o) {
    steps += o.steps;
    simultaneous_crossings += o.simultaneous_crossings;
    grazing_crossings += o.grazing_crossings;
    surrogate_pairs += o.surrogate_pairs;
    zero_surrogate_pairs += o.zero_surrogate_pairs;
    backward_macs += o.backward_macs;
    state_cost += o.state_cost;
    if (nonfinite_steps == 0 && o.nonfinite_steps > 0) first_problem = o.first_problem;
    nonfinite_steps += o.nonfinite_steps;
    return *this;
  }
};

// The state regulariser's running cost as one layer adjoint sees it (adjoint/state_regularizer.hpp
// sets it): weight * integral over [0, end_time] of sum_i max(0, c_i(t) - (theta_i - margin)) dt,
// where `weight` already holds the normalisation (the user's weight over units x end_time).
template <class Scalar>
struct StateCost {
  Scalar weight = 0;  // 0: off
  Scalar margin = 0;
  Scalar end_time = 0;
  bool detach_threshold = true;  // the level's theta is a constant (no gradient through it)
  bool active() const { return weight > 0; }
};

template <class Scalar>
class LayerAdjoint {
 public:
  virtual ~LayerAdjoint() = default;

  // Before the sweep: the layer's index and the tape (its end_states record for this layer).
  virtual void begin(const Tape<Scalar>& tape, Index layer) = 0;

  // 1. The adjoint of the jumps of `step`, with the layer's adjoint state right after it.
  // Accumulates the parameter gradient and writes, per item of the step, the adjoint of the
  // item's recorded value and aux (d_value[k], d_aux[k], zero-initialised by the caller). The
  // sweep adds them to the item that carries that value: the item itself, or for a release the
  // item it ends. The family moves its state to just before the jumps.
  virtual void jump_adjoint(const Tape<Scalar>& tape, const TapeStep<Scalar>& step, Scalar* d_value,
                            Scalar* d_aux) = 0;

  // 2. One emission of an internal step, with the complete adjoints of its value and aux.
  virtual void emission_adjoint(const TapeItem<Scalar>& item, Scalar d_value, Scalar d_aux) = 0;
  // 2b. Right after it, the complete adjoint of that emission's time. The sweep also passes their
  // sum to interval_adjoint; a family whose simultaneous crossings each have a guard of their own
  // (continuous EGRU: models/continuous_egru/tied_crossings.hpp) needs them one by one.
  virtual void emission_time_adjoint(const TapeItem<Scalar>& /*item*/, Scalar /*d_time*/) {}

  // 3. Back across the interval that ends at `step`; `d_time` is the adjoint of the step's time
  // collected so far (its emissions' time adjoints). Returns the part of the time adjoint that
  // belongs to the event that caused the step, which the sweep routes to it (inputs: the input
  // stream or the emission of the layer below; releases: the contribution they end). Internal
  // steps whose time the family itself determines route it inside and return 0.
  virtual Scalar interval_adjoint(const Tape<Scalar>& tape, const TapeStep<Scalar>& step,
                                  Scalar d_time) = 0;

  // The output trace (generic, sim/output_trace.hpp) depends on each unit's output time constant:
  // d is dL/dtau_o of unit `unit` (a family with one tau_o for the layer adds it there).
  virtual void add_output_time_constant_gradient(Index unit, Scalar d) = 0;

  // After the sweep: what the initial state contributes (e.g. biases).
  virtual void finish() = 0;

  // dL/d(parameters), named and shaped like Layer::parameters().
  virtual const NamedParameters<Scalar>& gradient() const = 0;

  // Whether the adjoint state is finite (checked by the sweep after every step), and the
  // family's counts for the report.
  virtual bool finite() const = 0;
  virtual void add_to_report(BackwardReport& report) const = 0;

  // The state regulariser: whether the family has one, and if so, set before begin(); the family
  // adds its gradient during the sweep and its value is read after finish().
  virtual bool has_state_cost() const { return false; }
  void set_state_cost(const StateCost<Scalar>& cost) { state_cost_ = cost; }
  virtual Scalar state_cost_value() const { return 0; }

  // Whether the sweep wants the time adjoints of the external input events (grad.input_time;
  // training does not). Without them a family may skip work that only they need. Set by the
  // sweep before begin().
  void set_input_time_adjoints(bool wanted) { input_time_adjoints_ = wanted; }
  bool input_time_adjoints() const { return input_time_adjoints_; }
  // Whether the sweep discards the time adjoint of `step`: an external input's, when input time
  // adjoints are not wanted (adjoint/reverse_sweep.hpp route_step_time).
  bool time_adjoint_discarded(const Tape<Scalar>& tape, const TapeStep<Scalar>& step) const {
    return !input_time_adjoints_ && step.kind == EventKind::kInput &&
           tape.items_of(step)[0].external;
  }

 protected:
  StateCost<Scalar> state_cost_;

 private:
  bool input_time_adjoints_ = true;
};

}  // namespace egret
