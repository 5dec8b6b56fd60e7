// The physics of a spiking-gated linear recurrent layer (spiking-gate paper Eq. 7-10; docs/model.md
// §11) on the tick schedule, real-valued:
//   u_k = W_i x_k + b_i,   m_k = (1 - r) m_{k-1} + r u_k,   r = 1 - exp(-dt inv_tau_m)  (Eq. 7)
//   s_k = H(m_k - V_k),    V_k = theta + X_{k,i} (taped runs) or theta + w/2 (others)    (Eq. 8)
//   c_hat = W_c x_k + b_c, c_k = c_hat tanh(rho) / rho,  rho = sqrt(c_hat^2 + 1)        (Eq. 10)
//   h_k = c_k h_{k-1} + W_x x_k + b_x if s_k = 1, else h_{k-1}                         (Eq. 9)
// H(v) = [v > 0]. The gate's membrane m is a leaky integrator without reset, updated every tick
// (its input columns only for channels with input); only units whose gate spikes read W_c and
// W_x, the others are carried exactly. Delta semantics: a unit emits h_k - h_{k-1} when its state
// changed and nothing otherwise. While a tape is recorded c and W_x x are computed for every
// unit, because the surrogate gradient of a silent gate needs c h + W_x x + b_x - h. The
// backward side is models/spiking_gated/spiking_gated_adjoint.hpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/shared/synapse_counting.hpp"
#include "models/spiking_gated/spiking_gated_adjoint.hpp"
#include "models/spiking_gated/spiking_gated_params.hpp"
#include "models/tick/input_drive.hpp"
#include "models/tick/tick_step.hpp"

