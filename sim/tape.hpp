// What the forward pass records for a backward pass: every step of every layer (one event
// reaching the layer: an input, a release, or its internal event(s) at one time; or, on request,
// all the external inputs, or all their releases, reaching layer 0 at one time), the jumps it
// applied (items), the links between events (a release to the contribution it ends, an input of
// layer l + 1 to the emission of layer l that caused it), and whatever state the layer's family
// keeps per step and at the end of the run (the family's business: sim/layer.hpp
// record_step_state / record_end_state). Memory grows with the number of events, not with time.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "events/event.hpp"

namespace egret {

// What a layer is told about the tape at the start of every run (Layer::set_tape_recording).
struct TapeSettings {
  bool recording = false;
  // A family that keeps its state per step may keep it only every `checkpoint_every` of its
  // steps and recompute the steps in between forward during the backward pass (memory per event
  // independent of the layer's size). 0: the family chooses (continuous_egru: about 64 bytes of
  // checkpoint per step, docs/adjoint.md). SimOptions::tape_checkpoint_every.
  std::int64_t checkpoint_every = 0;
};

// 32 bytes per item in double, 24 in float.
template <class Scalar>
struct TapeItem {
  EventKind kind = EventKind::kInput;  // kInput, kInputRelease, kInternal, kRecurrentRelease
  bool surrogate = false;              // a surrogate emission, or the input it became
  bool external = false;               // an input of layer 0: link is in the input stream
  std::int32_t index = 0;              // channel (inputs) or unit (emissions, recurrent)
  Scalar value = 0;                    // x of an input, y of an emission
  Scalar aux = 0;                      // the emission's cell-specific factor (Emission::aux)
  // external: the event's index in the input stream; a release: the item it ends; an input of
  // layer > 0: the emission it delivers; -1: none.
  std::int64_t link = -1;
};

// 32 bytes per step in double and in float: a step with one item (most steps) costs 64 bytes
// in double and 56 in float. A step's item count and the previous step of its layer are not
// kept: both follow from the steps around it (Tape::n_items, Tape::previous).
template <class Scalar>
struct TapeStep {
  Scalar time = 0;
  std::int32_t layer = 0;
  EventKind kind = EventKind::kInput;
  std::int64_t first_item = 0;
  std::int64_t state = 0;  // offset of what the layer recorded after the step in step_states
};
static_assert(sizeof(TapeStep<double>) == 32 && sizeof(TapeStep<float>) == 32);
static_assert(sizeof(TapeStep<double>) + sizeof(TapeItem<double>) <= 64,
              "the tape's goal: at most 64 bytes per event besides the checkpoints");

template <class Scalar>
class Tape {
 public:
  std::vector<TapeStep<Scalar>> steps;
  std::vector<TapeItem<Scalar>> items;
  std::vector<std::vector<Scalar>> step_states;  // per layer: what the family keeps per step
  std::vector<std::vector<Scalar>> end_states;   // per layer: what it keeps at the end
  // Whether some step holds several simultaneous external inputs or releases of them
  // (SimOptions::tape_merge_simultaneous_inputs): their time adjoints cannot be told apart.
  bool merged_inputs = false;

  void clear(Index layers) {
    steps.clear();
    items.clear();
    step_states.resize(static_cast<std::size_t>(layers));
    end_states.resize(static_cast<std::size_t>(layers));
    for (auto& s : step_states) s.clear();  // keep the capacity: tapes are reused per sample
    for (auto& s : end_states) s.clear();
    merged_inputs = false;
  }

  std::int64_t next_item() const { return static_cast<std::int64_t>(items.size()); }

  // One step and its items; the layer appends its own record to `state_out()` right after.
  void add_step(Scalar time, EventKind kind, Index layer,
                const std::vector<TapeItem<Scalar>>& step_items) {
    TapeStep<Scalar> s;
    s.time = time;
    s.kind = kind;
    s.layer = static_cast<std::int32_t>(layer);
    s.first_item = next_item();
    s.state = static_cast<std::int64_t>(step_states[static_cast<std::size_t>(layer)].size());
    items.insert(items.end(), step_items.begin(), step_items.end());
    steps.push_back(s);
  }
  // One more item of the last step (a merged step of simultaneous inputs or releases), for the
  // caller to fill in place.
  TapeItem<Scalar>& add_item_to_last_step() {
    if (steps.empty()) throw std::logic_error("tape: no step to add an item to");
    merged_inputs = true;
    return items.emplace_back();
  }
  std::vector<Scalar>& step_state_of(Index layer) {
    return step_states[static_cast<std::size_t>(layer)];
  }
  const Scalar* step_state(const TapeStep<Scalar>& s) const {
    return step_states[static_cast<std::size_t>(s.layer)].data() + s.state;
  }
  // The previous step of the same layer, or nullptr: a walk back over the other layers' steps,
  // so a walk over all of a layer's steps costs one pass over the tape.
  const TapeStep<Scalar>* previous(const TapeStep<Scalar>& s) const {
    for (std::int64_t i = index_of(s) - 1; i >= 0; --i)
      if (steps[static_cast<std::size_t>(i)].layer == s.layer)
        return &steps[static_cast<std::size_t>(i)];
    return nullptr;
  }
  // Items are appended step by step: a step's items end where the next step's begin.
  std::int64_t n_items(const TapeStep<Scalar>& s) const {
    const std::int64_t i = index_of(s);
    const std::int64_t end = i + 1 < static_cast<std::int64_t>(steps.size())
                                 ? steps[static_cast<std::size_t>(i + 1)].first_item
                                 : next_item();
    return end - s.first_item;
  }
  const TapeItem<Scalar>* items_of(const TapeStep<Scalar>& s) const {
    return items.data() + s.first_item;
  }

  // Bytes held: what "memory per event" reports.
  std::size_t bytes() const {
    std::size_t b =
        steps.size() * sizeof(TapeStep<Scalar>) + items.size() * sizeof(TapeItem<Scalar>);
    for (const auto& s : step_states) b += s.size() * sizeof(Scalar);
    for (const auto& a : end_states) b += a.size() * sizeof(Scalar);
    return b;
  }

 private:
  // Where a step of this tape (a reference into `steps`, never a copy) sits.
  std::int64_t index_of(const TapeStep<Scalar>& s) const {
    const std::int64_t i = &s - steps.data();
    if (i < 0 || i >= static_cast<std::int64_t>(steps.size()))
      throw std::logic_error("tape: a step that is not on this tape");
    return i;
  }
};

}  // namespace egret
