// The physics of a selective-update GRU layer (suGRU, suRNN paper Eq. 4 and 6, Fig. A1) on the
// tick schedule. The gate g_k = H(a_k) of the rhythmic generator
// (models/rhythmic_gate/rhythmic_gate.hpp) switches a GRU step (PyTorch's convention, one bias per
// gate):
//   r = sigmoid(W_r x_k + V_r h_{k-1} + b_r)     z = sigmoid(W_z x_k + V_z h_{k-1} + b_z)
//   n = tanh(W_n x_k + b_n + r (V_n h_{k-1}))    f = (1 - z) n + z h_{k-1}
//   h_k = h_{k-1} + g_k (f - h_{k-1})
// A closed unit is carried exactly and, without a tape, costs nothing: its rows of V_r, V_z,
// V_n are not read (the input products are kept as running sums, models/tick/input_drive.hpp).
// Delta semantics: a unit emits h_k - h_{k-1} when its state changed. While a tape is recorded
// every unit's f is computed (the gate's straight-through gradient needs f - h of closed units).
#pragma once

#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "models/rhythmic_gate/open_units.hpp"
#include "models/shared/gate_functions.hpp"
#include "models/shared/interleaved_rows.hpp"
#include "models/shared/row_dots.hpp"
#include "models/shared/synapse_counting.hpp"
#include "models/sugru/sugru_adjoint.hpp"
#include "models/sugru/sugru_params.hpp"
#include "models/tick/input_drive.hpp"
#include "models/tick/tick_step.hpp"

namespace egret {

template <class Scalar>
class SugruCell {
 public:
  using Params = SugruParams<Scalar>;
  using Adjoint = SugruAdjoint<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  static constexpr const char* kType = "sugru";
  static constexpr bool kHeldOutput = true;  // events are changes of h

  explicit SugruCell(std::shared_ptr<const Params> p)
      : p_(std::move(p)),
        gate_(p_->gate),
        W_patterns_{WeightPattern<Scalar>(p_->W_r), WeightPattern<Scalar>(p_->W_z),
                    WeightPattern<Scalar>(p_->W_n)},
        V_patterns_{WeightPattern<Scalar>(p_->V_r), WeightPattern<Scalar>(p_->V_z),
                    WeightPattern<Scalar>(p_->V_n)} {
    const Index n = p_->units();
    for (Vector<Scalar>* v : {&a_, &pr_, &pz_, &pn_, &q_}) v->resize(n);
    for (Array* v : {&h_, &r_, &z_, &n_}) v->resize(n);
    for (auto& v : open_pre_) v.resize(n);
    for (auto& v : open_gates_) v.resize(n);
    open_.resize(n);
    W_rows_ = interleaved_rows<Scalar, 3>({&p_->W_r, &p_->W_z, &p_->W_n});
    V_rows_ = interleaved_rows<Scalar, 3>({&p_->V_r, &p_->V_z, &p_->V_n});
  }

  void reset() {
    for (Vector<Scalar>* v : {&a_, &q_}) v->setZero();
    for (Array* v : {&h_, &r_, &z_, &n_}) v->setZero();
    for (InputDrive<Scalar>* d : {&in_r_, &in_z_, &in_n_}) d->reset(p_->units());
  }

