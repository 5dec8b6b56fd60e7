// A batch's gradients summed in sample order while the batch still runs. The workers take the
// samples in index order (sim/batch_runner.hpp), so they finish in nearly that order; whenever
// the samples up to some index are all done, the worker that completed the run adds them, one at
// a time, and keeps their buffers for the samples still to come. The terms and their order are
// those of sum_gradients over the stored outcomes, so the sum is bitwise the same; what this
// saves is a batch of full-size gradients held to the end (1.6 MB each on the main job, freshly
// allocated, so page faults on every sample) and a serial sum after the parallel part
// (docs/speed.md, "Gradients summed as the batch runs").
#pragma once

#include <cstddef>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "train/sample_gradient.hpp"

namespace egret {

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

// Gives each usable gradient of `out` to `add` in sample order as the samples are done. After
// an outcome's gradient is added, only its input gradients stay in it.
template <class Scalar, class Add>
class OrderedGradientSum {
 public:
  OrderedGradientSum(std::vector<SampleOutcome<Scalar>>& out, NonFiniteSamples rule, const Add& add)
      : out_(out), rule_(rule), add_(add), state_(out.size(), kPending) {}

  // A gradient buffer of a sample already added (sample_loss_and_gradient zeroes it), or an
  // empty one.
  Gradient<Scalar> take_buffer() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return {};
    Gradient<Scalar> g = std::move(free_.back());
    free_.pop_back();
    return g;
  }

  // Sample i's outcome is stored (failed: it threw, and the batch will rethrow). Adds every
  // sample that is now next in order, unless another worker is adding: it then takes them.
  void done(std::size_t i, bool failed) {
    std::unique_lock<std::mutex> lock(mutex_);
    state_[i] = failed ? kFailed : kDone;
    if (adding_) return;
    adding_ = true;
    while (next_ < state_.size() && state_[next_] != kPending) {
      const std::size_t k = next_++;
      const bool failed_k = state_[k] == kFailed;
      lock.unlock();
      Gradient<Scalar> spent = add_one(k, failed_k);
      lock.lock();
      if (!spent.layers.empty()) free_.push_back(std::move(spent));
    }
    adding_ = false;
  }

  // How many gradients were added; rethrows a refusal (kRefuse) or an error of `add`. Call after
  // the batch.
  std::size_t used() const {
    if (error_) std::rethrow_exception(error_);
    return used_;
  }

 private:
  enum State : char { kPending, kDone, kFailed };

  // Only one worker at a time runs this (adding_), in sample order.
  Gradient<Scalar> add_one(std::size_t k, bool failed) {
    if (failed) stopped_ = true;  // the batch throws; nothing after is summed
    if (stopped_) return {};
    SampleOutcome<Scalar>& o = out_[k];
    try {
      if (gradient_usable(o.report, k, rule_)) {
        add_(static_cast<const SampleOutcome<Scalar>&>(o));
        ++used_;
      }
    } catch (...) {
      error_ = std::current_exception();
      stopped_ = true;
      return {};
    }
    Gradient<Scalar> spent;
    spent.layers = std::move(o.grad.layers);
    spent.W_o = std::move(o.grad.W_o);
    spent.b_o = std::move(o.grad.b_o);
    o.grad.layers.clear();
    return spent;
  }

  std::vector<SampleOutcome<Scalar>>& out_;
  const NonFiniteSamples rule_;
  const Add& add_;
  std::mutex mutex_;
  std::vector<State> state_;            // under mutex_
  std::vector<Gradient<Scalar>> free_;  // under mutex_
  std::size_t next_ = 0;                // under mutex_
  bool adding_ = false;                 // under mutex_
  // Touched by the adding worker only, read after the batch:
  std::size_t used_ = 0;
  bool stopped_ = false;
  std::exception_ptr error_;
};

}  // namespace egret
