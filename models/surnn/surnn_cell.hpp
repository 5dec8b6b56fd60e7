// The physics of a selective-update RNN layer (suRNN, suRNN paper Eq. 4 and 6, Fig. A1) on the
// tick schedule:
//   a_k = b_g + sum_j g_alpha[:, j] sin(g_omega_j t_k + g_phi[:, j]),   g_k = H(a_k)
//   f_k = tanh(W x_k + V h_{k-1} + b),   h_k = h_{k-1} + g_k (f_k - h_{k-1})
// A closed unit (g = 0) is carried exactly and costs nothing: its rows of W (impulse inputs) and
// V are not read; held inputs keep a running W x_k over every row (their changes arrive while a
// unit is closed). Delta
// semantics: a unit emits h_k - h_{k-1} when its state changed. While a tape is recorded f is
// computed for every unit, because the straight-through gate's gradient needs f - h of closed
// units too. The backward side is models/surnn/surnn_adjoint.hpp.
#pragma once

#include <cmath>
#include <memory>
#include <vector>

#include "models/rhythmic_gate/open_units.hpp"
#include "models/shared/gate_functions.hpp"
#include "models/shared/interleaved_rows.hpp"
#include "models/shared/synapse_counting.hpp"
#include "models/surnn/surnn_adjoint.hpp"
#include "models/surnn/surnn_params.hpp"
#include "models/tick/input_drive.hpp"
#include "models/tick/tick_step.hpp"

namespace egret {

template <class Scalar>
class SurnnCell {
 public:
  using Params = SurnnParams<Scalar>;
  using Adjoint = SurnnAdjoint<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  static constexpr const char* kType = "surnn";
  static constexpr bool kHeldOutput = true;  // events are changes of h

  explicit SurnnCell(std::shared_ptr<const Params> p)
      : p_(std::move(p)), gate_(p_->gate), W_pattern_(p_->W), V_pattern_(p_->V) {
    const Index n = p_->units();
    h_.resize(n);
    a_.resize(n);
    pre_.resize(n);
    f_.resize(n);
    open_.resize(n);
    open_pre_.resize(n);
    V_rows_ = interleaved_rows<Scalar, 1>({&p_->V});
    W_rows_ = interleaved_rows<Scalar, 1>({&p_->W});
  }

  void reset() {
    h_.setZero();
    a_.setZero();
    f_.setZero();
    input_.reset(p_->units());
  }

  void step(const TickInput<Scalar>& x, TickOutput<Scalar>& out) {
    const Params& p = *p_;
    const Index n = p.units();
    gate_.activation(x.time, a_);
    open_.gather(a_);
    count_operations(x, out.counts());
    const bool every = out.recording();
    if (every) {
      pre_ = p.b;
      input_.add_to(pre_, p.W, x);
      pre_.noalias() += p.V * h_.matrix();
      vector_tanh(pre_.data(), f_.data(), n);
    } else {
      open_units(x);
    }
    // Without a tape only the open units: a closed unit keeps h, emits nothing and has no
    // surrogate to record. One loop for both, so that a run with a tape computes bitwise the same
    // h as one without.
    const Index units = open_.walked(every, n);
    for (Index i = 0; i < units; ++i) {
      const Index m = open_.walked_unit(every, i);
      const bool open = a_[m] > Scalar(0);
      const Scalar h = open ? h_[m] + (f_[m] - h_[m]) : h_[m];
      const Scalar change = h - h_[m];
      h_[m] = h;
      if (change != Scalar(0)) {
        out.event(m, change);
        out.state_changed();
      } else {
        out.surrogate(m);  // the gate's surrogate is never zero
      }
    }
  }

  // Dense: W x_k and V h_{k-1} in full; a unit's state is h.
  DenseCost dense_cost() const { return {dense_pairs(p_->W) + dense_pairs(p_->V), 1}; }

  // Per tick the adjoint needs a_k, f_k (every unit) and h_k.
  std::size_t record_size() const { return 3 * static_cast<std::size_t>(p_->units()); }
  void record(std::vector<Scalar>& tape) const {
    tape.insert(tape.end(), a_.data(), a_.data() + a_.size());
    tape.insert(tape.end(), f_.data(), f_.data() + f_.size());
    tape.insert(tape.end(), h_.data(), h_.data() + h_.size());
  }

  LayerState<Scalar> state() const {
    auto vec = [](const auto& v) { return std::vector<Scalar>(v.data(), v.data() + v.size()); };
    const Array g = (a_.array() > Scalar(0)).template cast<Scalar>();
    LayerState<Scalar> s;
    s.variables = {{"h", vec(h_)}, {"g", vec(g)}, {"a", vec(a_)}};
    return s;
  }

 private:
  // f of the open units only, all from h_{k-1}: impulse inputs gathered per open row, held inputs
  // from their running sums.
  void open_units(const TickInput<Scalar>& x) {
    const Params& p = *p_;
    if (x.held) {
      pre_ = p.b;
      input_.add_to(pre_, p.W, x);
    }
    const Index k = open_.size();
    for (Index j = 0; j < k; ++j) {
      const Index m = open_[j];
      Scalar in = x.held ? pre_[m] : p.b[m];
      if (!x.held)
        for (std::size_t i = 0; i < x.size(); ++i) in += W_rows_(m, x.channels[i]) * x.values[i];
      open_pre_[j] = in + V_rows_.row(m).dot(h_.matrix());
    }
    // Their tanh together, vectorised, with the arithmetic of the every-unit path
    // (models/shared/gate_functions.hpp): both give bitwise the same f.
    vector_tanh(open_pre_.data(), open_pre_.data(), k);
    for (Index i = 0; i < k; ++i) f_[open_[i]] = open_pre_[i];
  }

  // What the open-units schedule multiplies (docs/metrics.md), with or without a tape: the open
  // rows of V against h_{k-1}, and of W against impulse inputs; held inputs' changes update the
  // running W x_k of every row.
  void count_operations(const TickInput<Scalar>& x, OperationCounts& ops) const {
    const OperandSplit inputs = OperandSplit::of(x.values, x.size());
    const OperandSplit state = OperandSplit::of(h_, static_cast<std::size_t>(h_.size()));
    if (x.held)
      W_pattern_.count_columns(ops, x.channels, x.values);
    else
      W_pattern_.count_rows(ops, open_, x.channels, x.values, inputs);
    V_pattern_.count_rows(ops, open_, h_, state);
  }

  std::shared_ptr<const Params> p_;
  GateSchedule<Scalar> gate_;  // the rhythmic gate, 2K sines per tick
  Array h_;                    // the held state after the last tick
  Vector<Scalar> a_;           // the gate's activation at the last tick
  Vector<Scalar> pre_;
  Array f_;         // tanh(...) of the last tick (open units; every unit while recording)
  OpenUnits open_;  // the open units of a tick, gathered,
  Array open_pre_;  // and their pre-activations
  InputDrive<Scalar> input_;
  RowMajorMatrix<Scalar> V_rows_, W_rows_;  // row-major: an open unit's rows are contiguous
  WeightPattern<Scalar> W_pattern_, V_pattern_;
};

}  // namespace egret
