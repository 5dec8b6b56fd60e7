// The physics of a LIF layer with soft reset, on the tick schedule (docs/model.md §5):
//   v_k = alpha v_{k-1} + W x_k + V s_{k-1} + b - theta s_{k-1},   alpha = exp(-dt / tau_mem)
//   s_k = H(v_k - theta)                                          (H(0) = 0)
// with alpha and tau_mem per unit (elementwise; alpha computed once, when the cell is built).
// A spiking unit emits an event of value 1 (binary: its consumers accumulate, they do not
// multiply). Event-sparse: only the columns of W for channels with input this tick and of V for
// the units that spiked at k - 1 are added. The backward side is models/lif/lif_adjoint.hpp.
#pragma once

#include <memory>
#include <vector>

#include "models/lif/lif_adjoint.hpp"
#include "models/lif/lif_params.hpp"
#include "models/shared/surrogates.hpp"
#include "models/shared/synapse_counting.hpp"
#include "models/tick/input_drive.hpp"
#include "models/tick/sparse_columns.hpp"
#include "models/tick/tick_step.hpp"

namespace egret {

template <class Scalar>
class LifCell {
 public:
  using Params = LifParams<Scalar>;
  using Adjoint = LifAdjoint<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  static constexpr const char* kType = "lif";
  static constexpr bool kHeldOutput = false;  // spikes are events, not changes

  explicit LifCell(std::shared_ptr<const Params> p)
      : p_(std::move(p)), alpha_(p_->decay()), W_pattern_(p_->W), V_pattern_(p_->V) {
    v_.resize(p_->units());
    v_before_.resize(p_->units());
    drive_.resize(p_->units());
  }

  void reset() {
    v_.setZero();
    spiking_.clear();
    input_.reset(p_->units());
  }

  void step(const TickInput<Scalar>& x, TickOutput<Scalar>& out) {
    const Params& p = *p_;
    drive_ = p.b;
    input_.add_to(drive_, p.W, x);
    ones_.assign(spiking_.size(), Scalar(1));
    add_scaled_columns(drive_, p.V, spiking_, ones_);
    W_pattern_.count_columns(out.counts(), x.channels, x.values);
    V_pattern_.count_columns(out.counts(), spiking_, ones_);  // spikes: accumulates
    v_before_ = v_;
    v_ = alpha_ * v_ + drive_.array();
    for (Index m : spiking_) v_[m] -= p.theta[m];  // soft reset
    spiking_.clear();
    for (Index m = 0; m < p.units(); ++m) {
      if (v_[m] != v_before_[m]) out.state_changed();
      const Scalar u = v_[m] - p.theta[m];
      if (u > Scalar(0)) {
        spiking_.push_back(m);
        out.event(m, Scalar(1));
      } else if (out.recording() && arctan_surrogate(u, p.alpha_s) != Scalar(0)) {
        out.surrogate(m);
      }
    }
  }

  // Per tick the adjoint needs v_k (s_k = H(v_k - theta) follows from it).
  std::size_t record_size() const { return static_cast<std::size_t>(p_->units()); }
  void record(std::vector<Scalar>& tape) const {
    tape.insert(tape.end(), v_.data(), v_.data() + v_.size());
  }

  // Dense: W x_k and V s_{k-1} in full; a unit's state is v.
  DenseCost dense_cost() const { return {dense_pairs(p_->W) + dense_pairs(p_->V), 1}; }

  LayerState<Scalar> state() const {
    LayerState<Scalar> s;
    std::vector<Scalar> spikes(static_cast<std::size_t>(p_->units()), Scalar(0));
    for (Index m : spiking_) spikes[static_cast<std::size_t>(m)] = 1;
    s.variables = {{"v", std::vector<Scalar>(v_.data(), v_.data() + v_.size())}, {"s", spikes}};
    return s;
  }

 private:
  std::shared_ptr<const Params> p_;
  Array alpha_;  // every unit's decay exp(-dt / tau_mem)
  WeightPattern<Scalar> W_pattern_, V_pattern_;
  Array v_;                     // membrane potentials after the last tick
  Array v_before_;              // scratch: v_{k-1} (a unit whose v changed is a membrane update)
  Vector<Scalar> drive_;        // scratch: b + W x_k + V s_{k-1}
  std::vector<Index> spiking_;  // units with s = 1 at the last tick
  std::vector<Scalar> ones_;
  InputDrive<Scalar> input_;  // W x_k (models/tick/input_drive.hpp)
};

}  // namespace egret
