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

#include "models/discrete_egru/discrete_egru_adjoint.hpp"
#include "models/discrete_egru/discrete_egru_cell.hpp"
#include "models/discrete_egru/discrete_egru_params.hpp"
#include "models/shared/synapse_counting.hpp"
#include "models/tick/sparse_columns.hpp"
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
    weights_ = std::make_shared<const Stacked>(*p_);
    allocate();
    reset();
  }

  std::string type_name() const override { return "discrete_egru"; }
  Index units() const override { return p_->units(); }
  Index inputs() const override { return p_->inputs(); }
  Scalar output_time_constant(Index unit) const override { return p_->tau_o[unit]; }
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
    bin_channels_.clear();
    bin_values_.clear();
    next_tick_ = 1;
    counts_ = {};
  }

  // A value-0 input changes no sum and is not binned (surrogate events are value-0 inputs, and
  // binning them would change the order of the sums, so the forward pass would depend on
  // whether a tape is recorded).
  void receive_input(Scalar, Index channel, Scalar value, Scheduler<Scalar>&) override {
    if (value == Scalar(0)) return;
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

  // One tick: the step of docs/model.md §4 for every unit, emitting y_k for units that fire (and,
  // while a tape is recorded, a surrogate event for every silent unit with H'(v) != 0). The bin
  // it consumed is kept for the tape.
  void fire(Scalar t, Scheduler<Scalar>&, std::vector<Emission<Scalar>>& out) override {
    if (t != tick_time(next_tick_)) throw std::logic_error("discrete_egru: fire() off the tick");
    const Index n = units();
    const Stacked& w = *weights_;
    a_ur_ = w.b_ur;
    a_z_ = p_->b_z;
    bin_channels_.swap(touched_);
    touched_.clear();
    bin_values_.clear();
    for (Index ch : bin_channels_) {
      bin_values_.push_back(x_pending_[ch]);
      x_pending_[ch] = 0;
      is_touched_[ch] = 0;
    }
    add_scaled_columns(a_ur_, w.U_ur, bin_channels_, bin_values_);
    add_scaled_columns(a_z_, p_->U_z, bin_channels_, bin_values_);
    scale_.clear();
    for (Index m : active_) scale_.push_back(y_[m]);
    add_scaled_columns(a_ur_, w.V_ur, active_, scale_);
    // a_z takes the senders' outputs scaled by their reset gates r = sigmoid(a_r), which are
    // complete only now that every column of a_r has been added.
    for (std::size_t i = 0; i < active_.size(); ++i)
      scale_[i] *= Cell::reset_gate(a_ur_[n + active_[i]]);
    add_scaled_columns(a_z_, p_->V_z, active_, scale_);
    count_synapses();
    active_.clear();
    c_before_ = c_;
    Cell::step(a_ur_.head(n).array(), a_z_.array(), theta_, c_, y_, u_, z_);
    count_units();
    for (Index m = 0; m < n; ++m) {
      if (y_[m] != Scalar(0)) {
        active_.push_back(m);
        emit(out, m, y_[m]);
      } else if (recording_ &&
                 Cell::pseudo_derivative(c_[m] - theta_[m], p_->dampening, p_->half_width) != 0) {
        emit(out, m, Scalar(0), Scalar(0), true);
      }
    }
    ++next_tick_;
  }

  OperationCounts operation_counts() const override { return counts_; }
  // Dense: the three gates' U x_k and V y_{k-1} in full, and u z, (1 - u) c_{k-1} and r y_{k-1}
  // per unit; a unit's state is (c, y).
  DenseCost dense_cost() const override {
    const auto n = static_cast<std::uint64_t>(units());
    return {3 * (dense_pairs(p_->U_u) + dense_pairs(p_->V_u)) + 3 * n, 2};
  }

  NamedParameters<Scalar> parameters() const override { return collect_parameters<Scalar>(*p_); }
  NamedParameters<Scalar> parameter_zeros() const override {
    return collect_parameter_zeros<Scalar>(*p_);
  }
  std::unique_ptr<Layer<Scalar>> with_parameters(
      const NamedParameters<Scalar>& values) const override {
    auto p = std::make_shared<Params>(*p_);
    assign_parameters(*p, values, type_name());
    return std::make_unique<DiscreteEgruLayer>(std::move(p));
  }

  std::unique_ptr<LayerAdjoint<Scalar>> make_adjoint() const override {
    return std::make_unique<DiscreteEgruAdjoint<Scalar>>(p_, weights_);
  }
  void set_tape_recording(const TapeSettings& s) override { recording_ = s.recording; }
  // Per tick: c_k, then the bin it consumed (count, then channel and summed value per channel,
  // in the order they were summed). Input steps record nothing: the adjoint replays the rest.
  void record_step_state(EventKind kind, std::vector<Scalar>& out) const override {
    if (kind != EventKind::kInternal) return;
    out.insert(out.end(), c_.data(), c_.data() + c_.size());
    out.push_back(static_cast<Scalar>(bin_channels_.size()));
    for (std::size_t i = 0; i < bin_channels_.size(); ++i) {
      out.push_back(DiscreteEgruAdjoint<Scalar>::channel_as_scalar(bin_channels_[i]));
      out.push_back(bin_values_[i]);
    }
  }

  LayerState<Scalar> state_at(Scalar) const override {
    auto vec = [](const Array& v) { return std::vector<Scalar>(v.data(), v.data() + v.size()); };
    LayerState<Scalar> s;
    s.variables = {{"c", vec(c_)}, {"y", vec(y_)}};
    return s;
  }

 private:
  using Stacked = DiscreteEgruStackedWeights<Scalar>;

  DiscreteEgruLayer(std::shared_ptr<const Params> p, std::shared_ptr<const Stacked> w)
      : p_(std::move(p)), weights_(std::move(w)) {
    allocate();
    reset();
  }

  // The tick's synaptic pairs (docs/metrics.md): the bin's columns of U_u, U_r, U_z, and the
  // senders' columns of V_u, V_r (operand y) and V_z (operand r y, one product per sender).
  void count_synapses() {
    for (const auto* U : {&U_u_, &U_r_, &U_z_})
      U->count_columns(counts_, bin_channels_, bin_values_);
    const Index n = units();
    sender_y_.clear();
    for (Index m : active_) sender_y_.push_back(y_[m]);
    V_u_.count_columns(counts_, active_, sender_y_);
    V_r_.count_columns(counts_, active_, sender_y_);
    V_z_.count_columns(counts_, active_, scale_);
    for (std::size_t i = 0; i < active_.size(); ++i)
      count_product(counts_, Cell::reset_gate(a_ur_[n + active_[i]]), sender_y_[i]);
  }

  // Per unit: u z and (1 - u) c_{k-1}; a unit whose c or y changed is a membrane update (every
  // unit at the first tick).
  void count_units() {
    for (Index m = 0; m < units(); ++m) {
      count_product(counts_, u_[m], z_[m]);
      count_product(counts_, Scalar(1) - u_[m], c_before_[m]);
      if (next_tick_ == 1 || c_[m] != c_before_[m]) ++counts_.membrane_updates;
    }
  }

  void allocate() {
    const Index n = p_->units();
    U_u_ = WeightPattern<Scalar>(p_->U_u);
    U_r_ = WeightPattern<Scalar>(p_->U_r);
    U_z_ = WeightPattern<Scalar>(p_->U_z);
    V_u_ = WeightPattern<Scalar>(p_->V_u);
    V_r_ = WeightPattern<Scalar>(p_->V_r);
    V_z_ = WeightPattern<Scalar>(p_->V_z);
    c_before_.resize(n);
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
  std::vector<Index> active_;        // units that emitted at the last tick
  std::vector<Scalar> scale_;        // per-column scales of the current sparse product
  std::vector<Index> bin_channels_;  // the bin the last tick consumed (for the tape)
  std::vector<Scalar> bin_values_;
  std::int64_t next_tick_ = 1;
  bool recording_ = false;  // a tape is recorded: emit surrogate events
  WeightPattern<Scalar> U_u_, U_r_, U_z_, V_u_, V_r_, V_z_;
  Array c_before_;                // c_{k-1} during a tick
  std::vector<Scalar> sender_y_;  // y_{k-1} of the senders
  OperationCounts counts_;        // since reset()
};

}  // namespace egret
