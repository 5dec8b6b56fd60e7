// One continuous EGRU layer's steps on the tape, in forward order, and which of them carry a
// checkpoint of the layer's state (continuous_egru_layer.hpp writes one after every K-th step, the
// first included). Both replays of the forward states (dense_replay.hpp,
// box_sparse_replay.hpp) start from these checkpoints.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "sim/tape.hpp"

namespace egret {

template <class Scalar>
class ContinuousEgruTapeSteps {
 public:
  // The steps of `layer`; a checkpoint holds `state_width` entries. Throws when the tape's
  // checkpoints do not match that width or the first step has none.
  void begin(const Tape<Scalar>& tape, Index layer, Index state_width) {
    tape_ = &tape;
    order_.clear();
    for (std::size_t s = 0; s < tape.steps.size(); ++s)
      if (tape.steps[s].layer == layer) order_.push_back(static_cast<std::int64_t>(s));
    checkpoint_.assign(order_.size(), false);
    const auto& records = tape.step_states[static_cast<std::size_t>(layer)];
    for (std::size_t i = 0; i < order_.size(); ++i) {
      const std::int64_t from = step(static_cast<Index>(i)).state;
      const std::int64_t to = i + 1 < order_.size() ? step(static_cast<Index>(i + 1)).state
                                                    : static_cast<std::int64_t>(records.size());
      if (to - from != 0 && to - from != state_width)
        throw std::invalid_argument("continuous_egru adjoint: tape does not match the layer");
      checkpoint_[i] = to - from != 0;
    }
    if (!order_.empty() && !checkpoint_[0])
      throw std::invalid_argument("continuous_egru adjoint: the tape has no first checkpoint");
  }

  const Tape<Scalar>& tape() const { return *tape_; }
  Index steps() const { return static_cast<Index>(order_.size()); }
  const TapeStep<Scalar>& step(Index i) const {
    return tape_->steps[static_cast<std::size_t>(order_[static_cast<std::size_t>(i)])];
  }
  bool checkpoint(Index i) const { return checkpoint_[static_cast<std::size_t>(i)]; }
  // The time of step i; i = -1 stands for the initial state at t = 0.
  Scalar time(Index i) const { return i >= 0 ? step(i).time : Scalar(0); }
  // The latest checkpoint at or before step i (i >= 0).
  Index checkpoint_at_or_before(Index i) const {
    while (!checkpoint(i)) --i;
    return i;
  }

 private:
  const Tape<Scalar>* tape_ = nullptr;
  std::vector<std::int64_t> order_;  // the layer's steps (indices into the tape)
  std::vector<bool> checkpoint_;     // whether step i of the layer carries a checkpoint
};

}  // namespace egret
