// The backward side of a discrete-time EGRU layer: backpropagation through time over the tick
// schedule with the pseudo-derivative H'(v) = gamma max(0, 1 - |v| / eps), v = c - theta, in
// place of H's derivative (docs/adjoint.md, "Discrete BPTT"). Everything else is exact.
//
// The tape keeps per tick only c_k and the bin of inputs the tick consumed; the pre-activations
// and gates of tick k are replayed from the biases, the bin and y_{k-1} = c_{k-1} H(c_{k-1} -
// theta), touching only the active columns, as the forward pass did. Event-sparse backward:
//  * dL/dy_{k-1,n} through the recurrence is computed only for units whose dy/dc = H + c H' at
//    tick k-1 is not zero (the others pass no adjoint back), and the dV columns only for
//    senders (y_{k-1,n} != 0);
//  * a tick whose adjoint dL/dc_k is zero everywhere does no weight work at all.
// Silent units with H' != 0 reach their consumers through surrogate events (value 0) that the
// layer emits while a tape is recorded (sim/layer.hpp Emission), so their dL/dy_k arrives here
// through emission_adjoint like a real event's. Input times get no gradient (binning), and
// neither do tick times.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/discrete_egru/discrete_egru_cell.hpp"
#include "models/discrete_egru/discrete_egru_params.hpp"
#include "models/tick/sparse_columns.hpp"
#include "sim/layer_adjoint.hpp"

namespace egret {

template <class Scalar>
class DiscreteEgruAdjoint final : public LayerAdjoint<Scalar> {
 public:
  using Params = DiscreteEgruParams<Scalar>;
  using Cell = DiscreteEgruCell<Scalar>;
  using Array = typename Cell::Array;
  using Stacked = DiscreteEgruStackedWeights<Scalar>;

  DiscreteEgruAdjoint(std::shared_ptr<const Params> p, std::shared_ptr<const Stacked> w)
      : p_(std::move(p)), w_(std::move(w)) {}

  // Channels are stored on the tape as Scalars: exact below 2^24 (float) or 2^53 (double).
  static Scalar channel_as_scalar(Index ch) {
    const auto s = static_cast<Scalar>(ch);
    if (static_cast<Index>(s) != ch)
      throw std::invalid_argument("discrete_egru: input channel " + std::to_string(ch) +
                                  " cannot be recorded on a tape of this precision");
    return s;
  }

  // The state regulariser (adjoint/state_regularizer.hpp) on the ticks: c_k is held for a tick,
  // so the integral is dt sum_k max(0, c_k - (theta - margin)).
  bool has_state_cost() const override { return true; }
  Scalar state_cost_value() const override { return state_cost_total_; }

  void begin(const Tape<Scalar>&, Index) override {
    const Index n = p_->units();
    state_cost_total_ = 0;
    for (Array* v : {&lam_c_, &dy_, &la_u_, &la_r_, &la_z_}) v->setZero(n);
    adjoint_zero_ = true;
    grad_ = collect_parameter_zeros<Scalar>(*p_);
    g_ = Views(grad_);
    pairs_ = zero_pairs_ = macs_ = 0;
    finite_ = true;
  }

  // An input step: its value enters the pre-activations of the tick that consumed it, whose
  // adjoints la_X are the latest this sweep computed (zero if no tick consumed it).
  void jump_adjoint(const Tape<Scalar>& tape, const TapeStep<Scalar>& st, Scalar* d_value,
                    Scalar*) override {
    if (st.kind != EventKind::kInput || adjoint_zero_) return;
    const Params& p = *p_;
    const Index n = p.units();
    const TapeItem<Scalar>& item = tape.items_of(st)[0];
    const Index ch = item.index;
    const auto lu = la_u_.matrix(), lr = la_r_.matrix(), lz = la_z_.matrix();
    d_value[0] = p.U_u.col(ch).dot(lu) + p.U_r.col(ch).dot(lr) + p.U_z.col(ch).dot(lz);
    macs_ += 3 * static_cast<std::uint64_t>(n);
    if (item.value != Scalar(0)) {
      g_.U_u->col(ch) += item.value * lu;
      g_.U_r->col(ch) += item.value * lr;
      g_.U_z->col(ch) += item.value * lz;
      macs_ += 3 * static_cast<std::uint64_t>(n);
    }
  }

