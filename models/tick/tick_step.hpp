// What one tick of a discrete-time family consumes and produces (models/tick/tick_layer.hpp): the
// bin of summed input per channel, and the units' emissions. Shared by a family's forward cell and
// its adjoint.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "sim/layer.hpp"
#include "sim/operation_counts.hpp"

namespace egret {

// The input a tick consumes: every channel that received events in (t_{k-1}, t_k], with the sum
// of their values, in arrival order.
//  * Impulse inputs (events, spikes): the sums are x_k; channels not listed are zero.
//  * Held inputs (the changes of a held output below, sim/layer.hpp output_is_held): the sums are
//    the changes x_k - x_{k-1}; every channel keeps its value, `held_values` holds x_k.
// A cell that multiplies x_k by weights uses InputDrive (models/tick/input_drive.hpp), which
// handles both. In the backward pass (TickVisit::input) the channels are always x_k's nonzero ones.
template <class Scalar>
struct TickInput {
  std::vector<Index> channels;
  std::vector<Scalar> values;
  bool held = false;
  const std::vector<Scalar>* held_values = nullptr;  // held: x_k, every channel
  Scalar time = 0;                                   // t_k of the tick [ms]
  void clear() {
    channels.clear();
    values.clear();
  }
  std::size_t size() const { return channels.size(); }
};

// Where a cell puts what its units emit at a tick, in unit order: events (value != 0), and,
// while a tape is recorded, surrogate events for silent units whose surrogate derivative is
// not zero (sim/layer.hpp Emission), so that their consumers' adjoints reach them. It also takes
// the tick's operation counts (sim/operation_counts.hpp; models/shared/synapse_counting.hpp counts
// the synaptic pairs): a cell adds its synaptic and element-wise operations to counts() and calls
// state_changed() once per unit whose state changed (the first tick counts every unit anyway).
template <class Scalar>
class TickOutput {
 public:
  TickOutput(std::vector<Emission<Scalar>>& out, bool recording, OperationCounts& counts,
             bool first_tick)
      : out_(out), recording_(recording), counts_(counts), first_tick_(first_tick) {}
  OperationCounts& counts() { return counts_; }
  void state_changed() {
    if (!first_tick_) ++counts_.membrane_updates;
  }
  void event(Index unit, Scalar value) { emit(out_, unit, value); }
  bool recording() const { return recording_; }
  void surrogate(Index unit) {
    if (recording_) emit(out_, unit, Scalar(0), Scalar(0), true);
  }

 private:
  std::vector<Emission<Scalar>>& out_;
  bool recording_;
  OperationCounts& counts_;
  bool first_tick_;
};

// Channels are stored on the tape as Scalars: exact below 2^24 (float) or 2^53 (double).
template <class Scalar>
Scalar channel_as_scalar(Index ch, const char* family) {
  const auto s = static_cast<Scalar>(ch);
  if (static_cast<Index>(s) != ch)
    throw std::invalid_argument(std::string(family) + ": input channel " + std::to_string(ch) +
                                " cannot be recorded on a tape of this precision");
  return s;
}

}  // namespace egret
