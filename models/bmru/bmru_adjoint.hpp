// The backward side of a BMRU layer (models/bmru/bmru_cell.hpp): BPTT with the arctan surrogate
// f'(u) = 1 / (1 + (alpha_s pi u)^2) for H and 2 f' for S (BMRU paper Eq. 12-13); |.| is
// differentiated exactly (its derivative is S). The layer emits changes d_k = h_k - h_{k-1}, so
// dL/dh_k = lam (carried from tick k + 1) + dL/dd_k, and h_{k-1} gets -dL/dd_k. Per unit:
//   u = |h_hat| - |p_beta|,  g = dL/dh_k (S(h_hat) alpha - h_{k-1}) f'(u)
//   dL/dh_hat = g S(h_hat) + dL/dh_k z alpha 2 f'(h_hat),   dL/dp_beta = -g S(p_beta)
//   dalpha += dL/dh_k z S(h_hat);  carried to k - 1: dL/dh_k (1 - z) - dL/dd_k
// and the weight gradients from x_k (dW_x[:, c] += dL/dh_hat x_c, the same for W_beta).
#pragma once

#include <cstdint>
#include <memory>

#include "models/bmru/bmru_params.hpp"
#include "models/shared/surrogates.hpp"
#include "models/tick/tick_adjoint.hpp"

namespace egret {

template <class Scalar>
class BmruAdjoint {
 public:
  using Params = BmruParams<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;

  explicit BmruAdjoint(std::shared_ptr<const Params> p) : p_(std::move(p)) {}

  void begin(NamedParameters<Scalar>& grad) {
    const std::string where = "bmru adjoint";
    dW_x_ = &grad.at("W_x", where);
    db_x_ = &grad.at("b_x", where);
    dW_beta_ = &grad.at("W_beta", where);
    db_beta_ = &grad.at("b_beta", where);
    dalpha_ = &grad.at("alpha", where);
    const Index n = p_->units();
    carry_.setZero(n);
    a_x_.setZero(n);
    a_beta_.setZero(n);
  }

  void tick(TickVisit<Scalar>& visit, BackwardReport& report) {
    const Params& p = *p_;
    const Index n = p.units();
    const Eigen::Map<const Array> h_hat(visit.record, n), beta_pre(visit.record + n, n);
    Array& dd = *visit.dy;  // dL/d(h_k - h_{k-1}) from the consumers
    report.surrogate_pairs += static_cast<std::uint64_t>(n);
    for (Index m = 0; m < n; ++m) {
      const Scalar h_prev = visit.previous_record ? visit.previous_record[2 * n + m] : Scalar(0);
      const Scalar s = sign_of(h_hat[m]);
      const Scalar u = std::abs(h_hat[m]) - std::abs(beta_pre[m]);
      const Scalar z = u > Scalar(0) ? Scalar(1) : Scalar(0);
      const Scalar fu = arctan_surrogate(u, p.alpha_s);
      if (fu == Scalar(0)) ++report.zero_surrogate_pairs;
      const Scalar dh = carry_[m] + dd[m];
      const Scalar g = dh * (s * p.alpha[m] - h_prev) * fu;
      a_x_[m] = g * s + dh * z * p.alpha[m] * Scalar(2) * arctan_surrogate(h_hat[m], p.alpha_s);
      a_beta_[m] = -g * sign_of(beta_pre[m]);
      (*dalpha_)(m, 0) += dh * z * s;
      carry_[m] = dh * (Scalar(1) - z) - dd[m];
    }
    dd.setZero();
    *db_x_ += a_x_.matrix();
    *db_beta_ += a_beta_.matrix();
    const TickInput<Scalar>& x = *visit.input;
    for (std::size_t i = 0; i < x.size(); ++i) {
      dW_x_->col(x.channels[i]) += x.values[i] * a_x_.matrix();
      dW_beta_->col(x.channels[i]) += x.values[i] * a_beta_.matrix();
    }
    report.backward_macs += 2 * static_cast<std::uint64_t>(n) * x.size();
  }

  Scalar input_adjoint(Index channel, BackwardReport& report) {
    report.backward_macs += 2 * static_cast<std::uint64_t>(p_->units());
    return p_->W_x.col(channel).dot(a_x_.matrix()) + p_->W_beta.col(channel).dot(a_beta_.matrix());
  }

  bool finite() const { return carry_.allFinite() && a_x_.allFinite() && a_beta_.allFinite(); }

 private:
  std::shared_ptr<const Params> p_;
  Matrix<Scalar>*dW_x_ = nullptr, *db_x_ = nullptr, *dW_beta_ = nullptr, *db_beta_ = nullptr;
  Matrix<Scalar>* dalpha_ = nullptr;
  Array carry_;         // dL/dh_{k-1} carried from the tick visited last
  Array a_x_, a_beta_;  // dL/dh_hat_k, dL/d(W_beta x_k + b_beta) of the last tick visited
};

}  // namespace egret
