// The backward side of a selective-update RNN layer (models/surnn/surnn_cell.hpp): BPTT with the
// sigmoid-derivative straight-through surrogate for the gate (suRNN paper section 3.2). The layer
// emits changes d_k = h_k - h_{k-1}; with dh = dL/dh_k (carried + dL/dd_k):
//   df = dh g,  dp = df (1 - f^2)                       (p = W x_k + V h_{k-1} + b)
//   da = dh (f - h_{k-1}) beta s (1 - s)                (s = sigmoid(beta a))
//   carried to k - 1: dh (1 - g) + V^T dp - dL/dd_k
//   dW[:, c] += dp x_c, dV += dp h_{k-1}^T, db += dp; the gate's parameters from da.
// dp is zero for closed units: their rows of W and V get no gradient at this tick.
#pragma once

#include <cstdint>
#include <memory>

#include "models/shared/surrogates.hpp"
#include "models/surnn/surnn_params.hpp"
#include "models/tick/tick_adjoint.hpp"

namespace egret {

template <class Scalar>
class SurnnAdjoint {
 public:
  using Params = SurnnParams<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;

  explicit SurnnAdjoint(std::shared_ptr<const Params> p) : p_(std::move(p)) {}

  void begin(NamedParameters<Scalar>& grad) {
    const std::string where = "surnn adjoint";
    dW_ = &grad.at("W", where);
    dV_ = &grad.at("V", where);
    db_ = &grad.at("b", where);
    dg_b_ = &grad.at("g_b", where);
    dg_alpha_ = &grad.at("g_alpha", where);
    dg_phi_ = &grad.at("g_phi", where);
    dg_omega_ = &grad.at("g_omega", where);
    const Index n = p_->units();
    carry_.setZero(n);
    dp_.setZero(n);
    da_.setZero(n);
  }

  void tick(TickVisit<Scalar>& visit, BackwardReport& report) {
    const Params& p = *p_;
    const Index n = p.units();
    const auto un = static_cast<std::uint64_t>(n);
    const Eigen::Map<const Array> a(visit.record, n), f(visit.record + n, n);
    h_prev_.setZero(n);
    if (visit.previous_record) h_prev_ = Eigen::Map<const Array>(visit.previous_record + 2 * n, n);
    Array& dd = *visit.dy;
    report.surrogate_pairs += un;
    std::uint64_t open = 0;
    for (Index m = 0; m < n; ++m) {
      const Scalar g = a[m] > Scalar(0) ? Scalar(1) : Scalar(0);
      const Scalar dh = carry_[m] + dd[m];
      const Scalar s = sigmoid_surrogate(a[m], p.slope);
      if (s == Scalar(0)) ++report.zero_surrogate_pairs;
      dp_[m] = dh * g * (Scalar(1) - f[m] * f[m]);
      da_[m] = dh * (f[m] - h_prev_[m]) * s;
      carry_[m] = dh * (Scalar(1) - g) - dd[m];
      open += a[m] > Scalar(0);
    }
    dd.setZero();
    carry_.matrix().noalias() += p.V.transpose() * dp_.matrix();
    dV_->noalias() += dp_.matrix() * h_prev_.matrix().transpose();
    *db_ += dp_.matrix();
    const TickInput<Scalar>& x = *visit.input;
    for (std::size_t i = 0; i < x.size(); ++i)
      dW_->col(x.channels[i]) += x.values[i] * dp_.matrix();
    p.gate.add_gradient(x.time, da_, *dg_b_, *dg_alpha_, *dg_phi_, *dg_omega_);
    report.backward_macs += open * (2 * un + x.size());
  }

  Scalar input_adjoint(Index channel, BackwardReport& report) {
    report.backward_macs += static_cast<std::uint64_t>(p_->units());
    return p_->W.col(channel).dot(dp_.matrix());
  }

  bool finite() const { return carry_.allFinite() && dp_.allFinite() && da_.allFinite(); }

 private:
  std::shared_ptr<const Params> p_;
  Matrix<Scalar>*dW_ = nullptr, *dV_ = nullptr, *db_ = nullptr;
  Matrix<Scalar>*dg_b_ = nullptr, *dg_alpha_ = nullptr, *dg_phi_ = nullptr, *dg_omega_ = nullptr;
  Array carry_;    // dL/dh_{k-1} carried from the tick visited last
  Array dp_, da_;  // dL/d(pre-activation), dL/d(gate activation) of the last tick visited
  Array h_prev_;
};

}  // namespace egret
