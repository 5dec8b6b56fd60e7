// The backward side of the toy family (toy_cell.hpp). Its equations are linear, so the gradient
// is exact. Per tick k, with lam = dL/dh_k carried from tick k + 1 (alpha lam_{k+1}) and dy the
// consumers' dL/dy_k (y_k = h_k):
//   a = lam + dy;  db += a;  dW[:, c] += a x_c;  dtau += (a . h_{k-1}) alpha dt / tau^2;
//   lam <- alpha a;  dL/dx_k[c] = W[:, c] . a
#pragma once

#include <cstdint>
#include <memory>

#include "models/tick/tick_adjoint.hpp"
#include "toy_params.hpp"

namespace egret {

template <class Scalar>
class ToyAdjoint {
 public:
  using Params = ToyParams<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;

  explicit ToyAdjoint(std::shared_ptr<const Params> p) : p_(std::move(p)) {}

  void begin(NamedParameters<Scalar>& grad) {
    const std::string where = "toy adjoint";
    dW_ = &grad.at("W", where);
    db_ = &grad.at("b", where);
    dtau_ = &grad.at("tau", where);
    lam_.setZero(p_->units());
    a_.setZero(p_->units());
  }

  void tick(TickVisit<Scalar>& visit, BackwardReport& report) {
    const Params& p = *p_;
    const Index n = p.units();
    Array& dy = *visit.dy;
    a_ = lam_ + dy;
    *db_ += a_.matrix();
    const TickInput<Scalar>& x = *visit.input;
    for (std::size_t i = 0; i < x.size(); ++i) dW_->col(x.channels[i]) += x.values[i] * a_.matrix();
    report.backward_macs += static_cast<std::uint64_t>(n) * x.size();
    if (visit.previous_record) {
      const Eigen::Map<const Array> h_prev(visit.previous_record, n);
      (*dtau_)(0, 0) += (a_ * h_prev).sum() * p.decay() * p.dt / (p.tau * p.tau);
    }
    dy.setZero();  // the recurrence runs through h, carried in lam
    lam_ = p.decay() * a_;
  }

  Scalar input_adjoint(Index channel, BackwardReport& report) {
    report.backward_macs += static_cast<std::uint64_t>(p_->units());
    return p_->W.col(channel).dot(a_.matrix());
  }

  bool finite() const { return lam_.allFinite() && a_.allFinite(); }

 private:
  std::shared_ptr<const Params> p_;
  Matrix<Scalar>*dW_ = nullptr, *db_ = nullptr, *dtau_ = nullptr;
  Array lam_, a_;
};

}  // namespace egret