  // dL/dy_k of an emitted (or surrogate) unit from its consumers: the next layer, the readout
  // trace. Emission times are tick times: their adjoints are dropped.
  void emission_adjoint(const TapeItem<Scalar>& item, Scalar d_value, Scalar) override {
    dy_[item.index] += d_value;
  }

  // The whole tick k: from dL/dy_k and the carried dL/dc_k to the gate adjoints, the parameter
  // gradients and the carries to tick k - 1.
  Scalar interval_adjoint(const Tape<Scalar>& tape, const TapeStep<Scalar>& st, Scalar) override {
    if (st.kind != EventKind::kInternal) return 0;
    const Params& p = *p_;
    const Index n = p.units();
    const Scalar* rec = tape.step_state(st);
    check_record(tape, st);
    const Eigen::Map<const Array> c(rec, n);
    const TapeStep<Scalar>* prev = previous_tick(tape, st);
    if (this->state_cost_.active()) add_state_cost(c);
    // y_k = c_k H(v): dL/dc_k = carry + dL/dy_k (H + c H'), dL/dtheta -= dL/dy_k c H'.
    pairs_ += static_cast<std::uint64_t>(n);
    for (Index m = 0; m < n; ++m) {
      const Scalar v = c[m] - p.theta[m];
      const Scalar hp = Cell::pseudo_derivative(v, p.dampening, p.half_width);
      if (hp == Scalar(0)) ++zero_pairs_;
      const Scalar h = Cell::fires(c[m], p.theta[m]) ? Scalar(1) : Scalar(0);
      lam_c_[m] += dy_[m] * (h + c[m] * hp);
      (*g_.theta)(m, 0) -= dy_[m] * c[m] * hp;
    }
    dy_.setZero();
    adjoint_zero_ = (lam_c_ == Scalar(0)).all();
    if (adjoint_zero_) {
      finite_ = true;
      return 0;  // nothing flows back from this tick
    }
    replay(tape, prev, rec + n);
    gate_adjoints();
    recurrent_adjoints(prev != nullptr);
    *g_.b_u += la_u_.matrix();
    *g_.b_r += la_r_.matrix();
    *g_.b_z += la_z_.matrix();
    finite_ = lam_c_.allFinite() && dy_.allFinite() && la_u_.allFinite() && la_r_.allFinite() &&
              la_z_.allFinite();
    return 0;  // tick times do not depend on the parameters
  }

  void add_output_time_constant_gradient(Index unit, Scalar d) override {
    (*g_.tau_o)(unit, 0) += d;
  }

  // c_0 = 0 and y_0 = 0 are no parameters; the biases were accumulated per tick.
  void finish() override {}

  const NamedParameters<Scalar>& gradient() const override { return grad_; }
  bool finite() const override { return finite_; }
  void add_to_report(BackwardReport& r) const override {
    r.surrogate_pairs += pairs_;
    r.zero_surrogate_pairs += zero_pairs_;
    r.backward_macs += macs_;
  }

 private:
  struct Views {
    Views() = default;
    explicit Views(NamedParameters<Scalar>& g)
        : U_u(&g.at("U_u", kWhere)),
          U_r(&g.at("U_r", kWhere)),
          U_z(&g.at("U_z", kWhere)),
          V_u(&g.at("V_u", kWhere)),
          V_r(&g.at("V_r", kWhere)),
          V_z(&g.at("V_z", kWhere)),
          b_u(&g.at("b_u", kWhere)),
          b_r(&g.at("b_r", kWhere)),
          b_z(&g.at("b_z", kWhere)),
          theta(&g.at("theta", kWhere)),
          tau_o(&g.at("tau_o", kWhere)) {}
    Matrix<Scalar>*U_u = nullptr, *U_r = nullptr, *U_z = nullptr;
    Matrix<Scalar>*V_u = nullptr, *V_r = nullptr, *V_z = nullptr;
    Matrix<Scalar>*b_u = nullptr, *b_r = nullptr, *b_z = nullptr;
    Matrix<Scalar>*theta = nullptr, *tau_o = nullptr;
  };
  static constexpr const char* kWhere = "discrete_egru adjoint";

