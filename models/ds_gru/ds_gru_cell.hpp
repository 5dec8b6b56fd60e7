// The physics of a dynamic-sparse GRU layer (DS-GRU, DS-RNN paper Eq. 5-11) on the tick schedule.
// Per tick k, a router reads x_k and keeps hidden_k hidden units and input_k input channels:
//   c = W_proj x_k,  a_h = W_ah c + b_ah,  a_x = W_ax c + b_ax                          (Eq. 10)
//   m_h = top-k(sigmoid(tau_h (a_h - mu_h))),  m_x = top-k(sigmoid(tau_x (a_x - mu_x)))   (Eq. 11)
//   h~ = m_h h_{k-1},  x~ = m_x x_k                                                       (Eq. 5)
//   z = sigmoid(W_z x~ + U_z h~ + b_z),  r = sigmoid(W_r x~ + U_r h~ + b_r)              (Eq. 6-7)
//   h^ = tanh(W_h x~ + U_h (r h~) + b_h),  h_k = (1 - z) h~ + z h^                       (Eq. 8-9)
// top-k keeps the sigmoid at the k best-ranked channels and zeroes the rest (keep_top_k). Event-
// sparse work: only the kept columns of W_X and U_X are read (a dropped channel or a zero value
// is skipped, not multiplied by zero), and r only for the kept units (its other rows multiply
// h~ = 0). Delta semantics: a unit emits h_k - h_{k-1} when its state changed. While a tape is
// recorded r is computed for every unit: the straight-through gradient of a dropped unit's mask
// needs it (models/ds_gru/ds_gru_adjoint.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <vector>

#include "models/ds_gru/ds_gru_adjoint.hpp"
#include "models/ds_gru/ds_gru_params.hpp"
#include "models/shared/gate_functions.hpp"
#include "models/shared/synapse_counting.hpp"
#include "models/tick/input_drive.hpp"
#include "models/tick/sparse_columns.hpp"
#include "models/tick/tick_step.hpp"

namespace egret {

// The k channels of highest score, in ascending channel order. Ties go to the lower channel, and
// a NaN score ranks below every number, so the order is strict and the choice deterministic.
template <class Scores>
void keep_top_k(const Scores& score, Index k, std::vector<Index>& kept) {
  kept.resize(static_cast<std::size_t>(score.size()));
  std::iota(kept.begin(), kept.end(), Index(0));
  const auto ranks_higher = [&score](Index a, Index b) {
    const bool a_nan = std::isnan(score[a]), b_nan = std::isnan(score[b]);
    if (a_nan != b_nan) return b_nan;
    if (!a_nan && score[a] != score[b]) return score[a] > score[b];
    return a < b;
  };
  if (k < score.size()) {
    std::nth_element(kept.begin(), kept.begin() + k, kept.end(), ranks_higher);
    kept.resize(static_cast<std::size_t>(k));
  }
  std::sort(kept.begin(), kept.end());
}

template <class Scalar>
class DsGruCell {
 public:
  using Params = DsGruParams<Scalar>;
  using Adjoint = DsGruAdjoint<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  static constexpr const char* kType = "ds_gru";
  static constexpr bool kHeldOutput = true;  // events are changes of h

  explicit DsGruCell(std::shared_ptr<const Params> p)
      : p_(std::move(p)),
        layout_(*p_),
        W_z_(p_->W_z),
        W_r_(p_->W_r),
        W_h_(p_->W_h),
        U_z_(p_->U_z),
        U_r_(p_->U_r),
        U_h_(p_->U_h),
        W_proj_(p_->W_proj),
        W_ah_(p_->W_ah),
        W_ax_(p_->W_ax) {
    const Index n = p_->units(), d = p_->inputs();
    for (Array* v : {&h_, &h_tilde_, &z_, &r_, &h_hat_, &mask_h_, &reset_pre_}) v->resize(n);
    for (Vector<Scalar>* v : {&logits_h_, &pre_z_, &pre_h_}) v->resize(n);
    logits_x_.resize(d);
    mask_x_.resize(d);
    score_.resize(std::max(n, d));
    context_.resize(p_->router_rank());
    x_dense_.setZero(d);
  }

  void reset() {
    for (Array* v : {&h_, &h_tilde_, &z_, &r_, &h_hat_, &mask_h_}) v->setZero();
    for (Vector<Scalar>* v : {&logits_h_, &logits_x_, &pre_z_, &pre_h_, &context_}) v->setZero();
    mask_x_.setZero();
    kept_h_.clear();
    kept_x_.clear();
    projection_.reset(p_->router_rank());
  }

  void step(const TickInput<Scalar>& x, TickOutput<Scalar>& out) {
    const Scalar* x_now = input_values(x);
    route(x);
    mask_input(x_now);
    mask_state();
    update_gates(out.recording());
    count_operations(x, out.counts());
    emit(out);
    if (!x.held)
      for (Index ch : x.channels) x_dense_[ch] = Scalar(0);
  }

