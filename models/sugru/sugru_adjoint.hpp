// The backward side of a selective-update GRU layer (models/sugru/sugru_cell.hpp): BPTT with the
// sigmoid-derivative straight-through surrogate for the gate. With dh = dL/dh_k (carried +
// dL/d(h_k - h_{k-1})) and q = V_n h_{k-1}:
//   df = dh g;  dn = df (1 - z);  dz = df (h_{k-1} - n)
//   dp_n = dn (1 - n^2);  dr = dp_n q;  dq = dp_n r
//   dp_r = dr r (1 - r);  dp_z = dz z (1 - z)
//   da = dh (f - h_{k-1}) beta s (1 - s)
//   carried to k - 1: dh (1 - g) + df z + V_r^T dp_r + V_z^T dp_z + V_n^T dq - dL/d(change)
//   dW_X[:, c] += dp_X x_c,  db_X += dp_X,  dV_r += dp_r h^T, dV_z += dp_z h^T, dV_n += dq h^T
// All of dp_r, dp_z, dp_n, dq are zero for closed units.
#pragma once

#include <cstdint>
#include <memory>

#include "models/shared/surrogates.hpp"
#include "models/sugru/sugru_params.hpp"
#include "models/tick/tick_adjoint.hpp"

namespace egret {

template <class Scalar>
class SugruAdjoint {
 public:
  using Params = SugruParams<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;

  explicit SugruAdjoint(std::shared_ptr<const Params> p) : p_(std::move(p)) {}

  void begin(NamedParameters<Scalar>& grad) {
    const std::string w = "sugru adjoint";
    for (auto [name, slot] : {std::pair{"W_r", &dW_r_},
                              {"W_z", &dW_z_},
                              {"W_n", &dW_n_},
                              {"V_r", &dV_r_},
                              {"V_z", &dV_z_},
                              {"V_n", &dV_n_},
                              {"b_r", &db_r_},
                              {"b_z", &db_z_},
                              {"b_n", &db_n_},
                              {"g_b", &dg_b_},
                              {"g_alpha", &dg_alpha_},
                              {"g_phi", &dg_phi_},
                              {"g_omega", &dg_omega_}})
      *slot = &grad.at(name, w);
    const Index n = p_->units();
    for (Array* v : {&carry_, &dp_r_, &dp_z_, &dp_n_, &dq_, &da_}) v->setZero(n);
  }

  void tick(TickVisit<Scalar>& visit, BackwardReport& report) {
    const Params& p = *p_;
    const Index n = p.units();
    const auto un = static_cast<std::uint64_t>(n);
    const Scalar* rec = visit.record;
    const Eigen::Map<const Array> a(rec, n), r(rec + n, n), z(rec + 2 * n, n), nn(rec + 3 * n, n),
        q(rec + 4 * n, n);
    h_prev_.setZero(n);
    if (visit.previous_record) h_prev_ = Eigen::Map<const Array>(visit.previous_record + 5 * n, n);
    Array& dd = *visit.dy;
    report.surrogate_pairs += un;
    std::uint64_t open = 0;
    for (Index m = 0; m < n; ++m) {
      const Scalar g = a[m] > Scalar(0) ? Scalar(1) : Scalar(0);
      open += a[m] > Scalar(0);
      const Scalar dh = carry_[m] + dd[m];
      const Scalar f = (Scalar(1) - z[m]) * nn[m] + z[m] * h_prev_[m];
      const Scalar s = sigmoid_surrogate(a[m], p.slope);
      if (s == Scalar(0)) ++report.zero_surrogate_pairs;
      da_[m] = dh * (f - h_prev_[m]) * s;
      const Scalar df = dh * g;
      dp_n_[m] = df * (Scalar(1) - z[m]) * (Scalar(1) - nn[m] * nn[m]);
      dp_r_[m] = dp_n_[m] * q[m] * r[m] * (Scalar(1) - r[m]);
      dp_z_[m] = df * (h_prev_[m] - nn[m]) * z[m] * (Scalar(1) - z[m]);
      dq_[m] = dp_n_[m] * r[m];
      carry_[m] = dh * (Scalar(1) - g) + df * z[m] - dd[m];
    }
    dd.setZero();
    carry_.matrix().noalias() += p.V_r.transpose() * dp_r_.matrix();
    carry_.matrix().noalias() += p.V_z.transpose() * dp_z_.matrix();
    carry_.matrix().noalias() += p.V_n.transpose() * dq_.matrix();
    dV_r_->noalias() += dp_r_.matrix() * h_prev_.matrix().transpose();
    dV_z_->noalias() += dp_z_.matrix() * h_prev_.matrix().transpose();
    dV_n_->noalias() += dq_.matrix() * h_prev_.matrix().transpose();
    *db_r_ += dp_r_.matrix();
    *db_z_ += dp_z_.matrix();
    *db_n_ += dp_n_.matrix();
    const TickInput<Scalar>& x = *visit.input;
    for (std::size_t i = 0; i < x.size(); ++i) {
      dW_r_->col(x.channels[i]) += x.values[i] * dp_r_.matrix();
      dW_z_->col(x.channels[i]) += x.values[i] * dp_z_.matrix();
      dW_n_->col(x.channels[i]) += x.values[i] * dp_n_.matrix();
    }
    p.gate.add_gradient(x.time, da_, *dg_b_, *dg_alpha_, *dg_phi_, *dg_omega_);
    report.backward_macs += open * 3 * (2 * un + x.size());
  }

  Scalar input_adjoint(Index channel, BackwardReport& report) {
    report.backward_macs += 3 * static_cast<std::uint64_t>(p_->units());
    return p_->W_r.col(channel).dot(dp_r_.matrix()) + p_->W_z.col(channel).dot(dp_z_.matrix()) +
           p_->W_n.col(channel).dot(dp_n_.matrix());
  }

  bool finite() const { return carry_.allFinite() && da_.allFinite() && dp_n_.allFinite(); }

 private:
  std::shared_ptr<const Params> p_;
  Matrix<Scalar>*dW_r_ = nullptr, *dW_z_ = nullptr, *dW_n_ = nullptr;
  Matrix<Scalar>*dV_r_ = nullptr, *dV_z_ = nullptr, *dV_n_ = nullptr;
  Matrix<Scalar>*db_r_ = nullptr, *db_z_ = nullptr, *db_n_ = nullptr;
  Matrix<Scalar>*dg_b_ = nullptr, *dg_alpha_ = nullptr, *dg_phi_ = nullptr, *dg_omega_ = nullptr;
  Array carry_;                         // dL/dh_{k-1} carried from the tick visited last
  Array dp_r_, dp_z_, dp_n_, dq_, da_;  // of the last tick visited
  Array h_prev_;
};

}  // namespace egret
