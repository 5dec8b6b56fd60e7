// One sample's forward pass, loss and (optionally) exact gradient: what every training step and
// every gradient query does per sample (train/trainer.hpp, the Python module).
#pragma once

#include <utility>

#include "adjoint/activity_regularizer.hpp"
#include "adjoint/losses.hpp"
#include "adjoint/reverse_sweep.hpp"
#include "adjoint/state_regularizer.hpp"
#include "train/sample.hpp"

namespace egret {

template <class Scalar>
struct SampleOutcome {
  SimResult<Scalar> forward;      // without the event trace
  LossResult<Scalar> loss;        // at the readouts
  ActivityTerm<Scalar> activity;  // the regulariser's value (zero if off or no gradient)
  Gradient<Scalar> grad;          // of loss + regularisers, if requested
  // The state regulariser's value is report.state_cost (computed by the backward pass).
  BackwardReport report;
};

// `net` is run from its initial state (use a clone per thread). Without gradient no tape is kept;
// without input_time_gradient, o.grad.input_time and input_value stay empty (training needs
// neither). `buffer`, if it is a gradient of `net` (an earlier sample's), is reused as o.grad.
// The tape is one per thread, cleared (not freed) per sample: a tape grown past glibc's mmap
// threshold and freed every sample costs page faults on every sample, more than the arithmetic.
template <class Scalar>
SampleOutcome<Scalar> sample_loss_and_gradient(
    Network<Scalar>& net, const Sample<Scalar>& s, LossKind loss, bool with_gradient,
    const ActivityRegularizer& activity = {}, bool input_time_gradient = true,
    const RunSettings& run = {}, const StateRegularizer& state = {}, Gradient<Scalar> buffer = {}) {
  thread_local Tape<Scalar> tape;
  SimOptions<Scalar> opt = s.options(run);
  opt.record_trace = false;
  if (with_gradient) opt.tape = &tape;
  // Without per-event input gradients a bin's simultaneous inputs are one step of the tape.
  opt.tape_merge_simultaneous_inputs = !input_time_gradient;
  SampleOutcome<Scalar> o;
  o.forward = simulate(net, s.input, opt);
  o.loss = evaluate_loss(loss, o.forward.readouts, s.targets);
  if (!with_gradient) return o;
  o.activity = activity_term(net, tape, s.end_time, activity);
  o.grad = std::move(buffer);
  make_zero_gradient(o.grad, net, s.input.size());
  const auto d_o = readout_backward(net, o.forward, o.loss.dlogits, o.grad);
  o.report =
      reverse_sweep(net, tape, o.forward, d_o, o.grad, &o.activity, input_time_gradient, state);
  return o;
}

}  // namespace egret
