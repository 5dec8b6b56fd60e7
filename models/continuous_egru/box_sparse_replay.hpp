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
// (checkpoint_steps.hpp) ends the piece of every unit, since the recomputation starts
// all units afresh from the checkpoint's dense state: O(N) once per K steps.
//
// The adjoint asks for steps latest first. A step outside the current run recomputes the run from
// the latest checkpoint before it up to it, applying the steps with the forward pass's own
// column scales (event_column) and weights, in the forward order. The pieces differ from the
// forward pass's (which splits a unit's flow at the times it settles) only by rounding.
// Memory: the pieces of one run, about (touches per step) x K.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "models/continuous_egru/box_kernel_cell.hpp"
#include "models/continuous_egru/checkpoint_layout.hpp"
#include "models/continuous_egru/checkpoint_steps.hpp"
#include "models/continuous_egru/continuous_egru_params.hpp"
#include "models/continuous_egru/event_columns.hpp"
#include "models/continuous_egru/sparse_connections.hpp"
#include "sim/tape.hpp"

namespace egret {

template <class Scalar>
class SparseEgruReplay {
 public:
  using Params = ContinuousEgruParams<Scalar>;
  using Cell = BoxEgruCell<Scalar>;
  using Connections = EgruConnections<Scalar>;

  // One unit's trajectory from its anchor step to the step that ends it: c goes from c_start to
  // c_end over dt with the gates (u, z) held; decay = exp(-u dt / tau_m), which the adjoint
  // needs again.
  struct Piece {
    Index unit;
    Index anchor;  // a step of the layer; -1: the initial state at t = 0
    Scalar c_start, c_end, u, z, dt, decay;
    // Left unset: end_pieces() grows the log by a step's pieces and writes each field once
    // (building each piece on the stack and copying it costs a store-forwarding stall per piece).
    Piece() {}  // NOLINT: deliberately uninitialised
  };
  struct Pieces {
    const Piece *first, *last;
    const Piece* begin() const { return first; }
    const Piece* end() const { return last; }
    std::size_t size() const { return static_cast<std::size_t>(last - first); }
  };

  // The layer's connections (SparseEgruConnections::of its parameters), before begin().
  void use_connections(std::shared_ptr<const SparseEgruConnections<Scalar>> connections) {
    connections_ = std::move(connections);
  }

  void begin(const Tape<Scalar>& tape, Index layer, const Params& p) {
    if (!connections_) throw std::logic_error("SparseEgruReplay: no connections");
    p_ = &p;
    steps_.begin(tape, layer, CheckpointLayout::width(p));  // box kernel: [c; a_u; a_z]
    unit_.assign(static_cast<std::size_t>(p.units()), UnitState{});
    for (auto* a : {&batch_c_, &batch_u_, &batch_z_, &batch_dt_, &batch_a_u_, &batch_a_z_,
                    &batch_decay_, &batch_tau_m_})
      a->setZero(Cell::whole_packets(p.units()));
    batch_tau_m_.setOnes();  // finite in the lanes past the touched units
    touched_.reserve(static_cast<std::size_t>(p.units()));
    batch_anchor_.resize(static_cast<std::size_t>(p.units()));
    first_ = 0;
    last_ = -1;
  }

  Index steps() const { return steps_.steps(); }
  const TapeStep<Scalar>& step(Index i) const { return steps_.step(i); }
  Scalar time(Index i) const { return steps_.time(i); }  // i = -1: t = 0
  const Connections& input_connections() const { return connections_->input; }
  const Connections& recurrent_connections() const { return connections_->recurrent; }

  // The pieces that end at the layer's step i: the crossing units first (in the step's order, so
  // the first crossing unit's piece comes first), then the units the step's columns connect to,
  // and at a checkpoint every other unit. Valid until the next call.
  Pieces pieces_ending_at(Index i) {
    if (i < first_ || i > last_) recompute_run_ending_at(i);
    const auto k = static_cast<std::size_t>(i - first_);
    return {pieces_.data() + run_begin_[k], pieces_.data() + run_begin_[k + 1]};
  }

  // For a step where several units cross together, the pre-activations a_u, a_z before its
  // columns of the units whose pieces end there, in the order of pieces_ending_at(i) (call that
  // first: they are kept for the steps of the current run).
  std::pair<const Scalar*, const Scalar*> pre_activations_before(Index i) const {
    const auto at = std::lower_bound(tied_steps_.begin(), tied_steps_.end(), TiedStep{i, 0});
    if (i < first_ || i > last_ || at == tied_steps_.end() || at->step != i)
      throw std::logic_error("SparseEgruReplay: no pre-activations kept for this step");
    return {tied_a_u_.data() + at->offset, tied_a_z_.data() + at->offset};
  }

