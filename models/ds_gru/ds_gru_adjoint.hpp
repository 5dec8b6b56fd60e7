// The backward side of a DS-GRU layer (models/ds_gru/ds_gru_cell.hpp): BPTT through Eq. 5-11 (the
// seed's Appendix A.1, Eq. 19, for dL/dh~). With e = dL/dh_k (carried + dL/d(h_k - h_{k-1})):
//   dp_z = e (h^ - h~) z (1 - z),  dp_h = e z (1 - h^^2),  g = U_h^T dp_h,  dp_r = g h~ r (1 - r)
//   G = dL/dh~ = e (1 - z) + r g + U_z^T dp_z + U_r^T dp_r
//   dL/dx~ = W_z^T dp_z + W_r^T dp_r + W_h^T dp_h
//   carried to k - 1: m_h G - dL/d(change)
// The masks: dL/dm_h = h_{k-1} G, dL/dm_x = x_k dL/dx~; the top-k is straight-through (Eq. 16-17:
// every channel's sigmoid passes dL/dm sigma' to its score, the kept ones' forward value
// notwithstanding) or, with straight_through = false, only the kept channels' do. Then
// score = tau (a - mu) gives dtau, dmu and da = tau dscore; a = W_a c + b_a gives dW_a, db_a and
// dc; c = W_proj x_k gives dW_proj and a part of dL/dx_k, whose other part is m_x dL/dx~.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/ds_gru/ds_gru_params.hpp"
#include "models/tick/tick_adjoint.hpp"

namespace egret {

template <class Scalar>
class DsGruAdjoint {
 public:
  using Params = DsGruParams<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;

  explicit DsGruAdjoint(std::shared_ptr<const Params> p) : p_(std::move(p)), layout_(*p_) {}

  void begin(NamedParameters<Scalar>& grad) {
    const std::string where = "ds_gru adjoint";
    for (auto [name, slot] : {std::pair{"W_z", &dW_z_},
                              {"W_r", &dW_r_},
                              {"W_h", &dW_h_},
                              {"U_z", &dU_z_},
                              {"U_r", &dU_r_},
                              {"U_h", &dU_h_},
                              {"b_z", &db_z_},
                              {"b_r", &db_r_},
                              {"b_h", &db_h_},
                              {"W_proj", &dW_proj_},
                              {"W_ah", &dW_ah_},
                              {"b_ah", &db_ah_},
                              {"W_ax", &dW_ax_},
                              {"b_ax", &db_ax_},
                              {"tau_h", &dtau_h_},
                              {"tau_x", &dtau_x_},
                              {"mu_h", &dmu_h_},
                              {"mu_x", &dmu_x_}})
      *slot = &grad.at(name, where);
    const Index n = p_->units(), d = p_->inputs();
    for (Array* v : {&carry_, &upstream_, &dp_z_, &dp_r_, &dp_h_, &reset_back_, &state_adjoint_,
                     &h_prev_, &h_tilde_, &mask_h_, &dlogit_h_})
      v->setZero(n);
    mask_x_.setZero(d);
    x_dense_.setZero(d);
    d_context_.setZero(p_->router_rank());
  }

  void tick(TickVisit<Scalar>& visit, BackwardReport& report) {
    const Index n = p_->units();
    const Scalar* rec = visit.record;
    h_prev_.setZero();
    if (visit.previous_record)
      h_prev_ = Eigen::Map<const Array>(visit.previous_record + layout_.state(), n);
    restore_masks(rec);
    h_tilde_ = mask_h_ * h_prev_;
    const TickInput<Scalar>& x = *visit.input;
    for (std::size_t i = 0; i < x.size(); ++i) x_dense_[x.channels[i]] = x.values[i];
    gru_backward(rec, *visit.dy);
    hidden_router_backward(rec, report);
    input_router_backward(rec, x);
    weight_gradients(rec);
    for (Index ch : x.channels) x_dense_[ch] = Scalar(0);
    const auto un = static_cast<std::uint64_t>(n), ud = static_cast<std::uint64_t>(p_->inputs());
    const auto rank = static_cast<std::uint64_t>(p_->router_rank());
    report.backward_macs += 3 * un * un + 3 * un * (kept_h_.size() + kept_x_.size() + x.size()) +
                            2 * rank * (un + ud) + rank * x.size();
  }

  // dL/dx_k[channel] = m_x dL/dx~ + W_proj^T dc, of the last tick visited.
  Scalar input_adjoint(Index channel, BackwardReport& report) {
    const auto un = static_cast<std::uint64_t>(p_->units());
    report.backward_macs += static_cast<std::uint64_t>(p_->router_rank());
    Scalar d = p_->W_proj.col(channel).dot(d_context_);
    if (mask_x_[channel] != Scalar(0)) {
      report.backward_macs += 3 * un;
      d += mask_x_[channel] * masked_input_adjoint(channel);
    }
    return d;
  }

