// A decorator that forwards every call to a layer and accumulates the wall time spent inside
// it, so a benchmark can split a run into "layer work" and "engine (queue, dispatch)".
#pragma once

#include <chrono>
#include <memory>

#include "sim/layer.hpp"

namespace egret::bench {

template <class Scalar>
class TimedLayer final : public Layer<Scalar> {
 public:
  TimedLayer(std::unique_ptr<Layer<Scalar>> inner, double* seconds)
      : inner_(std::move(inner)), seconds_(seconds) {}

  std::string type_name() const override { return inner_->type_name(); }
  Index units() const override { return inner_->units(); }
  Index inputs() const override { return inner_->inputs(); }
  Scalar output_time_constant(Index unit) const override {
    return inner_->output_time_constant(unit);
  }
  bool clocked() const override { return inner_->clocked(); }
  std::unique_ptr<Layer<Scalar>> clone() const override {
    return std::make_unique<TimedLayer>(inner_->clone(), seconds_);
  }
  void reset() override { inner_->reset(); }
  void receive_input(Scalar t, Index channel, Scalar value, Scheduler<Scalar>& sched) override {
    Timer timer(seconds_);
    inner_->receive_input(t, channel, value, sched);
  }
  void release(const Event<Scalar>& event) override {
    Timer timer(seconds_);
    inner_->release(event);
  }
  InternalEvent<Scalar> next_internal_event() const override {
    return inner_->next_internal_event();  // a cached value: O(1), counted as engine time
  }
  void fire(Scalar t, Scheduler<Scalar>& sched, std::vector<Emission<Scalar>>& out) override {
    Timer timer(seconds_);
    inner_->fire(t, sched, out);
  }
  LayerState<Scalar> state_at(Scalar t) const override { return inner_->state_at(t); }
  OperationCounts operation_counts() const override { return inner_->operation_counts(); }
  DenseCost dense_cost() const override { return inner_->dense_cost(); }
  NamedParameters<Scalar> parameters() const override { return inner_->parameters(); }
  std::unique_ptr<Layer<Scalar>> with_parameters(
      const NamedParameters<Scalar>& values) const override {
    return inner_->with_parameters(values);
  }

 private:
  struct Timer {
    explicit Timer(double* s) : s_(s), t0_(std::chrono::steady_clock::now()) {}
    ~Timer() {
      *s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    }
    double* s_;
    std::chrono::steady_clock::time_point t0_;
  };
  std::unique_ptr<Layer<Scalar>> inner_;
  double* seconds_;
};

}  // namespace egret::bench
