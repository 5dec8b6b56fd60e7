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

// Samples whose backward pass met non-finite values (BackwardReport::ok() is false).
enum class NonFiniteSamples {
  kLeaveOut,  // left out of the mean: one bad sample does not end a training run (it is counted)
  kRefuse,    // an error naming the sample: a gradient query never averages fewer samples than
              // it was given without saying so
};

// True if sample `index`'s gradient enters the batch mean under `rule`; throws under kRefuse.
inline bool gradient_usable(const BackwardReport& report, std::size_t index,
                            NonFiniteSamples rule) {
  if (report.ok()) return true;
  if (rule == NonFiniteSamples::kRefuse)
    throw std::runtime_error("backward pass, sample " + std::to_string(index) + ": " +
                             report.first_problem);
  return false;
}

// Each sample's outcome, at its index, each run on a worker-local clone of `net` from its initial
// state. `sample_at(i)` gives sample i (a const Sample<Scalar>&). An exception in any sample is
// rethrown after the batch, the lowest index first, so the error does not depend on scheduling.
template <class Scalar, class SampleAt>
std::vector<SampleOutcome<Scalar>> batch_outcomes(const Network<Scalar>& net, std::size_t n,
                                                  const SampleAt& sample_at,
                                                  const BatchRequest& request) {
  std::vector<SampleOutcome<Scalar>> out(n);
  std::vector<std::exception_ptr> errors(n);
  for_each_sample(net, n, request.threads, [&](std::size_t i, Network<Scalar>& local) {
    try {
      out[i] = sample_loss_and_gradient(local, sample_at(i), request.loss, request.with_gradient,
                                        request.activity, request.input_time_gradient, request.run,
                                        request.state);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  });
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

// Feeds the usable gradients to `add` in sample order (the sum is the same for any thread count)
// and returns how many there were: the divisor of the batch mean.
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
