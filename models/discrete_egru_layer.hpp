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

  InternalEvent<Scalar> next_internal_event() const override {
    return {tick_time(next_tick_), 0};
  }

  // One tick: the step of DESIGN section 3 for every unit, emitting y_k for units that fire.
  void fire(Scalar t, Scheduler<Scalar>&, std::vector<Emission<Scalar>>& out) override {
    if (t != tick_time(next_tick_)) throw std::logic_error("discrete_egru: fire() off the tick");
    const Index n = units();
    const Stacked& w = *weights_;
    a_ur_ = w.b_ur;
    a_z_ = p_->b_z;
    for (Index ch : touched_) {
      const Scalar x = x_pending_[ch];
      a_ur_.noalias() += w.U_ur.col(ch) * x;
      a_z_.noalias() += p_->U_z.col(ch) * x;
      x_pending_[ch] = 0;
      is_touched_[ch] = 0;
    }
    touched_.clear();
    for (Index m : active_) a_ur_.noalias() += w.V_ur.col(m) * y_[m];
    for (Index m : active_) {
      const Scalar r = Cell::reset_gate(a_ur_[n + m]);
      a_z_.noalias() += p_->V_z.col(m) * (r * y_[m]);
    }
    active_.clear();
    const Scalar* theta = p_->theta.data();
    for (Index m = 0; m < n; ++m) {
      const Scalar u = Cell::update_gate(a_ur_[m]);
      const Scalar z = Cell::candidate(a_z_[m]);
      const Scalar c = Cell::next_state(u, z, c_[m], y_[m]);
      const Scalar y = Cell::output(c, theta[m]);
      c_[m] = c;
      y_[m] = y;
      if (y != Scalar(0)) {
        active_.push_back(m);
        out.push_back({m, y});
      }
    }
    ++next_tick_;
  }

  LayerState<Scalar> state_at(Scalar) const override {
    auto vec = [](const Vector<Scalar>& v) {
      return std::vector<Scalar>(v.data(), v.data() + v.size());
    };
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
    a_ur_.resize(2 * n);
    a_z_.resize(n);
    x_pending_.resize(p_->inputs());
    is_touched_.assign(static_cast<std::size_t>(p_->inputs()), 0);
  }

  Scalar tick_time(std::int64_t k) const { return static_cast<Scalar>(k) * p_->dt; }

  std::shared_ptr<const Params> p_;
  std::shared_ptr<const Stacked> weights_;
  Vector<Scalar> c_, y_;           // state after the last tick
  Vector<Scalar> a_ur_, a_z_;      // pre-activation scratch
  Vector<Scalar> x_pending_;       // summed input per channel for the coming tick
  std::vector<Index> touched_;     // channels with pending input, in arrival order
  std::vector<unsigned char> is_touched_;
  std::vector<Index> active_;      // units that emitted at the last tick
  std::int64_t next_tick_ = 1;
};

}  // namespace egret
