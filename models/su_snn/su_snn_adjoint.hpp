// The backward side of a selective-update spiking layer (models/su_snn/su_snn_cell.hpp): BPTT with
// the arctan surrogate sq = 1 / (1 + (alpha_s pi q)^2) for the spike H(q), q = u - theta, and the
// sigmoid-derivative straight-through surrogate sg = beta s (1 - s), s = sigmoid(beta a), for
// the gate H(a). Per tick k, with lam = dL/du_k carried from tick k + 1, dy = dL/ds_k and the
// previous tick's u_{k-1} (zero before tick 1), qp = u_{k-1} - theta, sp = sq(qp):
//   U = lam + dy g sq                        (dL/du_k)
//   A = U g                                  (dL/dubar_k)
//   da = (dy H(q) + U (ubar_k - u_{k-1})) sg
//   dtheta -= dy g sq + A H(qp) - A theta sp (the spike, and the owed reset theta H(qp))
//   db += A;  dW[:, c] += A x_c;  dV[:, j] += A (s_{k-1,j} = 1)
//   dtau_mem += A u_{k-1} alpha dt / tau_mem^2     (alpha, tau_mem per unit: elementwise)
//   lam <- U (1 - g) + A (alpha - theta sp);  dL/ds_{k-1} = V^T A
// A is zero for closed units: their rows of W and V get no gradient at this tick.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/shared/surrogates.hpp"
#include "models/su_snn/su_snn_params.hpp"
#include "models/tick/tick_adjoint.hpp"

namespace egret {

template <class Scalar>
class SuSnnAdjoint {
 public:
  using Params = SuSnnParams<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;

  explicit SuSnnAdjoint(std::shared_ptr<const Params> p)
      : p_(std::move(p)), alpha_(p_->decay()), dalpha_dtau_(p_->decay_derivative(alpha_)) {}

  void begin(NamedParameters<Scalar>& grad) {
    const std::string where = "su_snn adjoint";
    dW_ = &grad.at("W", where);
    dV_ = &grad.at("V", where);
    db_ = &grad.at("b", where);
    dtheta_ = &grad.at("theta", where);
    dtau_mem_ = &grad.at("tau_mem", where);
    dg_b_ = &grad.at("g_b", where);
    dg_alpha_ = &grad.at("g_alpha", where);
    dg_phi_ = &grad.at("g_phi", where);
    dg_omega_ = &grad.at("g_omega", where);
    const Index n = p_->units();
    lam_.setZero(n);
    A_.setZero(n);
    da_.setZero(n);
  }

  void tick(TickVisit<Scalar>& visit, BackwardReport& report) {
    const Params& p = *p_;
    const Index n = p.units();
    const auto un = static_cast<std::uint64_t>(n);
    previous(visit);
    unit_adjoints(visit, report);
    const auto A = A_.matrix();
    *db_ += A;
    const TickInput<Scalar>& x = *visit.input;
    for (std::size_t i = 0; i < x.size(); ++i) dW_->col(x.channels[i]) += x.values[i] * A;
    report.backward_macs += un * x.size();
    dtau_mem_->col(0).array() += A_ * u_prev_ * dalpha_dtau_;
    for (Index j = 0; j < n; ++j) {
      if (!s_prev_[j]) continue;
      dV_->col(j) += A;
      report.backward_macs += un;
    }
    p.gate.add_gradient(x.time, da_, *dg_b_, *dg_alpha_, *dg_phi_, *dg_omega_);
    Array& dy = *visit.dy;
    dy.setZero();
    if (visit.previous_record) {
      dy = (p.V.transpose() * A).array();
      report.backward_macs += un * un;
    }
  }

  Scalar input_adjoint(Index channel, BackwardReport& report) {
    report.backward_macs += static_cast<std::uint64_t>(p_->units());
    return p_->W.col(channel).dot(A_.matrix());
  }

  bool finite() const { return lam_.allFinite() && A_.allFinite() && da_.allFinite(); }

 private:
  // u_{k-1} and s_{k-1} = g_{k-1} H(u_{k-1} - theta) from the previous tick's record.
  void previous(const TickVisit<Scalar>& visit) {
    const Params& p = *p_;
    const Index n = p.units();
    u_prev_.setZero(n);
    s_prev_.assign(static_cast<std::size_t>(n), false);
    if (!visit.previous_record) return;
    const Eigen::Map<const Array> a(visit.previous_record, n), u(visit.previous_record + 2 * n, n);
    u_prev_ = u;
    for (Index j = 0; j < n; ++j)
      s_prev_[static_cast<std::size_t>(j)] = a[j] > Scalar(0) && u[j] - p.theta[j] > Scalar(0);
  }

  // A = dL/dubar_k, da = dL/da_k, the thresholds' gradient and lam carried to tick k - 1.
  void unit_adjoints(const TickVisit<Scalar>& visit, BackwardReport& report) {
    const Params& p = *p_;
    const Index n = p.units();
    const Eigen::Map<const Array> a(visit.record, n), ubar(visit.record + n, n),
        u(visit.record + 2 * n, n);
    const Array& dy = *visit.dy;
    report.surrogate_pairs += static_cast<std::uint64_t>(n);
    for (Index m = 0; m < n; ++m) {
      const Scalar theta = p.theta[m];
      const bool open = a[m] > Scalar(0), over = u[m] - theta > Scalar(0);
      const Scalar g = open ? Scalar(1) : Scalar(0), spike = over ? Scalar(1) : Scalar(0);
      const Scalar sq = arctan_surrogate(u[m] - theta, p.alpha_s);
      const Scalar sg = sigmoid_surrogate(a[m], p.slope);
      if (!over && (!open || sq == Scalar(0))) ++report.zero_surrogate_pairs;
      const Scalar qp = u_prev_[m] - theta;
      const Scalar sp = arctan_surrogate(qp, p.alpha_s);
      const Scalar owed = qp > Scalar(0) ? Scalar(1) : Scalar(0);
      const Scalar U = lam_[m] + dy[m] * g * sq;
      A_[m] = U * g;
      da_[m] = (dy[m] * spike + U * (ubar[m] - u_prev_[m])) * sg;
      (*dtheta_)(m, 0) -= dy[m] * g * sq + A_[m] * owed - A_[m] * theta * sp;
      lam_[m] = U * (Scalar(1) - g) + A_[m] * (alpha_[m] - theta * sp);
    }
  }

  std::shared_ptr<const Params> p_;
  Array alpha_;        // every unit's decay exp(-dt / tau_mem)
  Array dalpha_dtau_;  // d alpha / d tau_mem = alpha dt / tau_mem^2, per unit
  Matrix<Scalar>*dW_ = nullptr, *dV_ = nullptr, *db_ = nullptr, *dtheta_ = nullptr;
  Matrix<Scalar>* dtau_mem_ = nullptr;
  Matrix<Scalar>*dg_b_ = nullptr, *dg_alpha_ = nullptr, *dg_phi_ = nullptr, *dg_omega_ = nullptr;
  Array lam_;  // dL/du_k carried to tick k - 1
  Array A_;    // dL/dubar_k of the last tick visited (for the input adjoints)
  Array da_;   // dL/da_k of the last tick visited
  Array u_prev_;
  std::vector<bool> s_prev_;
};

}  // namespace egret
