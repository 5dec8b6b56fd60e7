// The forward trajectory of a sparsely connected continuous EGRU layer
// (ContinuousEgruParams::sparse, box kernel), recomputed for the backward pass unit by unit, so
// that the backward pass costs what the forward pass cost: the connections of each event, not the
// layer's size.
//
// A unit's gates change only at the steps that touch it: a column that connects to it, or its own
// crossing (c is reset). Between two such steps its c follows one closed-form flow. The replay
// hands the adjoint, at each step, the pieces of trajectory that end there: for every unit the
// step touches, where its piece began (its anchor: the step that last touched it, -1 for t = 0),
// c at the anchor and at the step, and its gates since the anchor. A checkpoint step
// (continuous_egru_tape_steps.hpp) ends the piece of every unit, since the recomputation starts
// all units afresh from the checkpoint's dense state: O(N) once per K steps.
//
// The adjoint asks for steps latest first. A step outside the current run recomputes the run from
// the latest checkpoint before it up to it, applying the steps with the forward pass's own
// column scales (event_column) and weights, in the forward order. The pieces differ from the
// forward pass's (which splits a unit's flow at the times it settles) only by rounding.
// Memory: the pieces of one run, about (touches per step) x K.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "models/box_egru_cell.hpp"
#include "models/continuous_egru_columns.hpp"
#include "models/continuous_egru_params.hpp"
#include "models/continuous_egru_tape_steps.hpp"
#include "models/egru_connections.hpp"
#include "sim/tape.hpp"

namespace egret {

template <class Scalar>
class SparseEgruReplay {
 public:
  using Params = ContinuousEgruParams<Scalar>;
  using Cell = BoxEgruCell<Scalar>;
  using Connections = EgruConnections<Scalar>;

  // One unit's trajectory from its anchor step to the step that ends it: c goes from c_start to
  // c_end with the gates (u, z) held.
  struct Piece {
    Index unit;
    Index anchor;  // a step of the layer; -1: the initial state at t = 0
    Scalar c_start, c_end, u, z;
  };
  struct Pieces {
    const Piece *first, *last;
    const Piece* begin() const { return first; }
    const Piece* end() const { return last; }
    std::size_t size() const { return static_cast<std::size_t>(last - first); }
  };

  // The checkpoints are the dense layer's [c; a_u; a_z].
  static Index state_width(const Params& p) { return 3 * p.units(); }

  void begin(const Tape<Scalar>& tape, Index layer, const Params& p) {
    p_ = &p;
    steps_.begin(tape, layer, state_width(p));
    input_ = Connections::of(p.U_u, p.U_r, p.U_z);
    recurrent_ = Connections::of(p.V_u, p.V_r, p.V_z);
    const auto n = static_cast<std::size_t>(p.units());
    for (auto* v : {&c_, &a_u_, &a_z_, &u_, &z_}) v->assign(n, Scalar(0));
    anchor_.assign(n, -1);
    stamp_.assign(n, -2);
    first_ = 0;
    last_ = -1;
  }

  Index steps() const { return steps_.steps(); }
  const TapeStep<Scalar>& step(Index i) const { return steps_.step(i); }
  Scalar time(Index i) const { return steps_.time(i); }  // i = -1: t = 0
  const Connections& input_connections() const { return input_; }
  const Connections& recurrent_connections() const { return recurrent_; }

  // The pieces that end at the layer's step i: the crossing units first (in the step's order, so
  // the first crossing unit's piece comes first), then the units the step's columns connect to,
  // and at a checkpoint every other unit. Valid until the next call.
  Pieces pieces_ending_at(Index i) {
    if (i < first_ || i > last_) recompute_run_ending_at(i);
    const auto k = static_cast<std::size_t>(i - first_);
    return {pieces_.data() + run_begin_[k], pieces_.data() + run_begin_[k + 1]};
  }

 private:
  // From the latest checkpoint before step `last` (or the initial state), forward to `last`.
  void recompute_run_ending_at(Index last) {
    const Index from = last > 0 ? steps_.checkpoint_at_or_before(last - 1) : Index(-1);
    load_state(from);
    first_ = from + 1;
    last_ = last;
    pieces_.clear();
    run_begin_.assign(1, 0);
    for (Index j = first_; j <= last; ++j) {
      apply_step(j);
      run_begin_.push_back(pieces_.size());
    }
  }

