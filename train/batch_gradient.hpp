// A batch's forward passes, losses and gradients, sample by sample in parallel, and the one rule
// for samples whose backward pass met non-finite values. The trainer (train/trainer.hpp) and the
// Python module's gradient queries (python/src/) both go through here, so they cannot drift.
#pragma once

#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/batch_runner.hpp"
#include "train/ordered_gradient_sum.hpp"
#include "train/sample_gradient.hpp"

namespace egret {

// What each sample of a batch computes (sample_loss_and_gradient's arguments).
struct BatchRequest {
  LossKind loss = LossKind::kSoftmaxCrossEntropy;
  bool with_gradient = true;
  ActivityRegularizer activity;     // added to the loss if its weight is > 0
  StateRegularizer state;           // likewise; computed by the backward pass
  bool input_time_gradient = true;  // per-event input-time gradients (training needs none)
  RunSettings run;
  int threads = 0;  // <= 0: all cores
};

namespace detail {
// out[i] = compute(i, local, buffer) for each sample i on the workers, `local` being make_local()'s
// value (made once per worker) and `buffer` take_buffer()'s; after each, done(i, failed). An
// exception in any sample is rethrown after the batch, the lowest index first, so the error does
// not depend on scheduling.
template <class Scalar, class MakeLocal, class TakeBuffer, class Done, class Compute>
void run_batch_samples(std::size_t n, int threads, const MakeLocal& make_local,
                       std::vector<SampleOutcome<Scalar>>& out, const TakeBuffer& take_buffer,
                       const Done& done, const Compute& compute) {
  std::vector<std::exception_ptr> errors(n);
  for_each_in_index_order(n, threads, make_local, [&](std::size_t i, auto& local) {
    try {
      out[i] = compute(i, local, take_buffer());
    } catch (...) {
      errors[i] = std::current_exception();
    }
    done(i, errors[i] != nullptr);
  });
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

// run_batch_samples computing sample_loss_and_gradient on a worker-local clone of `net`.
template <class Scalar, class SampleAt, class TakeBuffer, class Done>
void run_batch_losses(const Network<Scalar>& net, std::size_t n, const SampleAt& sample_at,
                      const BatchRequest& request, std::vector<SampleOutcome<Scalar>>& out,
                      const TakeBuffer& take_buffer, const Done& done) {
  run_batch_samples(
      n, request.threads, [&] { return net.clone(); }, out, take_buffer, done,
      [&](std::size_t i, Network<Scalar>& local, Gradient<Scalar> buffer) {
        return sample_loss_and_gradient(local, sample_at(i), request.loss, request.with_gradient,
                                        request.activity, request.input_time_gradient, request.run,
                                        request.state, std::move(buffer));
      });
}
}  // namespace detail

// Each sample's outcome, at its index, each run on a worker-local clone of `net` from its initial
// state. `sample_at(i)` gives sample i (a const Sample<Scalar>&). An exception in any sample is
// rethrown after the batch, the lowest index first, so the error does not depend on scheduling.
template <class Scalar, class SampleAt>
std::vector<SampleOutcome<Scalar>> batch_outcomes(const Network<Scalar>& net, std::size_t n,
                                                  const SampleAt& sample_at,
                                                  const BatchRequest& request) {
  std::vector<SampleOutcome<Scalar>> out(n);
  detail::run_batch_losses(
      net, n, sample_at, request, out, [] { return Gradient<Scalar>{}; }, [](std::size_t, bool) {});
  return out;
}

// A batch's outcomes and the number of gradients its sum holds.
template <class Scalar>
struct SummedBatch {
  std::vector<SampleOutcome<Scalar>> outcomes;  // their gradients hold only the input gradients
  std::size_t used = 0;                         // the divisor of the batch mean
};

// batch_outcomes, with each usable gradient (`rule`) given to `add` in sample order while the
// batch runs (train/ordered_gradient_sum.hpp): bitwise what sum_gradients gives afterwards, but
// without holding every sample's gradient. Errors as batch_outcomes', then the rule's refusal.
template <class Scalar, class SampleAt, class Add>
SummedBatch<Scalar> batch_gradient_sum(const Network<Scalar>& net, std::size_t n,
                                       const SampleAt& sample_at, const BatchRequest& request,
                                       NonFiniteSamples rule, const Add& add) {
  SummedBatch<Scalar> r;
  r.outcomes.resize(n);
  OrderedGradientSum<Scalar, Add> sum(r.outcomes, rule, add);
  detail::run_batch_losses(
      net, n, sample_at, request, r.outcomes, [&] { return sum.take_buffer(); },
      [&](std::size_t i, bool failed) { sum.done(i, failed); });
  r.used = sum.used();
  return r;
}

// For every sample i on the workers, sweep(i, grad) -> BackwardReport writes sample i's gradient
// into `grad` (zeroed, without input gradients); the usable ones (`rule`) are summed in sample
// order as they finish (train/ordered_gradient_sum.hpp). What ForwardBatch.backward does with the
// tapes of an earlier forward pass; the sweeps read the shared `net`, so no worker clones it.
// Errors: the lowest sample index's, then the rule's.
template <class Scalar, class Sweep>
Gradient<Scalar> summed_backward_sweeps(const Network<Scalar>& net, std::size_t n, int threads,
                                        NonFiniteSamples rule, const Sweep& sweep) {
  std::vector<SampleOutcome<Scalar>> out(n);
  Gradient<Scalar> sum = zero_gradient(net, 0);
  const auto add = [&](const SampleOutcome<Scalar>& o) { sum += o.grad; };
  OrderedGradientSum<Scalar, decltype(add)> summer(out, rule, add);
  detail::run_batch_samples(
      n, threads, [] { return 0; }, out, [&] { return summer.take_buffer(); },
      [&](std::size_t i, bool failed) { summer.done(i, failed); },
      [&](std::size_t i, int, Gradient<Scalar> buffer) {
        SampleOutcome<Scalar> o;
        o.grad = std::move(buffer);
        make_zero_gradient(o.grad, net, 0);
        o.report = sweep(i, o.grad);
        return o;
      });
  (void)summer.used();  // rethrows a refusal
  return sum;
}

// The reference the ordered sum is checked against (tests/test_training.cpp): feeds the usable
// gradients of stored outcomes to `add` in sample order and returns how many there were, the
// divisor of the batch mean. Production sums while the batch runs (batch_gradient_sum).
template <class Scalar, class Add>
std::size_t sum_gradients(const std::vector<SampleOutcome<Scalar>>& out, NonFiniteSamples rule,
                          const Add& add) {
  std::size_t used = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!gradient_usable(out[i].report, i, rule)) continue;
    add(out[i]);
    ++used;
  }
  return used;
}

}  // namespace egret
