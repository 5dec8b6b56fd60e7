// The backward side of the EvNN-convention tick family (models/evnn_egru/evnn_egru_cell.hpp),
// called per tick by models/tick/tick_adjoint.hpp: EvnnEgruEquations::step_adjoint with EvNN's
// pseudo-derivative (docs/adjoint.md section 8). The tick's record holds (z, r, g, q_g, v) and
// h_k; y_{k-1} and h_{k-1} come from the previous tick's. Event-sparse: the kernel gradient only
// for the rows of channels with input, the recurrent-kernel gradient only for the rows of units
// that fired at k - 1, and dL/dy_{k-1} only for units that pass it on (fired, or a nonzero
// pseudo-derivative).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "models/evnn_egru/evnn_egru_equations.hpp"
#include "models/evnn_egru/evnn_egru_params.hpp"
#include "models/tick/tick_adjoint.hpp"

namespace egret {

template <class Scalar>
class EvnnEgruAdjoint {
 public:
  using Params = EvnnEgruParams<Scalar>;
  using Equations = EvnnEgruEquations<Scalar>;
  using Array = typename Equations::Array;
  using ConstMap = typename Equations::ConstMap;

  explicit EvnnEgruAdjoint(std::shared_ptr<const Params> p) : p_(std::move(p)) {}

  void begin(NamedParameters<Scalar>& grad) {
    const std::string w = "evnn_egru adjoint";
    kernel_ = &grad.at("kernel", w);
    recurrent_ = &grad.at("recurrent_kernel", w);
    bias_ = &grad.at("bias", w);
    recurrent_bias_ = &grad.at("recurrent_bias", w);
    thr_ = &grad.at("thr", w);
    const Index n = p_->units();
    rho_h_.setZero(n);
    pre_.setZero(3 * n);
    qbar_.setZero(3 * n);
    finite_ = true;
  }

  void tick(TickVisit<Scalar>& visit, BackwardReport& report) {
    const Index n = p_->units();
    const Scalar* rec = visit.record;
    const Scalar* prev = visit.previous_record;
    h_prev_ = prev ? Array(ConstMap(prev + 5 * n, n)) : Array::Zero(n);
    const typename Equations::ConstStepRecord s{
        {rec, n}, {rec + n, n}, {rec + 2 * n, n}, {rec + 3 * n, n}, {rec + 4 * n, n}};
    Array& dy = *visit.dy;
    const Array y_bar = dy, h_bar = rho_h_;
    Equations::step_adjoint(y_bar, h_bar, nullptr, s, h_prev_.data(), nullptr, p_->thr.array(),
                            p_->dampening, p_->support, thr_->col(0).array(), pre_, qbar_, rho_h_);
    count_surrogate(s.v, report);
    *bias_ += pre_.matrix();
    *recurrent_bias_ += qbar_.matrix();
    const TickInput<Scalar>& x = *visit.input;
    for (std::size_t i = 0; i < x.size(); ++i)
      kernel_->row(x.channels[i]) += x.values[i] * pre_.matrix().transpose();
    report.backward_macs += static_cast<std::uint64_t>(3 * n) * x.size();
    dy.setZero();
    if (prev) recurrent_adjoint(ConstMap(prev + 4 * n, n), dy, report);
    finite_ = pre_.allFinite() && qbar_.allFinite() && rho_h_.allFinite();
  }

  // dL/dx_k[c] of the tick visited last: the kernel row of c against dL/da.
  Scalar input_adjoint(Index c, BackwardReport& report) {
    report.backward_macs += static_cast<std::uint64_t>(pre_.size());
    return p_->kernel.row(c).dot(pre_.matrix().transpose());
  }

  bool finite() const { return finite_; }

 private:
  // Through q = y_{k-1} R + b_r: dR[j, :] += y_{k-1,j} qbar for the units that fired, and
  // dL/dy_{k-1,j} = R[j, :] qbar for those that pass a gradient on.
  void recurrent_adjoint(const ConstMap& v_prev, Array& dy, BackwardReport& report) {
    const Index n = p_->units();
    for (Index j = 0; j < n; ++j) {
      const Scalar v = v_prev[j];
      const bool fired = v > Scalar(0);
      if (!fired && Equations::pseudo_derivative(v, p_->dampening, p_->support) == Scalar(0))
        continue;
      dy[j] = p_->recurrent_kernel.row(j).dot(qbar_.matrix().transpose());
      report.backward_macs += static_cast<std::uint64_t>(3 * n);
      if (fired) {
        recurrent_->row(j) += (v + p_->thr[j]) * qbar_.matrix().transpose();
        report.backward_macs += static_cast<std::uint64_t>(3 * n);
      }
    }
  }

  void count_surrogate(const ConstMap& v, BackwardReport& report) const {
    report.surrogate_pairs += static_cast<std::uint64_t>(v.size());
    for (Index m = 0; m < v.size(); ++m)
      if (Equations::pseudo_derivative(v[m], p_->dampening, p_->support) == Scalar(0))
        ++report.zero_surrogate_pairs;
  }

  std::shared_ptr<const Params> p_;
  Matrix<Scalar>*kernel_ = nullptr, *recurrent_ = nullptr, *bias_ = nullptr,
  *recurrent_bias_ = nullptr, *thr_ = nullptr;
  Array rho_h_;       // dL/dh_k carried from tick k + 1
  Array pre_, qbar_;  // dL/da and dL/dq of the tick visited last
  Array h_prev_;
  bool finite_ = true;
};

}  // namespace egret
