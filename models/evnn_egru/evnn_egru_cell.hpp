// The EGRU in EvNN's convention as a tick-schedule family (models/tick/tick_layer.hpp drives it):
// one tick is EvnnEgruEquations::step (models/evnn_egru/evnn_egru_equations.hpp) from the
// pre-activations a = x_k W + b_x and q = y_{k-1} R + b_r, event-sparse: the kernel rows of the
// channels with input and the recurrent-kernel rows of the units that fired at k - 1 only. A unit
// that fires emits y; while a tape is recorded, a silent unit with a nonzero pseudo-derivative
// emits a surrogate event. Thresholds outside [0, 1] are clamped when the layer is built, as EvNN
// clamps them at every forward call.
#pragma once

#include <memory>
#include <vector>

#include "models/evnn_egru/evnn_egru_adjoint.hpp"
#include "models/evnn_egru/evnn_egru_equations.hpp"
#include "models/evnn_egru/evnn_egru_params.hpp"
#include "models/shared/synapse_counting.hpp"
#include "models/tick/tick_step.hpp"

namespace egret {

template <class Scalar>
class EvnnEgruCell {
 public:
  using Params = EvnnEgruParams<Scalar>;
  using Adjoint = EvnnEgruAdjoint<Scalar>;
  using Equations = EvnnEgruEquations<Scalar>;
  using Array = typename Equations::Array;
  static constexpr const char* kType = "evnn_egru";
  static constexpr bool kHeldOutput = false;

  explicit EvnnEgruCell(std::shared_ptr<const Params> p)
      : p_(std::move(p)),
        kernel_pairs_(row_nonzeros(p_->kernel)),
        recurrent_pairs_(row_nonzeros(p_->recurrent_kernel)) {
    const Index n = p_->units();
    for (Array* a : {&h_, &y_, &trace_, &h_prev_}) a->resize(n);
    a_.resize(3 * n);
    q_.resize(3 * n);
    rec_.assign(static_cast<std::size_t>(5 * n), Scalar(0));
  }

  void reset() {
    for (Array* a : {&h_, &y_, &trace_}) a->setZero();
    senders_.clear();
  }

  void step(const TickInput<Scalar>& x, TickOutput<Scalar>& out) {
    const Index n = p_->units();
    input_rows(x, out.counts());
    recurrent_rows(out.counts());
    h_prev_ = h_;
    typename Equations::StepRecord s{{rec_.data(), n},
                                     {rec_.data() + n, n},
                                     {rec_.data() + 2 * n, n},
                                     {rec_.data() + 3 * n, n},
                                     {rec_.data() + 4 * n, n}};
    Equations::step(a_, q_, h_prev_.data(), nullptr, p_->thr.array(), s, y_.data(), h_.data(),
                    trace_.data());
    senders_.clear();
    for (Index m = 0; m < n; ++m) {
      count_product(out.counts(), s.r[m], s.q_g[m]);
      count_product(out.counts(), s.z[m], h_prev_[m]);
      count_product(out.counts(), Scalar(1) - s.z[m], s.g[m]);
      out.state_changed();  // h moves at every tick
      if (s.v[m] > Scalar(0)) {
        senders_.push_back(m);
        out.event(m, y_[m]);
      } else if (Equations::pseudo_derivative(s.v[m], p_->dampening, p_->support) != Scalar(0)) {
        out.surrogate(m);
      }
    }
  }

  // Dense: x W and y R in full (3N (C + N) pairs), and per unit r q_g, z h and (1 - z) g; a
  // unit's state is (h, y).
  DenseCost dense_cost() const {
    const auto n = static_cast<std::uint64_t>(p_->units());
    return {3 * n * static_cast<std::uint64_t>(p_->inputs() + p_->units()) + 3 * n, 2};
  }

  // Per tick the adjoint needs the step record (z, r, g, q_g, v) and h_k.
  std::size_t record_size() const { return 6 * static_cast<std::size_t>(p_->units()); }
  void record(std::vector<Scalar>& tape) const {
    tape.insert(tape.end(), rec_.begin(), rec_.end());
    tape.insert(tape.end(), h_.data(), h_.data() + h_.size());
  }

  LayerState<Scalar> state() const {
    auto vec = [](const Array& v) { return std::vector<Scalar>(v.data(), v.data() + v.size()); };
    LayerState<Scalar> s;
    s.variables = {{"h", vec(h_)}, {"y", vec(y_)}, {"trace", vec(trace_)}};
    return s;
  }

 private:
  static std::vector<std::uint64_t> row_nonzeros(const RowMajorMatrix<Scalar>& w) {
    std::vector<std::uint64_t> out(static_cast<std::size_t>(w.rows()), 0);
    for (Index r = 0; r < w.rows(); ++r)
      for (Index c = 0; c < w.cols(); ++c) out[static_cast<std::size_t>(r)] += w(r, c) != Scalar(0);
    return out;
  }
  static void count_row(OperationCounts& ops, Scalar operand, std::uint64_t pairs) {
    if (operand != Scalar(0))
      (is_binary_operand(operand) ? ops.synaptic_acs : ops.synaptic_macs) += pairs;
  }

  // a = b_x + x_k W over the channels with input (held inputs: every nonzero channel).
  void input_rows(const TickInput<Scalar>& x, OperationCounts& ops) {
    a_ = p_->bias.array();
    auto add = [&](Index c, Scalar v) {
      if (v == Scalar(0)) return;
      a_ += v * p_->kernel.row(c).transpose().array();
      count_row(ops, v, kernel_pairs_[static_cast<std::size_t>(c)]);
    };
    if (x.held) {
      const auto& all = *x.held_values;
      for (std::size_t c = 0; c < all.size(); ++c) add(static_cast<Index>(c), all[c]);
    } else {
      for (std::size_t i = 0; i < x.size(); ++i) add(x.channels[i], x.values[i]);
    }
  }

  // q = b_r + y_{k-1} R over the units that fired at k - 1.
  void recurrent_rows(OperationCounts& ops) {
    q_ = p_->recurrent_bias.array();
    for (Index j : senders_) {
      q_ += y_[j] * p_->recurrent_kernel.row(j).transpose().array();
      count_row(ops, y_[j], recurrent_pairs_[static_cast<std::size_t>(j)]);
    }
  }

  std::shared_ptr<const Params> p_;
  std::vector<std::uint64_t> kernel_pairs_, recurrent_pairs_;  // nonzero weights per row
  Array h_, y_, trace_, h_prev_, a_, q_;
  std::vector<Scalar> rec_;     // the last tick's step record
  std::vector<Index> senders_;  // units that fired at the last tick
};

}  // namespace egret
