// The backward side of a spiking-gated linear recurrent layer
// (models/spiking_gated/spiking_gated_cell.hpp): BPTT with the arctan surrogate f'(v) = 1 / (1 +
// (alpha_s pi v)^2) in place of H'(v); the threshold noise is a constant of the run (no gradient).
// The layer emits changes d_k = h_k - h_{k-1}, so dL/dh_k = carried + dL/dd_k, and h_{k-1} gets
// -dL/dd_k. Per unit, with q = c h_{k-1} + W_x x_k + b_x and r = 1 - exp(-dt inv_tau_m):
//   dh = carried_h + dL/dd_k,        ds = dh (q - h_{k-1}),       dm = carried_m + ds f'(v)
//   du = dm r,   d inv_tau_m += dm (u - m_{k-1}) dt (1 - r),       carried_m to k - 1: dm (1 - r)
//   d(W_x x + b_x) = dh s,   dc_hat = dh s h_{k-1} c'(c_hat)
//   carried_h to k - 1: dh (s c + 1 - s) - dL/dd_k
// and the weight gradients from x_k (dW_i[:, ch] += du x_ch; dW_x, dW_c for spiking units only).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/shared/surrogates.hpp"
#include "models/spiking_gated/spiking_gated_params.hpp"
#include "models/tick/tick_adjoint.hpp"

namespace egret {

template <class Scalar>
class SpikingGatedAdjoint {
 public:
  using Params = SpikingGatedParams<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;

  explicit SpikingGatedAdjoint(std::shared_ptr<const Params> p) : p_(std::move(p)) {}

  void begin(NamedParameters<Scalar>& grad) {
    const std::string where = "spiking_gated adjoint";
    dW_x_ = &grad.at("W_x", where);
    db_x_ = &grad.at("b_x", where);
    dW_c_ = &grad.at("W_c", where);
    db_c_ = &grad.at("b_c", where);
    dW_i_ = &grad.at("W_i", where);
    db_i_ = &grad.at("b_i", where);
    dinv_tau_m_ = &grad.at("inv_tau_m", where);
    const Index n = p_->units();
    for (Array* a : {&carry_h_, &carry_m_, &a_u_, &a_x_, &a_c_}) a->setZero(n);
    leak_.resize(n);
    for (Index m = 0; m < n; ++m) leak_[m] = p_->leak(m);
    spiking_.clear();
  }

  void tick(TickVisit<Scalar>& visit, BackwardReport& report) {
    const Index n = p_->units();
    report.surrogate_pairs += static_cast<std::uint64_t>(n);
    spiking_.clear();
    for (Index m = 0; m < n; ++m) unit(visit, m, report);
    visit.dy->setZero();
    add_weight_gradients(*visit.input, report);
  }

  Scalar input_adjoint(Index channel, BackwardReport& report) {
    const Params& p = *p_;
    Scalar sum = p.W_i.col(channel).dot(a_u_.matrix());
    for (Index m : spiking_) sum += p.W_x(m, channel) * a_x_[m] + p.W_c(m, channel) * a_c_[m];
    report.backward_macs += static_cast<std::uint64_t>(p.units() + 2 * spiking_.size());
    return sum;
  }

  bool finite() const {
    return carry_h_.allFinite() && carry_m_.allFinite() && a_u_.allFinite() && a_x_.allFinite() &&
           a_c_.allFinite();
  }

 private:
  // The record of a tick (models/spiking_gated/spiking_gated_cell.hpp record): six blocks of N.
  enum Block { kU = 0, kM, kV, kCHat, kCandidate, kH };
  Scalar at(const Scalar* record, Block b, Index m) const {
    return record ? record[b * p_->units() + m] : Scalar(0);  // nullptr: the state at t = 0
  }

  void unit(TickVisit<Scalar>& visit, Index m, BackwardReport& report) {
    const Params& p = *p_;
    const Scalar *now = visit.record, *before = visit.previous_record;
    const Scalar h_prev = at(before, kH, m), m_prev = at(before, kM, m);
    const Scalar v = at(now, kV, m), c_hat = at(now, kCHat, m);
    const Scalar s = v > Scalar(0) ? Scalar(1) : Scalar(0);
    const Scalar c = forget_gate(c_hat);
    const Scalar r = leak_[m];
    const Scalar surrogate = arctan_surrogate(v, p.alpha_s);
    if (surrogate == Scalar(0)) ++report.zero_surrogate_pairs;
    Scalar& dd = (*visit.dy)[m];  // dL/d(h_k - h_{k-1}) from the consumers
    const Scalar dh = carry_h_[m] + dd;
    const Scalar ds = dh * (c * h_prev + at(now, kCandidate, m) - h_prev);
    const Scalar dm = carry_m_[m] + ds * surrogate;
    a_u_[m] = dm * r;
    (*dinv_tau_m_)(m, 0) += dm * (at(now, kU, m) - m_prev) * p.dt * (Scalar(1) - r);
    carry_m_[m] = dm * (Scalar(1) - r);
    a_x_[m] = dh * s;
    a_c_[m] = dh * s * h_prev * forget_gate_derivative(c_hat);
    if (s != Scalar(0)) spiking_.push_back(m);
    carry_h_[m] = dh * (s * c + Scalar(1) - s) - dd;
  }

  // The biases, and the weight columns of the channels of x_k (W_x, W_c: spiking rows only, the
  // others have zero adjoints).
  void add_weight_gradients(const TickInput<Scalar>& x, BackwardReport& report) {
    *db_i_ += a_u_.matrix();
    *db_x_ += a_x_.matrix();
    *db_c_ += a_c_.matrix();
    for (std::size_t i = 0; i < x.size(); ++i) {
      const Index ch = x.channels[i];
      dW_i_->col(ch) += x.values[i] * a_u_.matrix();
      for (Index m : spiking_) {
        (*dW_x_)(m, ch) += x.values[i] * a_x_[m];
        (*dW_c_)(m, ch) += x.values[i] * a_c_[m];
      }
    }
    report.backward_macs +=
        static_cast<std::uint64_t>(p_->units() + 2 * spiking_.size()) * x.size();
  }

  std::shared_ptr<const Params> p_;
  Matrix<Scalar>*dW_x_ = nullptr, *db_x_ = nullptr, *dW_c_ = nullptr, *db_c_ = nullptr;
  Matrix<Scalar>*dW_i_ = nullptr, *db_i_ = nullptr, *dinv_tau_m_ = nullptr;
  Array carry_h_, carry_m_;     // dL/dh_{k-1}, dL/dm_{k-1} carried from the tick visited last
  Array a_u_, a_x_, a_c_;       // dL/du_k, dL/d(W_x x_k + b_x), dL/dc_hat_k of that tick
  Array leak_;                  // r = 1 - exp(-dt inv_tau_m) per unit
  std::vector<Index> spiking_;  // the units whose gate spiked at that tick
};

}  // namespace egret