  void step(const TickInput<Scalar>& x, TickOutput<Scalar>& out) {
    gate_.activation(x.time, a_);
    open_.gather(a_);
    count_products(x, out.counts());
    const bool every = out.recording();
    if (every)
      every_unit(x);
    else
      open_units(x);
    // Without a tape only the open units: a closed unit keeps h, emits nothing and has no
    // surrogate to record. One loop for both, so that a run with a tape computes bitwise the same
    // h as one without (the same instructions, the same rounding).
    const Index units = open_.walked(every, p_->units());
    for (Index i = 0; i < units; ++i) {
      const Index m = open_.walked_unit(every, i);
      const bool open = a_[m] > Scalar(0);
      const Scalar f = (Scalar(1) - z_[m]) * n_[m] + z_[m] * h_[m];
      if (open) count_gate_products(m, out.counts());
      const Scalar h = open ? h_[m] + (f - h_[m]) : h_[m];
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

  // Dense: the three gates' W x_k and V h_{k-1} in full, and the GRU's three element-wise gate
  // products per unit; a unit's state is h.
  DenseCost dense_cost() const {
    const auto n = static_cast<std::uint64_t>(p_->units());
    return {3 * (dense_pairs(p_->W_r) + dense_pairs(p_->V_r)) + 3 * n, 1};
  }

  // Per tick the adjoint needs a_k, r, z, n, V_n h_{k-1} (every unit) and h_k.
  std::size_t record_size() const { return 6 * static_cast<std::size_t>(p_->units()); }
  void record(std::vector<Scalar>& tape) const {
    tape.insert(tape.end(), a_.data(), a_.data() + a_.size());
    for (const Array* v : {&r_, &z_, &n_})
      tape.insert(tape.end(), v->data(), v->data() + v->size());
    tape.insert(tape.end(), q_.data(), q_.data() + q_.size());
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
  // The synaptic pairs of the open-units schedule (docs/metrics.md), with or without a tape: the
  // open rows of V_X against h_{k-1} and of W_X against impulse inputs; held inputs' changes
  // update the running W_X x_k of every row.
  void count_products(const TickInput<Scalar>& x, OperationCounts& ops) const {
    const OperandSplit inputs = OperandSplit::of(x.values, x.size());
    const OperandSplit state = OperandSplit::of(h_, static_cast<std::size_t>(h_.size()));
    for (const auto& W : W_patterns_) {
      if (x.held)
        W.count_columns(ops, x.channels, x.values);
      else
        W.count_rows(ops, open_, x.channels, x.values, inputs);
    }
    for (const auto& V : V_patterns_) V.count_rows(ops, open_, h_, state);
  }

  // An open unit's r (V_n h), (1 - z) n and z h_{k-1}, as NeuroBench counts a GRU cell's.
  void count_gate_products(Index m, OperationCounts& ops) const {
    count_product(ops, r_[m], q_[m]);
    count_product(ops, Scalar(1) - z_[m], n_[m]);
    count_product(ops, z_[m], h_[m]);
  }

  // The GRU step of every unit (a tape needs f of closed units too), with dense products.
  void every_unit(const TickInput<Scalar>& x) {
    const Params& p = *p_;
    drive_inputs(x);
    pr_.noalias() += p.V_r * h_.matrix();
    pz_.noalias() += p.V_z * h_.matrix();
    q_.noalias() = p.V_n * h_.matrix();
    gru_gates(p.units(), pr_.data(), pz_.data(), pn_.data(), q_.data(), r_.data(), z_.data(),
              n_.data());
  }

  // The GRU step of the open units only, from h_{k-1}: a closed unit's rows of every product are
  // skipped. Impulse inputs are gathered per open row (through a dense copy of x_k when most
  // channels have input, so the rows' products vectorise); held inputs keep their running sums.
  void open_units(const TickInput<Scalar>& x) {
    const Params& p = *p_;
    const bool dense_x = !x.held && 4 * static_cast<Index>(x.size()) > p.inputs();
    if (x.held) drive_inputs(x);
    if (dense_x) scatter(x);
    const Index k = open_.size();
    for (Index i = 0; i < k; ++i) {
      const Index m = open_[i];
      if (dense_x)
        row_inputs(m);
      else if (!x.held)
        gather_inputs(m, x);
      Scalar vh[3];  // V_r h, V_z h, V_n h of unit m
      three_row_dots(V_rows_.row(3 * m).data(), h_.data(), p.units(), vh);
      q_[m] = vh[2];
      open_pre_[0][i] = pr_[m] + vh[0];
      open_pre_[1][i] = pz_[m] + vh[1];
      open_pre_[2][i] = pn_[m];
      open_pre_[3][i] = q_[m];
    }
    // The open units' gates together, vectorised; then back to their units.
    auto& g = open_gates_;
    gru_gates(k, open_pre_[0].data(), open_pre_[1].data(), open_pre_[2].data(), open_pre_[3].data(),
              g[0].data(), g[1].data(), g[2].data());
    for (Index i = 0; i < k; ++i) {
      const Index m = open_[i];
      r_[m] = g[0][i];
      z_[m] = g[1][i];
      n_[m] = g[2][i];
    }
  }

  // x_dense_ = x_k. A bin's channels are distinct (TickLayer bins them so), so when every channel
  // has input each entry is written and the zeroing is skipped (the earlier clearing pass
  // after the products, over the channels again, took a third of a mostly closed tick's own
  // time at 256 channels).
  void scatter(const TickInput<Scalar>& x) {
    if (x_dense_.size() != p_->inputs())
      x_dense_.setZero(p_->inputs());
    else if (static_cast<Index>(x.size()) != p_->inputs())
      x_dense_.setZero();
    for (std::size_t i = 0; i < x.size(); ++i) x_dense_[x.channels[i]] = x.values[i];
  }

  // pr, pz, pn of unit m = b + W x_k, from the dense copy of x_k.
  void row_inputs(Index m) {
    const Params& p = *p_;
    Scalar wx[3];  // W_r x, W_z x, W_n x of unit m
    three_row_dots(W_rows_.row(3 * m).data(), x_dense_.data(), p.inputs(), wx);
    pr_[m] = p.b_r[m] + wx[0];
    pz_[m] = p.b_z[m] + wx[1];
    pn_[m] = p.b_n[m] + wx[2];
  }

  // pr, pz, pn = b + W x_k for every unit (InputDrive: event-sparse columns, or running sums).
  void drive_inputs(const TickInput<Scalar>& x) {
    const Params& p = *p_;
    pr_ = p.b_r;
    pz_ = p.b_z;
    pn_ = p.b_n;
    in_r_.add_to(pr_, p.W_r, x);
    in_z_.add_to(pz_, p.W_z, x);
    in_n_.add_to(pn_, p.W_n, x);
  }

  // pr, pz, pn of unit m = b + W x_k over the channels with input (impulse inputs).
  void gather_inputs(Index m, const TickInput<Scalar>& x) {
    const Params& p = *p_;
    Scalar r = p.b_r[m], z = p.b_z[m], c = p.b_n[m];
    for (std::size_t i = 0; i < x.size(); ++i) {
      const Index ch = x.channels[i];
      r += W_rows_(3 * m, ch) * x.values[i];
      z += W_rows_(3 * m + 1, ch) * x.values[i];
      c += W_rows_(3 * m + 2, ch) * x.values[i];
    }
    pr_[m] = r;
    pz_[m] = z;
    pn_[m] = c;
  }

  // r = logistic(pr), z = logistic(pz), n = tanh(pn + r q) of k units, vectorised
  // (models/shared/gate_functions.hpp). The same arithmetic for every unit (a run with a tape)
  // as for the gathered open units: both give bitwise the same gates.
  static void gru_gates(Index k, const Scalar* pr, const Scalar* pz, const Scalar* pn,
                        const Scalar* q, Scalar* r, Scalar* z, Scalar* n) {
    vector_logistic(pr, r, k);
    vector_logistic(pz, z, k);
    for (Index i = 0; i < k; ++i) n[i] = pn[i] + r[i] * q[i];
    vector_tanh(n, n, k);
  }

  std::shared_ptr<const Params> p_;
  GateSchedule<Scalar> gate_;  // the rhythmic gate, 2K sines per tick
  std::array<WeightPattern<Scalar>, 3> W_patterns_, V_patterns_;  // of W_r, W_z, W_n; V_r, ...
  Array h_;                                // the held state after the last tick
  Vector<Scalar> a_, pr_, pz_, pn_, q_;    // gate activation, pre-activations, V_n h_{k-1}
  Array r_, z_, n_;                        // the GRU's gates (open units; all while recording)
  InputDrive<Scalar> in_r_, in_z_, in_n_;  // W_X x_k
  // Row-major copies of W_X and V_X with each unit's three gate rows next to each other (row
  // 3 m + g): an open unit's rows are one contiguous block, so a run without a tape reads only
  // the open units' blocks, in order (column-major rows are strided).
  RowMajorMatrix<Scalar> W_rows_, V_rows_;
  Vector<Scalar> x_dense_;  // x_k scattered, when most channels have input
  // The open units of a tick, gathered: their indices, pr, pz, pn, q and gates r, z, n.
  OpenUnits open_;
  std::array<Array, 4> open_pre_;
  std::array<Array, 3> open_gates_;
};

}  // namespace egret
