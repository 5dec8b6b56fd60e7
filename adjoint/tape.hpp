// What the forward pass records for the exact backward pass: every step of every layer (one
// event reaching the layer: an input, a release, or the crossing(s) at one time), the jumps it
// applied (items), the links between events (a release to the contribution it ends, an input of
// layer l + 1 to the emission of layer l that caused it), and the layer's c right after the step.
// Memory: one N-vector per step plus a few words per item, independent of simulated time.
#pragma once

#include <cstdint>
#include <vector>

#include "events/event.hpp"
#include "sim/layer.hpp"

namespace egret {

template <class Scalar>
struct TapeItem {
  EventKind kind = EventKind::kInput;  // kInput, kInputRelease, kInternal, kRecurrentRelease
  Index index = 0;                     // channel (inputs) or unit (emissions, recurrent)
  Scalar value = 0;                    // x of an input, y of an emission
  Scalar aux = 0;                      // the sender's r(s-) (emissions, recurrent releases)
  std::int64_t source = -1;            // release: item it ends; input of layer > 0: emission
  std::int64_t external = -1;          // input of layer 0: index in the input stream
};

template <class Scalar>
struct TapeStep {
  Scalar time = 0;
  EventKind kind = EventKind::kInput;
  Index layer = 0;
  std::int64_t first_item = 0;
  std::int64_t n_items = 0;
  std::int64_t state = 0;  // offset of c after the step in states[layer]
  std::int64_t prev = -1;  // previous step of the same layer (-1: the first)
};

template <class Scalar>
class Tape {
 public:
  std::vector<TapeStep<Scalar>> steps;
  std::vector<TapeItem<Scalar>> items;
  std::vector<std::vector<Scalar>> states;                // per layer, N values per step
  std::vector<std::vector<Scalar>> final_preactivations;  // per layer, [a_u; a_r; a_z] at the end

  void clear(Index layers) {
    steps.clear();
    items.clear();
    states.assign(static_cast<std::size_t>(layers), {});
    final_preactivations.assign(static_cast<std::size_t>(layers), {});
    last_step_.assign(static_cast<std::size_t>(layers), -1);
  }

  std::int64_t next_item() const { return static_cast<std::int64_t>(items.size()); }

  // One step: its items and the layer's state right after it.
  void record_step(Scalar time, EventKind kind, Index layer, const Layer<Scalar>& l,
                   const std::vector<TapeItem<Scalar>>& step_items) {
    TapeStep<Scalar> s;
    s.time = time;
    s.kind = kind;
    s.layer = layer;
    s.first_item = next_item();
    s.n_items = static_cast<std::int64_t>(step_items.size());
    auto& st = states[static_cast<std::size_t>(layer)];
    s.state = static_cast<std::int64_t>(st.size());
    s.prev = last_step_[static_cast<std::size_t>(layer)];
    items.insert(items.end(), step_items.begin(), step_items.end());
    l.append_tape_state(st);
    last_step_[static_cast<std::size_t>(layer)] = static_cast<std::int64_t>(steps.size());
    steps.push_back(s);
  }

  // Bytes held: what "memory per event" reports.
  std::size_t bytes() const {
    std::size_t b =
        steps.size() * sizeof(TapeStep<Scalar>) + items.size() * sizeof(TapeItem<Scalar>);
    for (const auto& s : states) b += s.size() * sizeof(Scalar);
    for (const auto& a : final_preactivations) b += a.size() * sizeof(Scalar);
    return b;
  }

 private:
  std::vector<std::int64_t> last_step_;
};

}  // namespace egret