  bool finite() const {
    return carry_.allFinite() && d_context_.allFinite() && dp_z_.allFinite() && dp_h_.allFinite();
  }

 private:
  // The kept channels (recorded) and their mask values, recomputed from the recorded logits as
  // the forward pass computed them.
  void restore_masks(const Scalar* rec) {
    const Params& p = *p_;
    restore(rec + layout_.kept_h(), layout_.hidden_k, rec + layout_.logits_h(), p.tau_h, p.mu_h,
            kept_h_, mask_h_);
    restore(rec + layout_.kept_x(), layout_.input_k, rec + layout_.logits_x(), p.tau_x, p.mu_x,
            kept_x_, mask_x_);
  }
  void restore(const Scalar* channels, Index k, const Scalar* logits, Scalar tau, Scalar mu,
               std::vector<Index>& kept, Array& mask) const {
    mask.setZero();
    kept.clear();
    for (Index i = 0; i < k; ++i) {
      const auto ch = static_cast<Index>(channels[i]);
      if (ch < 0 || ch >= mask.size())
        throw std::logic_error("ds_gru adjoint: the tape does not match the layer");
      kept.push_back(ch);
      mask[ch] = Params::sigmoid(Params::score(logits[ch], tau, mu));
    }
  }

  // Eq. 6-9 backward: dp_z, dp_r, dp_h, dL/dh~ (state_adjoint_) and the carry to tick k - 1.
  void gru_backward(const Scalar* rec, Array& dd) {
    const Params& p = *p_;
    const Index n = p.units();
    const Eigen::Map<const Array> z(rec + layout_.update_gate(), n),
        h_hat(rec + layout_.candidate(), n), r(rec + layout_.reset_gate(), n);
    Array& e = upstream_;
    e = carry_ + dd;
    dp_z_ = e * (h_hat - h_tilde_) * z * (Scalar(1) - z);
    dp_h_ = e * z * (Scalar(1) - h_hat * h_hat);
    reset_back_.matrix().noalias() = p.U_h.transpose() * dp_h_.matrix();
    dp_r_ = reset_back_ * h_tilde_ * r * (Scalar(1) - r);
    state_adjoint_ = e * (Scalar(1) - z) + r * reset_back_;
    state_adjoint_.matrix().noalias() += p.U_z.transpose() * dp_z_.matrix();
    state_adjoint_.matrix().noalias() += p.U_r.transpose() * dp_r_.matrix();
    carry_ = mask_h_ * state_adjoint_ - dd;
    dd.setZero();
  }

  // dL/dm_h = h_{k-1} G through the mask's sigmoid to a_h, tau_h, mu_h; then W_ah, b_ah and the
  // hidden part of dc.
  void hidden_router_backward(const Scalar* rec, BackwardReport& report) {
    const Params& p = *p_;
    const Index n = p.units();
    const Scalar* logits = rec + layout_.logits_h();
    dlogit_h_.setZero();
    report.surrogate_pairs += static_cast<std::uint64_t>(n);
    std::uint64_t passing = 0;
    const auto differentiate = [&](Index j) {
      const Scalar slope = sigmoid_slope(logits[j], p.tau_h, p.mu_h);
      passing += slope != Scalar(0);
      const Scalar ds = h_prev_[j] * state_adjoint_[j] * slope;
      (*dtau_h_)(0, 0) += ds * (logits[j] - p.mu_h);
      (*dmu_h_)(0, 0) -= ds * p.tau_h;
      dlogit_h_[j] = ds * p.tau_h;
    };
    if (p.straight_through) {
      for (Index j = 0; j < n; ++j) differentiate(j);
    } else {
      for (Index j : kept_h_) differentiate(j);
    }
    report.zero_surrogate_pairs += static_cast<std::uint64_t>(n) - passing;
    const Eigen::Map<const Vector<Scalar>> context(rec + layout_.context(), p.router_rank());
    dW_ah_->noalias() += dlogit_h_.matrix() * context.transpose();
    *db_ah_ += dlogit_h_.matrix();
    d_context_.noalias() = p.W_ah.transpose() * dlogit_h_.matrix();
  }