  // Tick k's share of the state cost, w dt max(0, c_k - level): its value, and w dt into dL/dc_k
  // (and -w dt into theta's gradient unless theta is detached) where c_k is above the level.
  template <class C>
  void add_state_cost(const C& c) {
    const StateCost<Scalar>& cost = this->state_cost_;
    const Scalar w_dt = cost.weight * p_->dt;
    Scalar value = 0;
    for (Index m = 0; m < p_->units(); ++m) {
      const Scalar excess = c[m] - (p_->theta[m] - cost.margin);
      if (!(excess > 0)) continue;
      value += excess;
      lam_c_[m] += w_dt;
      if (!cost.detach_threshold) (*g_.theta)(m, 0) -= w_dt;
    }
    state_cost_total_ += w_dt * value;
  }

  // The tick's record (c_k, bin count, pairs) lies inside the layer's step states.
  void check_record(const Tape<Scalar>& tape, const TapeStep<Scalar>& st) const {
    const auto& all = tape.step_states[static_cast<std::size_t>(st.layer)];
    const auto n = static_cast<std::size_t>(p_->units());
    const auto offset = static_cast<std::size_t>(st.state);
    if (offset + n + 1 > all.size())
      throw std::logic_error("discrete_egru adjoint: tape does not match the layer");
    const Scalar count = all[offset + n];
    if (!(count >= 0) || 2 * static_cast<double>(count) > static_cast<double>(all.size()))
      throw std::logic_error("discrete_egru adjoint: tape does not match the layer");
    if (offset + n + 1 + 2 * static_cast<std::size_t>(count) > all.size())
      throw std::logic_error("discrete_egru adjoint: tape does not match the layer");
  }

  // The previous tick of the layer (input steps between record nothing), or nullptr at tick 1.
  static const TapeStep<Scalar>* previous_tick(const Tape<Scalar>& tape,
                                               const TapeStep<Scalar>& st) {
    const TapeStep<Scalar>* s = tape.previous(st);
    while (s && s->kind != EventKind::kInternal) s = tape.previous(*s);
    return s;
  }

  // Tick k's pre-activations, exactly as the forward pass summed them (same columns, same
  // order), and its gates: u, r (all units), z; y_{k-1} and c_{k-1} from the previous tick.
  void replay(const Tape<Scalar>& tape, const TapeStep<Scalar>* prev, const Scalar* bin) {
    const Params& p = *p_;
    const Stacked& w = *w_;
    const Index n = p.units();
    const auto un = static_cast<std::uint64_t>(n);
    if (prev) {
      c_prev_ = Eigen::Map<const Array>(tape.step_state(*prev), n);
    } else {
      c_prev_.setZero(n);
    }
    y_prev_ = (c_prev_ - p.theta.array() > Scalar(0)).select(c_prev_, Scalar(0));
    active_.clear();
    for (Index m = 0; m < n; ++m)
      if (y_prev_[m] != Scalar(0)) active_.push_back(m);
    const auto count = static_cast<std::size_t>(bin[0]);
    channels_.resize(count);
    values_.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      channels_[i] = static_cast<Index>(bin[1 + 2 * i]);
      values_[i] = bin[2 + 2 * i];
    }
    a_ur_ = w.b_ur;
    a_z_ = p.b_z;
    add_scaled_columns(a_ur_, w.U_ur, channels_, values_);
    add_scaled_columns(a_z_, p.U_z, channels_, values_);
    scale_.clear();
    for (Index m : active_) scale_.push_back(y_prev_[m]);
    add_scaled_columns(a_ur_, w.V_ur, active_, scale_);
    r_ = (Scalar(1) + (-a_ur_.tail(n).array()).exp()).inverse();
    for (std::size_t i = 0; i < active_.size(); ++i)
      scale_[i] *= Cell::reset_gate(a_ur_[n + active_[i]]);
    add_scaled_columns(a_z_, p.V_z, active_, scale_);
    Cell::gates(a_ur_.head(n).array(), a_z_.array(), u_, z_);
    macs_ += 3 * un * (count + active_.size());
  }