  // Every unit's piece from the last step that touched it (or t = 0) to `end`, the run's end: the
  // trajectory after the layer's last step, which the state regulariser integrates. Valid until
  // the next call.
  Pieces pieces_ending_at_end(Scalar end) {
    const Index last = steps() - 1;
    if (last < 0)
      load_state(-1);
    else if (last < first_ || last > last_)
      recompute_run_ending_at(last);
    final_.resize(unit_.size());
    for (std::size_t m = 0; m < unit_.size(); ++m) {
      const UnitState& r = unit_[m];
      Piece& pc = final_[m];
      pc.unit = static_cast<Index>(m);
      pc.anchor = r.anchor;
      pc.c_start = r.c;
      pc.u = r.u;
      pc.z = r.z;
      pc.dt = end - r.t_anchor;
      pc.decay = std::exp(-r.u * pc.dt / p_->tau_m[static_cast<Index>(m)]);
      pc.c_end = r.c + (r.z - r.c) * (Scalar(1) - pc.decay);
    }
    return {final_.data(), final_.data() + final_.size()};
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
    tied_steps_.clear();
    tied_a_u_.clear();
    tied_a_z_.clear();
    for (Index j = first_; j <= last; ++j) {
      apply_step(j);
      run_begin_.push_back(pieces_.size());
    }
  }

  // Every unit anchored at step `from` with the checkpoint's state (from = -1: the initial one).
  // The gates through Cell::gates, as the forward pass computed them.
  void load_state(Index from) {
    const Params& p = *p_;
    const Index n = p.units();
    const Scalar* rec = from >= 0 ? steps_.tape().step_state(step(from)) : nullptr;
    const Scalar* rec_c = rec ? CheckpointLayout::block(rec, n, CheckpointBlock::kC) : nullptr;
    const Scalar* rec_u = rec ? CheckpointLayout::block(rec, n, CheckpointBlock::kAu) : nullptr;
    const Scalar* rec_z = rec ? CheckpointLayout::block(rec, n, CheckpointBlock::kAz) : nullptr;
    const Scalar t = time(from);
    for (Index m = 0; m < n; ++m) {
      batch_a_u_[m] = rec ? rec_u[m] : p.b_u[m];
      batch_a_z_[m] = rec ? rec_z[m] : p.b_z[m];
    }
    const Index np = Cell::whole_packets(n);
    Cell::gates(batch_a_u_.head(np), batch_a_z_.head(np), batch_u_.head(np), batch_z_.head(np));
    for (Index m = 0; m < n; ++m) {
      UnitState& r = unit_[static_cast<std::size_t>(m)];
      r = {rec ? rec_c[m] : p.c_init[m],
           batch_a_u_[m],
           batch_a_z_[m],
           batch_u_[m],
           batch_z_[m],
           t,
           from,
           -2};
    }
  }

  // What the layer did at step j (continuous_egru_layer.hpp): the step's columns added on their
  // connections, marking the units they touch; the touched units' c brought to the step time with
  // their gates so far (their pieces end here) and their new gates, in one vectorised batch; the
  // resets of the units that crossed.
  void apply_step(Index j) {
    const TapeStep<Scalar>& st = step(j);
    const Tape<Scalar>& tape = steps_.tape();
    const TapeItem<Scalar>* items = tape.items_of(st);
    const std::int64_t n_items = tape.n_items(st);
    const bool crossing = st.kind == EventKind::kInternal;
    touched_.clear();
    if (crossing)  // first, so that the first crossing unit's piece comes first
      for (std::int64_t k = 0; k < n_items; ++k) touch(items[k].index, j);
    const bool tied = crossing && n_items > 1;
    if (tied) keep_pre_activations_before(items, n_items, j);
    for (std::int64_t k = 0; k < n_items; ++k) add_column(items[k], j);
    if (steps_.checkpoint(j))
      for (Index m = 0; m < p_->units(); ++m) touch(m, j);
    if (tied) keep_pre_activations_of_untouched_columns();
    end_pieces(j, st.time);
    if (crossing)
      for (std::int64_t k = 0; k < n_items; ++k)
        unit_[static_cast<std::size_t>(items[k].index)].c = Cell::reset_state();
  }

  // Units crossing together (tied_crossings.hpp) need the pre-activations before the step's
  // columns of every unit whose piece ends at the step, in the pieces' order: the columns'
  // units are touched first (in add_column's order) and kept; a checkpoint's other units, which
  // no column changes, after the columns.
  void keep_pre_activations_before(const TapeItem<Scalar>* items, std::int64_t n, Index j) {
    for (std::int64_t k = 0; k < n; ++k)
      for (const auto& w : connections_of(items[k]).column(items[k].index)) touch(w.row, j);
    tied_steps_.push_back({j, tied_a_u_.size()});
    for (const Index m : touched_) {
      tied_a_u_.push_back(unit_[static_cast<std::size_t>(m)].a_u);
      tied_a_z_.push_back(unit_[static_cast<std::size_t>(m)].a_z);
    }
  }
  void keep_pre_activations_of_untouched_columns() {
    for (std::size_t q = tied_a_u_.size() - tied_steps_.back().offset; q < touched_.size(); ++q) {
      tied_a_u_.push_back(unit_[static_cast<std::size_t>(touched_[q])].a_u);
      tied_a_z_.push_back(unit_[static_cast<std::size_t>(touched_[q])].a_z);
    }
  }

