// The physics of a BMRU layer on the tick schedule (BMRU paper Eq. 11; docs/model.md §6):
//   h_hat_k = W_x x_k + b_x          beta_k = |W_beta x_k + b_beta|
//   z_k = H(|h_hat_k| - beta_k)      h_k = z_k S(h_hat_k) alpha + (1 - z_k) h_{k-1}
// H(u) = [u > 0], S the sign (S(0) = 0), no recurrent weights. Delta semantics: a unit emits
// h_k - h_{k-1} when its state changed and nothing otherwise; the output trace holds h. The
// input products are event-sparse for both input semantics (models/tick/input_drive.hpp). The
// backward side is models/bmru/bmru_adjoint.hpp.
#pragma once

#include <memory>
#include <vector>

#include "models/bmru/bmru_adjoint.hpp"
#include "models/bmru/bmru_params.hpp"
#include "models/shared/surrogates.hpp"
#include "models/shared/synapse_counting.hpp"
#include "models/tick/input_drive.hpp"
#include "models/tick/tick_step.hpp"

namespace egret {

template <class Scalar>
class BmruCell {
 public:
  using Params = BmruParams<Scalar>;
  using Adjoint = BmruAdjoint<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  static constexpr const char* kType = "bmru";
  static constexpr bool kHeldOutput = true;  // events are changes of h

  explicit BmruCell(std::shared_ptr<const Params> p)
      : p_(std::move(p)), W_x_pattern_(p_->W_x), W_beta_pattern_(p_->W_beta) {
    const Index n = p_->units();
    h_.resize(n);
    h_hat_.resize(n);
    beta_pre_.resize(n);
  }

  void reset() {
    h_.setZero();
    h_hat_.setZero();
    beta_pre_.setZero();
    candidate_.reset(p_->units());
    width_.reset(p_->units());
  }

  void step(const TickInput<Scalar>& x, TickOutput<Scalar>& out) {
    const Params& p = *p_;
    h_hat_ = p.b_x;
    candidate_.add_to(h_hat_, p.W_x, x);
    beta_pre_ = p.b_beta;
    width_.add_to(beta_pre_, p.W_beta, x);
    W_x_pattern_.count_columns(out.counts(), x.channels, x.values);
    W_beta_pattern_.count_columns(out.counts(), x.channels, x.values);
    for (Index m = 0; m < p.units(); ++m) {
      const Scalar u = std::abs(h_hat_[m]) - std::abs(beta_pre_[m]);
      const Scalar h = u > Scalar(0) ? sign_of(h_hat_[m]) * p.alpha[m] : h_[m];
      const Scalar change = h - h_[m];
      h_[m] = h;
      if (change != Scalar(0)) {
        out.event(m, change);
        out.state_changed();
      } else {
        out.surrogate(m);  // the arctan surrogate is never zero
      }
    }
  }

  // Per tick the adjoint needs h_hat_k, W_beta x_k + b_beta and h_k.
  std::size_t record_size() const { return 3 * static_cast<std::size_t>(p_->units()); }
  void record(std::vector<Scalar>& tape) const {
    for (const Vector<Scalar>* v : {&h_hat_, &beta_pre_})
      tape.insert(tape.end(), v->data(), v->data() + v->size());
    tape.insert(tape.end(), h_.data(), h_.data() + h_.size());
  }

  // Dense: W_x x_k and W_beta x_k in full; a unit's state is h.
  DenseCost dense_cost() const { return {dense_pairs(p_->W_x) + dense_pairs(p_->W_beta), 1}; }

  LayerState<Scalar> state() const {
    auto vec = [](const auto& v) { return std::vector<Scalar>(v.data(), v.data() + v.size()); };
    LayerState<Scalar> s;
    const Vector<Scalar> beta = beta_pre_.cwiseAbs();
    s.variables = {{"h", vec(h_)}, {"h_hat", vec(h_hat_)}, {"beta", vec(beta)}};
    return s;
  }

 private:
  std::shared_ptr<const Params> p_;
  WeightPattern<Scalar> W_x_pattern_, W_beta_pattern_;
  Array h_;                          // the held state after the last tick
  Vector<Scalar> h_hat_, beta_pre_;  // the last tick's candidate and W_beta x + b_beta
  InputDrive<Scalar> candidate_, width_;
};

}  // namespace egret
