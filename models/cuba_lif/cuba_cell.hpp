// The physics of a layer of current-based units on the tick schedule (docs/model.md §13), NIR's
// neuron nodes: per tick k, with the input held over (t_{k-1}, t_k],
//   S_k = W x_k + V y_{k-1} + b
//   I_k, v_k: the exact solution of the synapse and membrane equations over the tick
//             (models/cuba_lif/cuba_propagator.hpp)
//   spiking (cuba_lif): s_k = H(v_k - v_threshold), H(0) = 0; a spiking unit's v_k = v_reset and
//             it emits an event of value 1 (y = s)
//   graded (cuba_li):   y_k = v_k, sent as changes (delta semantics, a held output)
// The state at t = 0 is I = 0, v = 0. Event-sparse: the columns of W for channels with input and,
// for spiking units, of V for the units that spiked at k - 1. These families run forward only:
// they have no adjoint (no Adjoint type: TickLayer gives them no backward pass).
#pragma once

#include <memory>
#include <vector>

#include "models/cuba_lif/cuba_params.hpp"
#include "models/cuba_lif/cuba_propagator.hpp"
#include "models/shared/synapse_counting.hpp"
#include "models/tick/input_drive.hpp"
#include "models/tick/sparse_columns.hpp"
#include "models/tick/tick_step.hpp"

namespace egret {

template <class Scalar, bool Spiking>
class CubaCell {
 public:
  using Params = CubaParams<Scalar, Spiking>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  static constexpr const char* kType = Spiking ? "cuba_lif" : "cuba_li";
  static constexpr bool kHeldOutput = !Spiking;  // graded units send changes of v

  explicit CubaCell(std::shared_ptr<const Params> p)
      : p_(std::move(p)), flow_(*p_), W_pattern_(p_->W), V_pattern_(p_->V) {
    const Index n = p_->units();
    i_syn_.resize(n);
    v_.resize(n);
    drive_.resize(n);
  }

  void reset() {
    i_syn_.setZero();
    v_.setZero();
    sending_.clear();
    sent_.clear();
    input_.reset(p_->units());
  }

  void step(const TickInput<Scalar>& x, TickOutput<Scalar>& out) {
    add_drive(x, out);
    const Array s = drive_.array();
    Array v_next = flow_.a_mem * v_ + flow_.c_leak + flow_.c_in * s;
    if (p_->synapse) {
      v_next += flow_.c_syn * i_syn_;
      i_syn_ = flow_.a_syn * i_syn_ + flow_.b_syn * s;
    }
    emit(v_next, out);
  }

  // Per tick: I_k and v_k (recorded for completeness; there is no adjoint to read them).
  std::size_t record_size() const { return 2 * static_cast<std::size_t>(p_->units()); }
  void record(std::vector<Scalar>& tape) const {
    tape.insert(tape.end(), i_syn_.data(), i_syn_.data() + i_syn_.size());
    tape.insert(tape.end(), v_.data(), v_.data() + v_.size());
  }

  // Dense: W x_k and V y_{k-1} in full; a unit's state is v, and I with a synapse.
  DenseCost dense_cost() const {
    return {dense_pairs(p_->W) + dense_pairs(p_->V), p_->synapse ? 2u : 1u};
  }

  LayerState<Scalar> state() const {
    LayerState<Scalar> s;
    s.variables = {{"v", std::vector<Scalar>(v_.data(), v_.data() + v_.size())}};
    if (p_->synapse)
      s.variables.push_back(
          {"i", std::vector<Scalar>(i_syn_.data(), i_syn_.data() + i_syn_.size())});
    return s;
  }

 private:
  // drive_ = b + W x_k + V y_{k-1}: the columns of the inputs and of last tick's senders.
  void add_drive(const TickInput<Scalar>& x, TickOutput<Scalar>& out) {
    drive_ = p_->b;
    input_.add_to(drive_, p_->W, x);
    add_scaled_columns(drive_, p_->V, sending_, sent_);
    W_pattern_.count_columns(out.counts(), x.channels, x.values);
    V_pattern_.count_columns(out.counts(), sending_, sent_);
  }

  // Spiking: threshold and reset, events of value 1. Graded: v's change, and every unit whose v
  // is not zero feeds V at the next tick.
  void emit(const Array& v_next, TickOutput<Scalar>& out) {
    sending_.clear();
    sent_.clear();
    for (Index m = 0; m < p_->units(); ++m) {
      if (v_next[m] != v_[m]) out.state_changed();
      if constexpr (Spiking) {
        v_[m] = v_next[m];
        if (v_[m] > p_->v_threshold[m]) {
          v_[m] = p_->v_reset[m];
          sending_.push_back(m);
          sent_.push_back(Scalar(1));
          out.event(m, Scalar(1));
        }
      } else {
        if (v_next[m] != v_[m]) out.event(m, v_next[m] - v_[m]);
        v_[m] = v_next[m];
        if (v_[m] != Scalar(0)) {
          sending_.push_back(m);
          sent_.push_back(v_[m]);
        }
      }
    }
  }

  std::shared_ptr<const Params> p_;
  CubaPropagator<Scalar> flow_;
  WeightPattern<Scalar> W_pattern_, V_pattern_;
  Array i_syn_;                 // synaptic currents after the last tick
  Array v_;                     // membrane potentials after the last tick
  Vector<Scalar> drive_;        // scratch: S_k
  std::vector<Index> sending_;  // units whose output at the last tick is not zero
  std::vector<Scalar> sent_;    // ... and that output (1 for a spike, v for graded units)
  InputDrive<Scalar> input_;    // W x_k (models/tick/input_drive.hpp)
};

template <class Scalar>
using CubaLifCell = CubaCell<Scalar, true>;
template <class Scalar>
using CubaLiCell = CubaCell<Scalar, false>;

}  // namespace egret