namespace egret {

namespace detail {
// SplitMix64's output function: a bijective 64-bit mix.
inline std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
}  // namespace detail

// The stochastic threshold's X / w for unit i at tick k (k = 1, 2, ...) of a layer seeded with
// `seed`: uniform in [0, 1), a counter-based hash of (seed, k, i) and nothing else, so a sample's
// noise does not depend on the thread that runs it, on other samples or on earlier runs.
inline double threshold_noise_unit(std::uint64_t seed, std::uint64_t tick, std::uint64_t unit) {
  using detail::splitmix64;
  const std::uint64_t z = splitmix64(splitmix64(splitmix64(seed) ^ tick) ^ unit);
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

template <class Scalar>
class SpikingGatedCell {
 public:
  using Params = SpikingGatedParams<Scalar>;
  using Adjoint = SpikingGatedAdjoint<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  static constexpr const char* kType = "spiking_gated";
  static constexpr bool kHeldOutput = true;  // events are changes of h

  explicit SpikingGatedCell(std::shared_ptr<const Params> p)
      : p_(std::move(p)), W_i_(p_->W_i), W_c_(p_->W_c), W_x_(p_->W_x) {
    const Index n = p_->units();
    for (Array* a : {&h_, &m_, &v_, &c_hat_, &cand_}) a->resize(n);
    u_.resize(n);
    leak_.resize(n);
    for (Index i = 0; i < n; ++i) leak_[i] = p_->leak(i);
  }

  void reset() {
    for (Array* a : {&h_, &m_, &v_, &c_hat_, &cand_}) a->setZero();
    u_.setZero();
    current_.reset(p_->units());
    forget_.reset(p_->units());
    candidate_.reset(p_->units());
    tick_ = 0;
  }

  void step(const TickInput<Scalar>& x, TickOutput<Scalar>& out) {
    const Params& p = *p_;
    ++tick_;
    u_ = p.b_i;
    current_.add_to(u_, p.W_i, x);
    OperationCounts& ops = out.counts();
    W_i_.count_columns(ops, x.channels, x.values);
    if (x.held) {  // running sums must follow every change, spiking or not
      forget_.update(p.W_c, x);
      candidate_.update(p.W_x, x);
      W_c_.count_columns(ops, x.channels, x.values);
      W_x_.count_columns(ops, x.channels, x.values);
    }
    const OperandSplit inputs = OperandSplit::of(x.values, x.size());
    for (Index m = 0; m < p.units(); ++m) {
      const Scalar m_before = m_[m];
      m_[m] = (Scalar(1) - leak_[m]) * m_[m] + leak_[m] * u_[m];
      v_[m] = m_[m] - threshold(m, out.recording());
      const bool spikes = v_[m] > Scalar(0);
      if (spikes || out.recording()) {
        c_hat_[m] = p.b_c[m] + forget_.row(p.W_c, m, x);
        cand_[m] = p.b_x[m] + candidate_.row(p.W_x, m, x);
      }
      if (spikes) count_spiking_unit(m, x, inputs, ops);
      const Scalar h = spikes ? forget_gate(c_hat_[m]) * h_[m] + cand_[m] : h_[m];
      const Scalar change = h - h_[m];
      h_[m] = h;
      if (change != Scalar(0) || m_[m] != m_before) out.state_changed();
      if (change != Scalar(0))
        out.event(m, change);
      else
        out.surrogate(m);  // the arctan surrogate is never zero
    }
  }

  // Dense: W_i x_k, W_c x_k and W_x x_k in full, and c h_{k-1} per unit; a unit's state is
  // (m, h).
  DenseCost dense_cost() const {
    const Params& p = *p_;
    return {dense_pairs(p.W_i) + dense_pairs(p.W_c) + dense_pairs(p.W_x) +
                static_cast<std::uint64_t>(p.units()),
            2};
  }

  // Per tick the adjoint needs u_k, m_k, m_k - V_k, c_hat_k, W_x x_k + b_x and h_k.
  std::size_t record_size() const { return 6 * static_cast<std::size_t>(p_->units()); }
  void record(std::vector<Scalar>& tape) const {
    tape.insert(tape.end(), u_.data(), u_.data() + u_.size());
    for (const Array* a : {&m_, &v_, &c_hat_, &cand_, &h_})
      tape.insert(tape.end(), a->data(), a->data() + a->size());
  }

  LayerState<Scalar> state() const {
    auto vec = [](const auto& v) { return std::vector<Scalar>(v.data(), v.data() + v.size()); };
    const Array s = (v_ > Scalar(0)).template cast<Scalar>();
    LayerState<Scalar> st;
    st.variables = {{"h", vec(h_)}, {"m", vec(m_)}, {"s", vec(s)}};
    return st;
  }

 private:
  // W x_k, one row at a time: for impulse inputs the row's entries of the channels with input;
  // for held inputs a running W x_k, kept by the columns of the channels that changed.
  class RowDrive {
   public:
    void reset(Index rows) { running_.setZero(rows); }
    void update(const Matrix<Scalar>& W, const TickInput<Scalar>& x) {
      add_scaled_columns(running_, W, x.channels, x.values);
    }
    Scalar row(const Matrix<Scalar>& W, Index m, const TickInput<Scalar>& x) const {
      if (x.held) return running_[m];
      Scalar sum = 0;
      for (std::size_t i = 0; i < x.size(); ++i) sum += W(m, x.channels[i]) * x.values[i];
      return sum;
    }

   private:
    Vector<Scalar> running_;
  };

  // A spiking unit reads its rows of W_c and W_x (impulse inputs; held inputs keep running sums
  // of every row) and multiplies c by h_{k-1}.
  void count_spiking_unit(Index m, const TickInput<Scalar>& x, const OperandSplit& inputs,
                          OperationCounts& ops) const {
    if (!x.held) {
      W_c_.count_row(ops, m, x.channels, x.values, inputs);
      W_x_.count_row(ops, m, x.channels, x.values, inputs);
    }
    count_product(ops, forget_gate(c_hat_[m]), h_[m]);
  }

  // V_k of unit m (Eq. 8): the noisy threshold while training (a tape is recorded), its
  // expectation otherwise.
  Scalar threshold(Index m, bool training) const {
    const Params& p = *p_;
    if (!training) return p.theta + p.noise_width / Scalar(2);
    const double x = threshold_noise_unit(p.noise_seed, tick_, static_cast<std::uint64_t>(m));
    return p.theta + p.noise_width * static_cast<Scalar>(x);
  }

  std::shared_ptr<const Params> p_;
  WeightPattern<Scalar> W_i_, W_c_, W_x_;
  Array h_, m_;         // the held state and the gate's membrane after the last tick
  Vector<Scalar> u_;    // the last tick's gate current W_i x_k + b_i
  Array v_;             // the last tick's m_k - V_k
  Array c_hat_, cand_;  // W_c x + b_c and W_x x + b_x (spiking units; all while recording)
  Array leak_;          // 1 - exp(-dt inv_tau_m) per unit
  InputDrive<Scalar> current_;
  RowDrive forget_, candidate_;
  std::uint64_t tick_ = 0;  // k of the last tick
};

}  // namespace egret
