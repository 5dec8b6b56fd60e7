// The test-only toy family: a leaky integrator on the tick schedule whose units send their state
// as graded events,
//   h_k = alpha h_{k-1} + W x_k + b,   alpha = exp(-dt / tau),   y_k = h_k (sent when not 0).
// It exists to show what a family outside models/ takes (docs/cell_families.md): this folder and
// one registration line in its test.
#pragma once

#include <memory>
#include <vector>

#include "models/shared/synapse_counting.hpp"
#include "models/tick/input_drive.hpp"
#include "models/tick/tick_step.hpp"
#include "toy_adjoint.hpp"
#include "toy_params.hpp"

namespace egret {

template <class Scalar>
class ToyCell {
 public:
  using Params = ToyParams<Scalar>;
  using Adjoint = ToyAdjoint<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  static constexpr const char* kType = "toy_integrator";
  static constexpr bool kHeldOutput = false;

  explicit ToyCell(std::shared_ptr<const Params> p) : p_(std::move(p)), W_pattern_(p_->W) {
    h_.setZero(p_->units());
    drive_.resize(p_->units());
  }

  void reset() {
    h_.setZero();
    input_.reset(p_->units());
  }

  void step(const TickInput<Scalar>& x, TickOutput<Scalar>& out) {
    const Params& p = *p_;
    drive_ = p.b;
    input_.add_to(drive_, p.W, x);
    W_pattern_.count_columns(out.counts(), x.channels, x.values);
    const Array before = h_;
    h_ = p.decay() * h_ + drive_.array();
    for (Index m = 0; m < p.units(); ++m) {
      if (h_[m] != before[m]) out.state_changed();
      if (h_[m] != Scalar(0))
        out.event(m, h_[m]);
      else
        out.surrogate(m);  // y = h: its derivative is 1 even where h is 0
    }
  }

  std::size_t record_size() const { return static_cast<std::size_t>(p_->units()); }
  void record(std::vector<Scalar>& tape) const {
    tape.insert(tape.end(), h_.data(), h_.data() + h_.size());
  }

  DenseCost dense_cost() const { return {dense_pairs(p_->W), 1}; }

  LayerState<Scalar> state() const {
    LayerState<Scalar> s;
    s.variables = {{"h", std::vector<Scalar>(h_.data(), h_.data() + h_.size())}};
    return s;
  }

 private:
  std::shared_ptr<const Params> p_;
  WeightPattern<Scalar> W_pattern_;
  Array h_;
  Vector<Scalar> drive_;
  InputDrive<Scalar> input_;
};

}  // namespace egret