  std::size_t record_size() const { return layout_.size(); }
  void record(std::vector<Scalar>& tape) const {
    append(tape, logits_h_);
    append(tape, logits_x_);
    for (const std::vector<Index>* kept : {&kept_h_, &kept_x_})
      for (Index ch : *kept) tape.push_back(channel_as_scalar<Scalar>(ch, kType));
    for (const Array* v : {&z_, &h_hat_, &r_}) append(tape, *v);
    append(tape, context_);
    append(tape, h_);
  }

  // Dense: the router (W_proj x_k, W_ah c, W_ax c), the gates' W_X x_k and U_X h_{k-1} in full,
  // the masks' products (D + N) and the GRU's three element-wise gate products per unit; a
  // unit's state is h.
  DenseCost dense_cost() const {
    const Params& p = *p_;
    const auto n = static_cast<std::uint64_t>(p.units()),
               d = static_cast<std::uint64_t>(p.inputs());
    const std::uint64_t router = dense_pairs(p.W_proj) + dense_pairs(p.W_ah) + dense_pairs(p.W_ax);
    return {router + 3 * (dense_pairs(p.W_z) + dense_pairs(p.U_z)) + d + n + 3 * n, 1};
  }

  LayerState<Scalar> state() const {
    auto vec = [](const auto& v) { return std::vector<Scalar>(v.data(), v.data() + v.size()); };
    LayerState<Scalar> s;
    s.variables = {{"h", vec(h_)},
                   {"h_hat", vec(h_hat_)},
                   {"z", vec(z_)},
                   {"m_h", vec(mask_h_)},
                   {"m_x", vec(mask_x_)}};
    return s;
  }

 private:
  template <class V>
  static void append(std::vector<Scalar>& tape, const V& v) {
    tape.insert(tape.end(), v.data(), v.data() + v.size());
  }

  // x_k at every channel: held inputs keep it; an impulse bin is spread into x_dense_ (cleared
  // after the step).
  const Scalar* input_values(const TickInput<Scalar>& x) {
    if (x.held) return x.held_values->data();
    for (std::size_t i = 0; i < x.size(); ++i) x_dense_[x.channels[i]] = x.values[i];
    return x_dense_.data();
  }

  // Eq. 10-11: the router's logits from x_k, the kept channels and their mask values.
  void route(const TickInput<Scalar>& x) {
    const Params& p = *p_;
    context_.setZero();
    projection_.add_to(context_, p.W_proj, x);
    logits_h_ = p.b_ah;
    logits_h_.noalias() += p.W_ah * context_;
    logits_x_ = p.b_ax;
    logits_x_.noalias() += p.W_ax * context_;
    keep_channels(logits_h_, p.tau_h, p.mu_h, p.hidden_k, kept_h_, mask_h_);
    keep_channels(logits_x_, p.tau_x, p.mu_x, p.input_k, kept_x_, mask_x_);
  }

  // The k channels of highest score tau (a - mu), and the mask: sigmoid(score) there, 0 elsewhere.
  void keep_channels(const Vector<Scalar>& logits, Scalar tau, Scalar mu, Index k,
                     std::vector<Index>& kept, Array& mask) {
    const Index count = logits.size();
    auto score = score_.head(count);
    for (Index i = 0; i < count; ++i) score[i] = Params::score(logits[i], tau, mu);
    keep_top_k(score, k, kept);
    mask.setZero();
    for (Index i : kept) mask[i] = Params::sigmoid(score[i]);
  }

  // x~ at the kept channels with a nonzero value.
  void mask_input(const Scalar* x_now) {
    x_channels_.clear();
    x_masked_.clear();
    for (Index i : kept_x_) {
      if (x_now[i] == Scalar(0)) continue;
      x_channels_.push_back(i);
      x_masked_.push_back(mask_x_[i] * x_now[i]);
    }
  }

  // h~ (zero at dropped units), and its nonzero entries as a list.
  void mask_state() {
    h_tilde_.setZero();
    h_units_.clear();
    h_masked_.clear();
    for (Index j : kept_h_) {
      h_tilde_[j] = mask_h_[j] * h_[j];
      if (h_tilde_[j] == Scalar(0)) continue;
      h_units_.push_back(j);
      h_masked_.push_back(h_tilde_[j]);
    }
  }

  // Eq. 6-8 from the kept columns only.
  void update_gates(bool recording) {
    const Params& p = *p_;
    pre_z_ = p.b_z;
    add_scaled_columns(pre_z_, p.W_z, x_channels_, x_masked_);
    add_scaled_columns(pre_z_, p.U_z, h_units_, h_masked_);
    vector_logistic(pre_z_.data(), z_.data(), p.units());
    reset_gates(recording);
    reset_masked_.clear();
    for (std::size_t i = 0; i < h_units_.size(); ++i)
      reset_masked_.push_back(r_[h_units_[i]] * h_masked_[i]);
    pre_h_ = p.b_h;
    add_scaled_columns(pre_h_, p.W_h, x_channels_, x_masked_);
    add_scaled_columns(pre_h_, p.U_h, h_units_, reset_masked_);
    vector_tanh(pre_h_.data(), h_hat_.data(), p.units());
  }

