// A discrete-time EGRU layer on the event engine: a tick schedule t_k = k dt (k = 1, 2, ...).
// Input events arriving in (t_{k-1}, t_k] are summed per channel and consumed at tick k.
//
// Event-sparse: the pre-activations start from the biases and only the weight columns of input
// channels that received events and of units that emitted at the previous tick are added, so a
// tick costs O(N (active inputs + active units)) multiply-accumulates plus one O(N) elementwise
// pass, instead of the dense O(N (D + N)).
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "models/discrete_egru_cell.hpp"
#include "models/discrete_egru_params.hpp"
#include "models/sparse_columns.hpp"
#include "sim/layer.hpp"

namespace egret {

template <class Scalar>
class DiscreteEgruLayer final : public Layer<Scalar> {
 public:
  using Params = DiscreteEgruParams<Scalar>;
  using Cell = DiscreteEgruCell<Scalar>;

  explicit DiscreteEgruLayer(std::shared_ptr<const Params> params) : p_(std::move(params)) {
    if (!p_) throw std::invalid_argument("discrete_egru layer: null parameters");
    p_->validate();
    const Index n = p_->units();
    const Index d = p_->inputs();
    // u and r rows stacked so that one column add serves both gates.
    auto w = std::make_shared<Stacked>();
    w->U_ur.resize(2 * n, d);
    w->U_ur << p_->U_u, p_->U_r;
    w->V_ur.resize(2 * n, n);
    w->V_ur << p_->V_u, p_->V_r;
    w->b_ur.resize(2 * n);
    w->b_ur << p_->b_u, p_->b_r;
    weights_ = std::move(w);
    allocate();
    reset();
  }

  std::string type_name() const override { return "discrete_egru"; }
  Index units() const override { return p_->units(); }
  Index inputs() const override { return p_->inputs(); }
  Scalar output_time_constant() const override { return p_->tau_o; }
  bool clocked() const override { return true; }
  const Params& params() const { return *p_; }

  std::unique_ptr<Layer<Scalar>> clone() const override {
    return std::unique_ptr<Layer<Scalar>>(new DiscreteEgruLayer(p_, weights_));
  }

  void reset() override {
    c_.setZero();
    y_.setZero();
    x_pending_.setZero();
    std::fill(is_touched_.begin(), is_touched_.end(), 0);
    touched_.clear();
    active_.clear();
    next_tick_ = 1;
  }

  void receive_input(Scalar, Index channel, Scalar value, Scheduler<Scalar>&) override {
    if (!is_touched_[channel]) {
      is_touched_[channel] = 1;
      touched_.push_back(channel);
    }
    x_pending_[channel] += value;
  }

  void release(const Event<Scalar>&) override {
    throw std::logic_error("discrete_egru: has no release events");
  }

  InternalEvent<Scalar> next_internal_event() const override { return {tick_time(next_tick_), 0}; }

  // One tick: the step of DESIGN section 3 for every unit, emitting y_k for units that fire.
  void fire(Scalar t, Scheduler<Scalar>&, std::vector<Emission<Scalar>>& out) override {
    if (t != tick_time(next_tick_)) throw std::logic_error("discrete_egru: fire() off the tick");
    const Index n = units();
    const Stacked& w = *weights_;
    a_ur_ = w.b_ur;
    a_z_ = p_->b_z;
    scale_.clear();
    for (Index ch : touched_) {
      scale_.push_back(x_pending_[ch]);
      x_pending_[ch] = 0;
      is_touched_[ch] = 0;
    }
    add_scaled_columns(a_ur_, w.U_ur, touched_, scale_);
    add_scaled_columns(a_z_, p_->U_z, touched_, scale_);
    touched_.clear();
    scale_.clear();
    for (Index m : active_) scale_.push_back(y_[m]);
    add_scaled_columns(a_ur_, w.V_ur, active_, scale_);
    // a_z takes the senders' outputs scaled by their reset gates r = sigmoid(a_r), which are
    // complete only now that every column of a_r has been added.
    for (std::size_t i = 0; i < active_.size(); ++i)
      scale_[i] *= Cell::reset_gate(a_ur_[n + active_[i]]);
    add_scaled_columns(a_z_, p_->V_z, active_, scale_);
    active_.clear();
    Cell::step(a_ur_.head(n).array(), a_z_.array(), theta_, c_, y_, u_, z_);
    for (Index m = 0; m < n; ++m) {
      if (y_[m] != Scalar(0)) {
        active_.push_back(m);
        out.push_back({m, y_[m]});
      }
    }
    ++next_tick_;
  }

  NamedParameters<Scalar> parameters() const override { return collect_parameters<Scalar>(*p_); }
  std::unique_ptr<Layer<Scalar>> with_parameters(
      const NamedParameters<Scalar>& values) const override {
    auto p = std::make_shared<Params>(*p_);
    assign_parameters(*p, values, type_name());
    return std::make_unique<DiscreteEgruLayer>(std::move(p));
  }

  LayerState<Scalar> state_at(Scalar) const override {
    auto vec = [](const Array& v) { return std::vector<Scalar>(v.data(), v.data() + v.size()); };
    LayerState<Scalar> s;
    s.variables = {{"c", vec(c_)}, {"y", vec(y_)}};
    return s;
  }

 private:
  struct Stacked {
    Matrix<Scalar> U_ur, V_ur;
    Vector<Scalar> b_ur;
  };

  DiscreteEgruLayer(std::shared_ptr<const Params> p, std::shared_ptr<const Stacked> w)
      : p_(std::move(p)), weights_(std::move(w)) {
    allocate();
    reset();
  }

  void allocate() {
    const Index n = p_->units();
    c_.resize(n);
    y_.resize(n);
    u_.resize(n);
    z_.resize(n);
    theta_ = p_->theta.array();
    a_ur_.resize(2 * n);
    a_z_.resize(n);
    x_pending_.resize(p_->inputs());
    is_touched_.assign(static_cast<std::size_t>(p_->inputs()), 0);
  }

  Scalar tick_time(std::int64_t k) const { return static_cast<Scalar>(k) * p_->dt; }

  std::shared_ptr<const Params> p_;
  std::shared_ptr<const Stacked> weights_;
  using Array = typename Cell::Array;
  Array c_, y_;  // state after the last tick
  Array u_, z_;  // gate scratch of a tick
  Array theta_;
  Vector<Scalar> a_ur_, a_z_;   // pre-activation scratch
  Vector<Scalar> x_pending_;    // summed input per channel for the coming tick
  std::vector<Index> touched_;  // channels with pending input, in arrival order
  std::vector<unsigned char> is_touched_;
  std::vector<Index> active_;  // units that emitted at the last tick
  std::vector<Scalar> scale_;  // per-column scales of the current sparse product
  std::int64_t next_tick_ = 1;
};

}  // namespace egret