  // c_k = u z + (1 - u) c_{k-1} - y_{k-1}: the pre-activation adjoints and dL/dc_{k-1}'s carry.
  void gate_adjoints() {
    la_u_ = lam_c_ * (z_ - c_prev_) * u_ * (Scalar(1) - u_);
    la_z_ = lam_c_ * u_ * (Scalar(1) - z_ * z_);
    la_r_.setZero();
    lam_c_k_ = lam_c_;
    lam_c_ = (Scalar(1) - u_) * lam_c_k_;
  }

  // Through a_X = ... + V_u y_{k-1} (u, r) and V_z (r y_{k-1}) (z): the reset gates' adjoints
  // (senders only), dV (senders' columns only), and dL/dy_{k-1} for the units whose dy/dc at
  // tick k-1 is not zero (the others pass nothing back), including c_k's -y_{k-1}.
  void recurrent_adjoints(bool has_previous_tick) {
    const Params& p = *p_;
    const Index n = p.units();
    const auto un = static_cast<std::uint64_t>(n);
    const auto lu = la_u_.matrix(), lz = la_z_.matrix();
    g_z_.setZero(n);
    for (Index m : active_) {
      g_z_[m] = p.V_z.col(m).dot(lz);
      la_r_[m] = y_prev_[m] * g_z_[m] * Cell::sigmoid_derivative(r_[m]);
    }
    for (Index m : active_) {
      const Scalar y = y_prev_[m];
      g_.V_u->col(m) += y * lu;
      g_.V_z->col(m) += (r_[m] * y) * lz;
      for (Index j : active_) (*g_.V_r)(j, m) += y * la_r_[j];
    }
    const auto na = static_cast<std::uint64_t>(active_.size());
    macs_ += na * un + na * (2 * un + na);
    if (!has_previous_tick) return;  // y_0 = 0 is no parameter
    // la_r is nonzero at the senders only: gather them, unless they touch most cache lines of a
    // column anyway (8 doubles per line), then one contiguous pass over the column is cheaper.
    const bool dense_r = na * 8 >= un;
    const auto lr = la_r_.matrix();
    for (Index m = 0; m < n; ++m) {
      const bool sender = y_prev_[m] != Scalar(0);
      if (!sender &&
          Cell::pseudo_derivative(c_prev_[m] - p.theta[m], p.dampening, p.half_width) == Scalar(0))
        continue;
      Scalar dr = 0;
      if (dense_r) {
        dr = p.V_r.col(m).dot(lr);
      } else {
        for (Index j : active_) dr += p.V_r(j, m) * la_r_[j];
      }
      const Scalar gz = sender ? g_z_[m] : p.V_z.col(m).dot(lz);
      dy_[m] = -lam_c_k_[m] + p.V_u.col(m).dot(lu) + dr + r_[m] * gz;
      macs_ += un + (dense_r ? un : na) + (sender ? 0 : un);
    }
  }

  std::shared_ptr<const Params> p_;
  std::shared_ptr<const Stacked> w_;
  NamedParameters<Scalar> grad_;
  Views g_;
  Array lam_c_;               // dL/dc_k: carried from tick k + 1, then completed at tick k
  Array dy_;                  // dL/dy_k of the next tick to visit (recurrence + emissions)
  Array la_u_, la_r_, la_z_;  // pre-activation adjoints of the latest tick visited
  bool adjoint_zero_ = true;  // ... and whether they are all zero
  Array c_prev_, y_prev_, u_, z_, r_, g_z_, lam_c_k_;  // scratch of one tick
  Vector<Scalar> a_ur_, a_z_;
  std::vector<Index> active_, channels_;
  std::vector<Scalar> values_, scale_;
  std::uint64_t pairs_ = 0, zero_pairs_ = 0, macs_ = 0;
  bool finite_ = true;
  Scalar state_cost_total_ = 0;
};

}  // namespace egret