  // r of every unit (with a tape) or of the units with h~ != 0 (without; the others' r multiplies
  // nothing): each one's sum over the kept columns of its row, then their logistic together
  // (vectorised, position-independent: models/shared/gate_functions.hpp), so that a run with or
  // without a tape gets the same r.
  void reset_gates(bool recording) {
    const Index n = recording ? p_->units() : static_cast<Index>(h_units_.size());
    for (Index i = 0; i < n; ++i)
      reset_pre_[i] = reset_sum(recording ? i : h_units_[static_cast<std::size_t>(i)]);
    vector_logistic(reset_pre_.data(), reset_pre_.data(), n);
    for (Index i = 0; i < n; ++i)
      r_[recording ? i : h_units_[static_cast<std::size_t>(i)]] = reset_pre_[i];
  }

  // W_r x~ + U_r h~ + b_r of unit m, from the kept columns of its row.
  Scalar reset_sum(Index m) const {
    const Params& p = *p_;
    Scalar pre = p.b_r[m];
    for (std::size_t i = 0; i < x_channels_.size(); ++i)
      pre += p.W_r(m, x_channels_[i]) * x_masked_[i];
    for (std::size_t i = 0; i < h_units_.size(); ++i) pre += p.U_r(m, h_units_[i]) * h_masked_[i];
    return pre;
  }

  // What the routed step multiplies (docs/metrics.md), with or without a tape: the router, the
  // kept nonzero columns of W_X and U_X (r only for the units with h~ != 0, whose r it needs),
  // the masks' products, and the GRU's gate products (r h~, (1 - z) h~, z h^).
  void count_operations(const TickInput<Scalar>& x, OperationCounts& ops) const {
    const Params& p = *p_;
    W_proj_.count_columns(ops, x.channels, x.values);
    const OperandSplit context =
        OperandSplit::of(context_, static_cast<std::size_t>(context_.size()));
    W_ah_.count_all_rows(ops, context_, context);
    W_ax_.count_all_rows(ops, context_, context);
    for (const WeightPattern<Scalar>* W : {&W_z_, &W_h_})
      W->count_columns(ops, x_channels_, x_masked_);
    U_z_.count_columns(ops, h_units_, h_masked_);
    U_h_.count_columns(ops, h_units_, reset_masked_);
    const OperandSplit xs = OperandSplit::of(x_masked_, x_masked_.size());
    const OperandSplit hs = OperandSplit::of(h_masked_, h_masked_.size());
    for (Index j : h_units_) {
      W_r_.count_row(ops, j, x_channels_, x_masked_, xs);
      U_r_.count_row(ops, j, h_units_, h_masked_, hs);
    }
    const Scalar* x_now = x.held ? x.held_values->data() : x_dense_.data();
    for (Index i : kept_x_) count_product(ops, mask_x_[i], x_now[i]);
    for (Index j : kept_h_) count_product(ops, mask_h_[j], h_[j]);
    for (std::size_t i = 0; i < h_units_.size(); ++i) {
      count_product(ops, r_[h_units_[i]], h_masked_[i]);
      count_product(ops, Scalar(1) - z_[h_units_[i]], h_masked_[i]);
    }
    for (Index m = 0; m < p.units(); ++m) count_product(ops, z_[m], h_hat_[m]);
  }

  // Eq. 9, and the changes of h as events.
  void emit(TickOutput<Scalar>& out) {
    for (Index m = 0; m < p_->units(); ++m) {
      const Scalar h = (Scalar(1) - z_[m]) * h_tilde_[m] + z_[m] * h_hat_[m];
      const Scalar change = h - h_[m];
      h_[m] = h;
      if (change != Scalar(0)) {
        out.event(m, change);
        out.state_changed();
      } else {
        out.surrogate(m);  // its consumers' adjoints still reach h_k
      }
    }
  }

  std::shared_ptr<const Params> p_;
  DsGruRecordLayout layout_;
  WeightPattern<Scalar> W_z_, W_r_, W_h_, U_z_, U_r_, U_h_, W_proj_, W_ah_, W_ax_;
  Array h_;                             // the held state after the last tick
  Array h_tilde_, z_, r_, h_hat_;       // of the last tick (r: kept units; all while recording)
  Array mask_h_;                        // m_h of the last tick (zero at dropped units)
  Array reset_pre_;                     // the reset gates' sums, then r, gathered
  Array mask_x_;                        // m_x of the last tick
  Vector<Scalar> logits_h_, logits_x_;  // a_h, a_x
  Vector<Scalar> context_, score_;      // c; tau (a - mu) scratch
  Vector<Scalar> pre_z_, pre_h_;        // pre-activations of z and h^
  Vector<Scalar> x_dense_;              // impulse inputs: x_k during a step, zero between
  std::vector<Index> kept_h_, kept_x_;  // the router's choice, ascending
  std::vector<Index> x_channels_, h_units_;                 // nonzero entries of x~ and h~
  std::vector<Scalar> x_masked_, h_masked_, reset_masked_;  // x~, h~, r h~ at them
  InputDrive<Scalar> projection_;                           // W_proj x_k
};

}  // namespace egret
