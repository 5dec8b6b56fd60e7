// The backward side of a LIF layer (models/lif/lif_cell.hpp): BPTT with the arctan surrogate
// sigma'(u) = 1 / (1 + (alpha_s pi u)^2) in place of H'(u), u = v - theta. The soft reset's
// s_{k-1} is differentiated like every other use of s (no detach). Per tick k, with
// lam = dL/dv_k carried from tick k + 1 and dy = dL/ds_k:
//   a = lam + dy sigma'(v_k - theta)                 (dL/dv_k, all paths)
//   dtheta -= dy sigma' + a s_{k-1};  db += a;  dW[:, c] += a x_c;  dV[:, m] += a (s_{k-1,m} = 1)
//   dtau_mem += a v_{k-1} alpha dt / tau_mem^2;  lam <- alpha a   (per unit, elementwise)
//   dL/ds_{k-1} = V^T a - theta a  (the recurrence and the reset)
#pragma once

#include <cstdint>
#include <memory>

#include "models/lif/lif_params.hpp"
#include "models/shared/surrogates.hpp"
#include "models/tick/tick_adjoint.hpp"

namespace egret {

template <class Scalar>
class LifAdjoint {
 public:
  using Params = LifParams<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;

  explicit LifAdjoint(std::shared_ptr<const Params> p)
      : p_(std::move(p)), alpha_(p_->decay()), dalpha_dtau_(p_->decay_derivative(alpha_)) {}

  void begin(NamedParameters<Scalar>& grad) {
    const std::string where = "lif adjoint";
    dW_ = &grad.at("W", where);
    dV_ = &grad.at("V", where);
    db_ = &grad.at("b", where);
    dtheta_ = &grad.at("theta", where);
    dtau_mem_ = &grad.at("tau_mem", where);
    lam_v_.setZero(p_->units());
    a_.setZero(p_->units());
  }

  void tick(TickVisit<Scalar>& visit, BackwardReport& report) {
    const Params& p = *p_;
    const Index n = p.units();
    const auto un = static_cast<std::uint64_t>(n);
    const Eigen::Map<const Array> v(visit.record, n);
    Array& dy = *visit.dy;
    report.surrogate_pairs += un;
    for (Index m = 0; m < n; ++m) {
      const Scalar g = arctan_surrogate(v[m] - p.theta[m], p.alpha_s);
      if (g == Scalar(0)) ++report.zero_surrogate_pairs;
      a_[m] = lam_v_[m] + dy[m] * g;
      (*dtheta_)(m, 0) -= dy[m] * g;
    }
    const auto a = a_.matrix();
    *db_ += a;
    const TickInput<Scalar>& x = *visit.input;
    for (std::size_t i = 0; i < x.size(); ++i) dW_->col(x.channels[i]) += x.values[i] * a;
    report.backward_macs += un * x.size();
    dy.setZero();
    if (visit.previous_record) {
      const Eigen::Map<const Array> v_prev(visit.previous_record, n);
      dtau_mem_->col(0).array() += a_ * v_prev * dalpha_dtau_;
      for (Index m = 0; m < n; ++m) {
        if (!(v_prev[m] - p.theta[m] > Scalar(0))) continue;  // s_{k-1,m} = 0
        dV_->col(m) += a;
        (*dtheta_)(m, 0) -= a_[m];
        report.backward_macs += un;
      }
      dy = (p.V.transpose() * a).array() - p.theta.array() * a_;
      report.backward_macs += un * un;
    }
    lam_v_ = alpha_ * a_;
  }

  Scalar input_adjoint(Index channel, BackwardReport& report) {
    report.backward_macs += static_cast<std::uint64_t>(p_->units());
    return p_->W.col(channel).dot(a_.matrix());
  }

  bool finite() const { return lam_v_.allFinite() && a_.allFinite(); }

 private:
  std::shared_ptr<const Params> p_;
  Array alpha_;        // every unit's decay exp(-dt / tau_mem)
  Array dalpha_dtau_;  // d alpha / d tau_mem = alpha dt / tau_mem^2, per unit
  Matrix<Scalar>*dW_ = nullptr, *dV_ = nullptr, *db_ = nullptr, *dtheta_ = nullptr;
  Matrix<Scalar>* dtau_mem_ = nullptr;
  Array lam_v_;  // dL/dv_k carried to tick k - 1 (times alpha)
  Array a_;      // dL/dv_k of the last tick visited (for the input adjoints)
};

}  // namespace egret