  // dL/dm_x = x_k dL/dx~ at the nonzero input channels (kept ones, or all if straight-through),
  // through the sigmoid to a_x, tau_x, mu_x; then W_ax, b_ax, the input part of dc, and W_proj.
  void input_router_backward(const Scalar* rec, const TickInput<Scalar>& x) {
    const Params& p = *p_;
    const Scalar* logits = rec + layout_.logits_x();
    const Eigen::Map<const Vector<Scalar>> context(rec + layout_.context(), p.router_rank());
    const auto differentiate = [&](Index i) {
      const Scalar ds =
          x_dense_[i] * masked_input_adjoint(i) * sigmoid_slope(logits[i], p.tau_x, p.mu_x);
      (*dtau_x_)(0, 0) += ds * (logits[i] - p.mu_x);
      (*dmu_x_)(0, 0) -= ds * p.tau_x;
      const Scalar dlogit = ds * p.tau_x;
      dW_ax_->row(i) += dlogit * context.transpose();
      (*db_ax_)(i, 0) += dlogit;
      d_context_ += dlogit * p.W_ax.row(i).transpose();
    };
    if (p.straight_through) {
      for (Index i : x.channels) differentiate(i);
    } else {
      for (Index i : kept_x_)
        if (x_dense_[i] != Scalar(0)) differentiate(i);
    }
    for (std::size_t i = 0; i < x.size(); ++i)
      dW_proj_->col(x.channels[i]) += x.values[i] * d_context_;
  }

  // The GRU's weights, from the kept columns: x~ at kept nonzero channels, h~ at kept units.
  void weight_gradients(const Scalar* rec) {
    const Index n = p_->units();
    const Eigen::Map<const Array> r(rec + layout_.reset_gate(), n);
    for (Index i : kept_x_) {
      const Scalar x_masked = mask_x_[i] * x_dense_[i];
      if (x_masked == Scalar(0)) continue;
      dW_z_->col(i) += x_masked * dp_z_.matrix();
      dW_r_->col(i) += x_masked * dp_r_.matrix();
      dW_h_->col(i) += x_masked * dp_h_.matrix();
    }
    for (Index j : kept_h_) {
      if (h_tilde_[j] == Scalar(0)) continue;
      dU_z_->col(j) += h_tilde_[j] * dp_z_.matrix();
      dU_r_->col(j) += h_tilde_[j] * dp_r_.matrix();
      dU_h_->col(j) += r[j] * h_tilde_[j] * dp_h_.matrix();
    }
    *db_z_ += dp_z_.matrix();
    *db_r_ += dp_r_.matrix();
    *db_h_ += dp_h_.matrix();
  }

  // dL/dx~[channel] = (W_z^T dp_z + W_r^T dp_r + W_h^T dp_h)[channel].
  Scalar masked_input_adjoint(Index channel) const {
    return p_->W_z.col(channel).dot(dp_z_.matrix()) + p_->W_r.col(channel).dot(dp_r_.matrix()) +
           p_->W_h.col(channel).dot(dp_h_.matrix());
  }

  // d sigmoid(score) / d score, score = tau (a - mu).
  static Scalar sigmoid_slope(Scalar logit, Scalar tau, Scalar mu) {
    const Scalar s = Params::sigmoid(Params::score(logit, tau, mu));
    return s * (Scalar(1) - s);
  }

  std::shared_ptr<const Params> p_;
  DsGruRecordLayout layout_;
  Matrix<Scalar>*dW_z_ = nullptr, *dW_r_ = nullptr, *dW_h_ = nullptr;
  Matrix<Scalar>*dU_z_ = nullptr, *dU_r_ = nullptr, *dU_h_ = nullptr;
  Matrix<Scalar>*db_z_ = nullptr, *db_r_ = nullptr, *db_h_ = nullptr;
  Matrix<Scalar>*dW_proj_ = nullptr, *dW_ah_ = nullptr, *db_ah_ = nullptr, *dW_ax_ = nullptr,
  *db_ax_ = nullptr;
  Matrix<Scalar>*dtau_h_ = nullptr, *dtau_x_ = nullptr, *dmu_h_ = nullptr, *dmu_x_ = nullptr;
  Array carry_;                       // dL/dh_{k-1} carried from the tick visited last
  Array upstream_;                    // e = dL/dh_k of the tick being visited
  Array dp_z_, dp_r_, dp_h_;          // of the last tick visited
  Array reset_back_, state_adjoint_;  // U_h^T dp_h, and G = dL/dh~
  Array h_prev_, h_tilde_, mask_h_, dlogit_h_;
  Array mask_x_;              // m_x of the last tick visited (input_adjoint)
  Array x_dense_;             // x_k during a tick, zero between
  Vector<Scalar> d_context_;  // dL/dc of the last tick visited
  std::vector<Index> kept_h_, kept_x_;
};

}  // namespace egret