  const Connections& connections_of(const TapeItem<Scalar>& it) const {
    const bool input = it.kind == EventKind::kInput || it.kind == EventKind::kInputRelease;
    return input ? connections_->input : connections_->recurrent;
  }
  void touch(Index m, Index j) {
    auto& stamp = unit_[static_cast<std::size_t>(m)].stamp;
    if (stamp == j) return;
    stamp = j;
    touched_.push_back(m);
  }
  // The item's column added to the pre-activations, as SparseEgruUnits::add_column does; the
  // gates of the touched units are replaced only in end_pieces.
  void add_column(const TapeItem<Scalar>& it, Index j) {
    const EgruColumn<Scalar> col = event_column(*p_, it.kind, it.index, it.value, it.aux);
    for (const auto& w : connections_of(it).column(it.index)) {
      UnitState& r = unit_[static_cast<std::size_t>(w.row)];
      r.a_u += col.scale_ur * w.u;
      r.a_z += col.scale_z * w.z;
      touch(w.row, j);
    }
  }
  // The touched units' pieces end at step j (time t) and their new ones start there. The flow
  // and the gates run over whole SIMD packets (the lanes past the touched units hold finite
  // leftovers, not read back), as in SparseEgruUnits::settle.
  void end_pieces(Index j, Scalar t) {
    const auto k = static_cast<Index>(touched_.size());
    for (Index i = 0; i < k; ++i) {
      const UnitState& r = unit_[static_cast<std::size_t>(touched_[static_cast<std::size_t>(i)])];
      batch_c_[i] = r.c;
      batch_u_[i] = r.u;
      batch_z_[i] = r.z;
      batch_dt_[i] = t - r.t_anchor;
      batch_tau_m_[i] = p_->tau_m[touched_[static_cast<std::size_t>(i)]];
      batch_a_u_[i] = r.a_u;
      batch_a_z_[i] = r.a_z;
      batch_anchor_[static_cast<std::size_t>(i)] = r.anchor;
    }
    const Index kp = Cell::whole_packets(k);
    auto u = batch_u_.head(kp), z = batch_z_.head(kp), decay = batch_decay_.head(kp);
    decay = Cell::decays(u, batch_dt_.head(kp), batch_tau_m_.head(kp));
    const std::size_t at = pieces_.size();
    pieces_.resize(at + static_cast<std::size_t>(k));
    Piece* out = pieces_.data() + at;
    for (Index i = 0; i < k; ++i) {
      const Index m = touched_[static_cast<std::size_t>(i)];
      const Scalar c0 = batch_c_[i];
      Piece& pc = out[i];
      pc.unit = m;
      pc.anchor = batch_anchor_[static_cast<std::size_t>(i)];
      pc.c_start = c0;
      pc.c_end = c0 + (batch_z_[i] - c0) * (Scalar(1) - batch_decay_[i]);
      pc.u = batch_u_[i];
      pc.z = batch_z_[i];
      pc.dt = batch_dt_[i];
      pc.decay = batch_decay_[i];
    }
    Cell::gates(batch_a_u_.head(kp), batch_a_z_.head(kp), u, z);
    for (Index i = 0; i < k; ++i) {
      const Piece& pc = out[i];
      UnitState& r = unit_[static_cast<std::size_t>(pc.unit)];
      r.c = pc.c_end;
      r.u = batch_u_[i];
      r.z = batch_z_[i];
      r.t_anchor = t;
      r.anchor = j;
    }
  }

  // A unit's state during a run: c at its anchor (step and time), its pre-activations and its
  // gates since then, and the last step that touched it (dedupes a step's touches). One record
  // in one cache line, so that touching a unit reads one place.
  struct alignas(64) UnitState {
    Scalar c = 0, a_u = 0, a_z = 0, u = 0, z = 0, t_anchor = 0;
    Index anchor = -1, stamp = -2;
  };

  const Params* p_ = nullptr;
  ContinuousEgruTapeSteps<Scalar> steps_;
  std::shared_ptr<const SparseEgruConnections<Scalar>> connections_;
  std::vector<UnitState> unit_;
  std::vector<Index> touched_;  // by the current step, in order
  using Array = typename Cell::Array;
  Array batch_c_, batch_u_, batch_z_, batch_dt_, batch_a_u_, batch_a_z_, batch_decay_, batch_tau_m_;
  std::vector<Index> batch_anchor_;
  Index first_ = 0, last_ = -1;         // the run: steps first_ .. last_
  std::vector<Piece> pieces_;           // the run's pieces, step by step
  std::vector<Piece> final_;            // every unit's piece after the last step
  std::vector<std::size_t> run_begin_;  // step first_ + k's pieces start at run_begin_[k]
  // The run's steps where units cross together, in order, and where each one's pre-activations
  // start in tied_a_u_, tied_a_z_.
  struct TiedStep {
    Index step;
    std::size_t offset;
    bool operator<(const TiedStep& o) const { return step < o.step; }
  };
  std::vector<TiedStep> tied_steps_;
  std::vector<Scalar> tied_a_u_, tied_a_z_;
};

}  // namespace egret
