// The state of a fully connected continuous EGRU layer: one anchor time t_last for all units.
// Every event that reaches the layer (input, release, emission) changes every unit's gate
// pre-activations through a dense weight column, so every unit is brought to the event time
// anyway. An event advances c in closed form (once per time) and adds its weight columns; the
// gates, every unit's closed-form next crossing time and the layer's earliest crossing are
// refreshed lazily, when the engine next asks for them (settle()). Simultaneous inputs and
// releases (a binned input stream sends many at one time) therefore cost one crossing pass
// together, not one each: the engine does not ask between events of one time that precede
// internal events (sim/engine.hpp). The results are bitwise those of refreshing after every
// event: the same columns are added in the same order, and the crossing times depend only on
// the state after the last of them.
//
// Same interface as SparseEgruUnits (box_sparse_units.hpp), which a sparsely
// connected layer uses instead; ContinuousEgruLayer holds one of the two.
#pragma once

#include <array>
#include <limits>
#include <vector>

#include "models/continuous_egru/box_kernel_cell.hpp"
#include "models/continuous_egru/checkpoint_layout.hpp"
#include "models/continuous_egru/continuous_egru_params.hpp"
#include "models/continuous_egru/event_columns.hpp"

namespace egret {

template <class Scalar>
class DenseEgruUnits {
 public:
  using Cell = BoxEgruCell<Scalar>;
  using Array = typename Cell::Array;
  using Params = ContinuousEgruParams<Scalar>;

  explicit DenseEgruUnits(const Params& p) {
    const Index n = p.units();
    for (Array* v : {&a_u_, &a_r_, &a_z_, &c_, &u_, &z_, &crossing_}) v->resize(n);
    theta_ = p.theta.array();
    tau_m_ = p.tau_m.array();
    shared_tau_m_ = n > 0 && (tau_m_ == tau_m_[0]).all();
  }

  // Every unit at t = 0 with its initial state, settled.
  void reset(const Params& p) {
    a_u_ = p.b_u.array();
    a_r_ = p.b_r.array();
    a_z_ = p.b_z.array();
    c_ = p.c_init.array();
    t_last_ = 0;
    dirty_ = true;
    settle(p);
  }

  Index units() const { return c_.size(); }
  Scalar a_r(Index m) const { return a_r_[m]; }
  // The gate pre-activations a_u, a_r, a_z of every unit, for snapshots.
  std::array<std::vector<Scalar>, 3> preactivations(Scalar /*t: constant between events*/) const {
    auto vec = [](const Array& v) { return std::vector<Scalar>(v.data(), v.data() + v.size()); };
    return {vec(a_u_), vec(a_r_), vec(a_z_)};
  }

  // Brings every unit's c to t with the gates of the interval before it (settled first: they
  // are those of the state after the last event).
  void begin_time(Scalar t, const Params& p) {
    if (t == t_last_) return;
    settle(p);
    with_tau_m([&](const auto& tau_m) { Cell::advance(c_, u_, z_, t - t_last_, tau_m); });
    t_last_ = t;
  }

  // Events' weight columns added to every unit's pre-activations, in order (vectorised over the
  // units); the gates and crossing times wait for settle().
  void add_columns(const EgruColumn<Scalar>* cols, Index n_cols) {
    if (n_cols == 0) return;
    apply_columns(cols, n_cols, units(), a_u_, &a_r_, a_z_);
    dirty_ = true;
  }

  void reset_unit(Index m) {
    c_[m] = Cell::reset_state();
    dirty_ = true;
  }

  // The gates and every unit's next crossing time from the state at t_last, and the earliest
  // (ties go to the smallest unit index); once per batch of events at one time.
  void settle(const Params&) {
    if (!dirty_) return;
    Cell::gates(a_u_, a_z_, u_, z_);
    with_tau_m([&](const auto& tau_m) {
      Cell::crossing_times(c_, u_, z_, theta_, tau_m, t_last_, crossing_);
    });
    find_earliest();
    dirty_ = false;
  }

  // Requires settle() since the last change.
  Index earliest_unit() const { return earliest_unit_; }
  Scalar earliest_time() const { return earliest_time_; }
  // The units whose crossing time is t, in increasing index order.
  void units_crossing_at(Scalar t, const Params& p, std::vector<Index>& out) {
    settle(p);
    for (Index m = 0; m < units(); ++m)
      if (crossing_[m] == t) out.push_back(m);
  }
  const Array& crossing_times(const Params& p) {
    settle(p);
    return crossing_;
  }

  // c of every unit at time t >= t_last, with the settled gates.
  void state_at(Scalar t, Scalar* c_out) const {
    for (Index m = 0; m < units(); ++m)
      c_out[m] = Cell::flow(c_[m], u_[m], z_[m], t - t_last_, tau_m_[m]);
  }
  // A checkpoint of the tape (checkpoint_layout.hpp): [c; a_u; a_z] at t_last.
  void append_state_now(std::vector<Scalar>& out) const {
    CheckpointLayout::append(out, units(), GateKernel::kBox, [&](CheckpointBlock b, Scalar* to) {
      const Array& from = b == CheckpointBlock::kC ? c_ : b == CheckpointBlock::kAu ? a_u_ : a_z_;
      std::copy(from.data(), from.data() + from.size(), to);
    });
  }

 private:
  // f(tau_m) with the units' time constants: one Scalar when they share it (one division per
  // event instead of one per unit; the results are the same), else the array.
  template <class F>
  void with_tau_m(F&& f) const {
    if (shared_tau_m_)
      f(tau_m_[0]);
    else
      f(tau_m_);
  }

  // The earliest crossing time and the smallest unit index at it: the minimum vectorised, then
  // the first unit holding it (a scalar compare-and-branch loop over every unit took a tenth of
  // settle() at 64 units). Only a NaN time (a state that is no longer finite) can leave no unit
  // equal to the minimum; Eigen's scan then decides (from unit 0, a strictly smaller time wins).
  void find_earliest() {
    const Scalar best = crossing_.minCoeff();
    for (Index m = 0; m < units(); ++m) {
      if (crossing_[m] == best) {
        earliest_time_ = best;
        earliest_unit_ = m;
        return;
      }
    }
    earliest_time_ = crossing_.minCoeff(&earliest_unit_);
  }

  Array a_u_, a_r_, a_z_, c_;  // state at t_last_
  Array theta_, tau_m_;        // thresholds and state time constants (copies of the parameters)
  bool shared_tau_m_ = false;  // every unit has the same tau_m
  Scalar t_last_ = 0;
  // Derived from the state by settle(): gates (constant until the next event), each unit's
  // absolute next crossing time, the earliest; dirty_ when an event changed the state.
  Array u_, z_, crossing_;
  Scalar earliest_time_ = never<Scalar>();
  Index earliest_unit_ = 0;
  bool dirty_ = true;
};

}  // namespace egret