  // Every unit anchored at step `from` with the checkpoint's state (from = -1: the initial one).
  void load_state(Index from) {
    const Params& p = *p_;
    const Index n = p.units();
    const Scalar* rec = from >= 0 ? steps_.tape().step_state(step(from)) : nullptr;
    for (Index m = 0; m < n; ++m) {
      const auto k = static_cast<std::size_t>(m);
      c_[k] = rec ? rec[m] : p.c_init[m];
      a_u_[k] = rec ? rec[n + m] : p.b_u[m];
      a_z_[k] = rec ? rec[2 * n + m] : p.b_z[m];
      u_[k] = Cell::update_gate(a_u_[k]);
      z_[k] = Cell::candidate(a_z_[k]);
      anchor_[k] = from;
    }
  }

  // What the layer did at step j (continuous_egru_layer.hpp): the touched units' c brought to the
  // step time with their gates so far (their pieces end here), the resets of the units that
  // crossed, the step's weight columns, then the touched units' new gates.
  void apply_step(Index j) {
    const TapeStep<Scalar>& st = step(j);
    const Tape<Scalar>& tape = steps_.tape();
    const TapeItem<Scalar>* items = tape.items_of(st);
    const std::int64_t n_items = tape.n_items(st);
    const bool crossing = st.kind == EventKind::kInternal;
    touched_.clear();
    if (crossing)
      for (std::int64_t k = 0; k < n_items; ++k) touch(items[k].index, j);
    for (std::int64_t k = 0; k < n_items; ++k)
      for (const auto& w : connections_of(items[k]).column(items[k].index)) touch(w.row, j);
    if (steps_.checkpoint(j))
      for (Index m = 0; m < p_->units(); ++m) touch(m, j);
    end_pieces(j, st.time);
    if (crossing)
      for (std::int64_t k = 0; k < n_items; ++k)
        c_[static_cast<std::size_t>(items[k].index)] = Cell::reset_state();
    for (std::int64_t k = 0; k < n_items; ++k) add_column(items[k]);
    for (Index m : touched_) {
      const auto k = static_cast<std::size_t>(m);
      u_[k] = Cell::update_gate(a_u_[k]);
      z_[k] = Cell::candidate(a_z_[k]);
    }
  }

  const Connections& connections_of(const TapeItem<Scalar>& it) const {
    const bool input = it.kind == EventKind::kInput || it.kind == EventKind::kInputRelease;
    return input ? input_ : recurrent_;
  }
  void touch(Index m, Index j) {
    auto& stamp = stamp_[static_cast<std::size_t>(m)];
    if (stamp == j) return;
    stamp = j;
    touched_.push_back(m);
  }
  // The touched units' pieces end at step j (time t); their new pieces start there.
  void end_pieces(Index j, Scalar t) {
    for (Index m : touched_) {
      const auto k = static_cast<std::size_t>(m);
      const Scalar c_end = Cell::flow(c_[k], u_[k], z_[k], t - time(anchor_[k]), p_->tau_m);
      pieces_.push_back({m, anchor_[k], c_[k], c_end, u_[k], z_[k]});
      c_[k] = c_end;
      anchor_[k] = j;
    }
  }
  // The item's column added to the pre-activations, as SparseEgruUnits::add_column does.
  void add_column(const TapeItem<Scalar>& it) {
    const EgruColumn<Scalar> col = event_column(*p_, it.kind, it.index, it.value, it.aux);
    for (const auto& w : connections_of(it).column(it.index)) {
      const auto k = static_cast<std::size_t>(w.row);
      a_u_[k] += col.scale_ur * w.u;
      a_z_[k] += col.scale_z * w.z;
    }
  }

  const Params* p_ = nullptr;
  ContinuousEgruTapeSteps<Scalar> steps_;
  Connections input_, recurrent_;
  // Per unit during a run: c at its anchor, its pre-activations and gates since then.
  std::vector<Scalar> c_, a_u_, a_z_, u_, z_;
  std::vector<Index> anchor_;
  std::vector<Index> stamp_;  // the last step that touched the unit (dedupes a step's touches)
  std::vector<Index> touched_;
  Index first_ = 0, last_ = -1;         // the run: steps first_ .. last_
  std::vector<Piece> pieces_;           // the run's pieces, step by step
  std::vector<std::size_t> run_begin_;  // step first_ + k's pieces start at run_begin_[k]
};

}  // namespace egret
