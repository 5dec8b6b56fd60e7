// A layer of N continuous-time EGRU units with the box gate kernel, driven by the engine.
//
// All units of a layer share one anchor time t_last: every event that reaches the layer (input,
// release, emission) changes every unit's gate pre-activations through a dense weight column, so
// every unit is brought to the event time anyway. An event advances c in closed form (once per
// time) and adds its weight columns; the gates, every unit's closed-form next crossing time and
// the layer's earliest crossing are refreshed lazily, when the engine next asks for them
// (settle()). Simultaneous inputs and releases (a binned input stream sends many at one time)
// therefore cost one crossing pass together, not one each: the engine does not ask between
// events of one time that precede internal events (sim/engine.hpp). The results are bitwise
// those of refreshing after every event: the same columns are added in the same order, and the
// crossing times depend only on the state after the last of them. The engine sees one "next
// internal event" per layer instead of N queue entries.
//
// A sparsely connected layer (ContinuousEgruParams::sparse) keeps its state unit by unit instead
// (models/continuous_egru_sparse_units.hpp), so an event costs its column's connections; the
// layer's own state arrays then go unused.
#pragma once

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "models/box_egru_cell.hpp"
#include "models/continuous_egru_adjoint.hpp"
#include "models/continuous_egru_columns.hpp"
#include "models/continuous_egru_params.hpp"
#include "models/continuous_egru_sparse_units.hpp"
#include "models/synapse_counting.hpp"
#include "sim/layer.hpp"

namespace egret {

template <class Scalar>
class ContinuousEgruLayer final : public Layer<Scalar> {
 public:
  using Params = ContinuousEgruParams<Scalar>;
  using Cell = BoxEgruCell<Scalar>;
  using Array = typename Cell::Array;

  explicit ContinuousEgruLayer(std::shared_ptr<const Params> params) : p_(std::move(params)) {
    if (!p_) throw std::invalid_argument("continuous_egru layer: null parameters");
    p_->validate();
    const Index n = p_->units();
    for (auto* v : {&a_u_, &a_r_, &a_z_, &c_, &u_, &z_, &crossing_}) v->resize(n);
    theta_ = p_->theta.array();
    if (p_->sparse) sparse_.emplace(*p_);
    count_patterns();
    reset();
  }

  std::string type_name() const override { return "continuous_egru"; }
  Index units() const override { return p_->units(); }
  Index inputs() const override { return p_->inputs(); }
  Scalar output_time_constant() const override { return p_->tau_o; }
  bool clocked() const override { return false; }
  const Params& params() const { return *p_; }

  std::unique_ptr<Layer<Scalar>> clone() const override {
    return std::make_unique<ContinuousEgruLayer>(p_);
  }

  void reset() override {
    counts_ = {};
    if (sparse_) {
      sparse_->reset(*p_);
      return;
    }
    a_u_ = p_->b_u.array();
    a_r_ = p_->b_r.array();
    a_z_ = p_->b_z.array();
    c_ = p_->c_init.array();
    t_last_ = 0;
    counts_ = {};
    dirty_ = true;
    settle();
  }

  void receive_input(Scalar t, Index channel, Scalar value, Scheduler<Scalar>& sched) override {
    const Column col = event_column(*p_, EventKind::kInput, channel, value, Scalar(0));
    add_columns(t, &col, 1);
    count_input_column(channel, col.scale_ur);
    if (std::isfinite(p_->window_input)) {
      sched.schedule(t + p_->window_input, EventKind::kInputRelease, channel, value);
    }
  }

  void release(const Event<Scalar>& e) override {
    const Column col = event_column(*p_, e.kind, e.index, e.value, e.aux);
    if (e.kind == EventKind::kInputRelease) {
      count_input_column(e.index, col.scale_ur);
    } else {
      count_recurrent_column(e.index, col.scale_ur, col.scale_z);
      counts_.membrane_updates += recurrent_reach_[static_cast<std::size_t>(e.index)];
    }
    add_columns(e.time, &col, 1);
  }

  InternalEvent<Scalar> next_internal_event() const override {
    settle();
    if (sparse_) return {sparse_->earliest_time(), sparse_->earliest_unit()};
    return {min_time_, min_unit_};
  }

  // Every unit whose crossing time is exactly t fires, synchronously: each sends y = theta with
  // its reset gate r_n(t-) read before any of the simultaneous jumps, so the result does not
  // depend on the order of units.
  void fire(Scalar t, Scheduler<Scalar>& sched, std::vector<Emission<Scalar>>& out) override {
    collect_firing_units(t);
    if (firing_.empty()) throw std::logic_error("continuous_egru: fire() with no crossing at t");
    advance(t);
    columns_.clear();
    for (Index n : firing_) {
      const Scalar y = Cell::event_value(p_->theta[n]);
      const Scalar r = Cell::reset_gate(sparse_ ? sparse_->a_r(n) : a_r_[n]);
      if (sparse_)
        sparse_->reset_unit(n);
      else
        c_[n] = Cell::reset_state();
      columns_.push_back(event_column(*p_, EventKind::kInternal, n, y, r));
      out.push_back({n, y, r});
      if (std::isfinite(p_->window_recurrent)) {
        sched.schedule(t + p_->window_recurrent, EventKind::kRecurrentRelease, n, y, r);
      }
    }
    add_columns(t, columns_.data(), static_cast<Index>(columns_.size()));
    for (std::size_t k = 0; k < firing_.size(); ++k) {
      count_recurrent_column(firing_[k], columns_[k].scale_ur, columns_[k].scale_z);
      count_product(counts_, out[out.size() - firing_.size() + k].aux,
                    out[out.size() - firing_.size() + k].value);  // r_n(s-) y
    }
    count_fired_reach();
  }

  LayerState<Scalar> state_at(Scalar t) const override {
    settle();
    const Index n = units();
    std::vector<Scalar> c(n);
    if (sparse_)
      sparse_->state_at(t, p_->tau_m, c.data());
    else
      for (Index m = 0; m < n; ++m) c[m] = Cell::flow(c_[m], u_[m], z_[m], t - t_last_, p_->tau_m);
    auto vec = [](const Array& v) { return std::vector<Scalar>(v.data(), v.data() + v.size()); };
    LayerState<Scalar> s;
    if (sparse_)
      s.variables = {{"a_u", sparse_->field(&SparseEgruUnits<Scalar>::UnitRecord::a_u)},
                     {"a_r", sparse_->field(&SparseEgruUnits<Scalar>::UnitRecord::a_r)},
                     {"a_z", sparse_->field(&SparseEgruUnits<Scalar>::UnitRecord::a_z)},
                     {"c", c}};
    else
      s.variables = {{"a_u", vec(a_u_)}, {"a_r", vec(a_r_)}, {"a_z", vec(a_z_)}, {"c", c}};
    s.primary = "c";
    return s;
  }

  OperationCounts operation_counts() const override { return counts_; }
  // Dense: the discrete-time equivalent stepping every unit's three gates over all inputs and
  // units (docs/metrics.md states the step); a unit's state is (a_u, a_r, a_z, c).
  DenseCost dense_cost() const override {
    return {3 * (dense_pairs(p_->U_u) + dense_pairs(p_->V_u)), 4};
  }

  NamedParameters<Scalar> parameters() const override { return collect_parameters<Scalar>(*p_); }
  std::unique_ptr<Layer<Scalar>> with_parameters(
      const NamedParameters<Scalar>& values) const override {
    auto p = std::make_shared<Params>(*p_);
    assign_parameters(*p, values, type_name());
    return std::make_unique<ContinuousEgruLayer>(std::move(p));
  }

  // The sparse layer keeping each sender's largest connections (|w_u| + |w_r| + |w_z|).
  std::unique_ptr<Layer<Scalar>> pruned(double keep) const override {
    auto p = std::make_shared<Params>(*p_);
    p->keep_largest_connections(static_cast<Scalar>(keep), static_cast<Scalar>(keep));
    p->sparse = true;
    return std::make_unique<ContinuousEgruLayer>(std::move(p));
  }

  std::unique_ptr<LayerAdjoint<Scalar>> make_adjoint() const override {
    return std::make_unique<ContinuousEgruAdjoint<Scalar>>(p_);
  }
  // The tape keeps the state [c; a_u; a_z] right after every K-th step of the layer (the first
  // included); the adjoint recomputes the steps in between forward from these checkpoints
  // (continuous_egru_replay.hpp). a_r is not needed: each emission's reset gate is on the tape.
  void set_tape_recording(const TapeSettings& s) override {
    checkpoint_every_ = s.checkpoint_every > 0 ? s.checkpoint_every : auto_checkpoint_every();
    steps_to_checkpoint_ = 0;
  }
  void record_step_state(EventKind, std::vector<Scalar>& out) const override {
    if (steps_to_checkpoint_-- > 0) return;
    steps_to_checkpoint_ = checkpoint_every_ - 1;
    if (sparse_) return sparse_->append_state_now(p_->tau_m, out);
    for (const Array* a : {&c_, &a_u_, &a_z_})
      out.insert(out.end(), a->data(), a->data() + a->size());
  }
  // About kCheckpointBytesPerStep of checkpoint per step, whatever the size of the layer.
  std::int64_t auto_checkpoint_every() const {
    const auto bytes = static_cast<std::int64_t>(3 * units() * Index(sizeof(Scalar)));
    return std::max<std::int64_t>(1,
                                  (bytes + kCheckpointBytesPerStep - 1) / kCheckpointBytesPerStep);
  }
  static constexpr std::int64_t kCheckpointBytesPerStep = 64;

  // Per-unit view of the current crossing times (for tests and diagnostics).
  const Array& crossing_times() const {
    settle();
    return sparse_ ? sparse_->crossing_times(*p_) : crossing_;
  }

 private:
  // Counting (docs/metrics.md): an event's synaptic pairs are its columns' nonzero weights; the
  // units it updates are those with a nonzero weight in one of its columns (its reach), and at a
  // crossing also the units that reset.
  void count_patterns() {
    const Params& p = *p_;
    U_ = {WeightPattern<Scalar>(p.U_u), WeightPattern<Scalar>(p.U_r), WeightPattern<Scalar>(p.U_z)};
    V_ = {WeightPattern<Scalar>(p.V_u), WeightPattern<Scalar>(p.V_r), WeightPattern<Scalar>(p.V_z)};
    auto reach = [](const Matrix<Scalar>& a, const Matrix<Scalar>& b, const Matrix<Scalar>& c) {
      std::vector<std::uint64_t> r(static_cast<std::size_t>(a.cols()), 0);
      for (Index k = 0; k < a.cols(); ++k)
        for (Index m = 0; m < a.rows(); ++m)
          if (a(m, k) != Scalar(0) || b(m, k) != Scalar(0) || c(m, k) != Scalar(0))
            ++r[static_cast<std::size_t>(k)];
      return r;
    };
    input_reach_ = reach(p.U_u, p.U_r, p.U_z);
    recurrent_reach_ = reach(p.V_u, p.V_r, p.V_z);
  }
  void count_input_column(Index k, Scalar operand) {
    for (const auto& U : U_) add_column(U, k, operand);
    counts_.membrane_updates += input_reach_[static_cast<std::size_t>(k)];
  }
  void count_recurrent_column(Index n, Scalar operand_ur, Scalar operand_z) {
    add_column(V_[0], n, operand_ur);
    add_column(V_[1], n, operand_ur);
    add_column(V_[2], n, operand_z);
  }
  void add_column(const WeightPattern<Scalar>& w, Index k, Scalar operand) {
    if (operand == Scalar(0)) return;
    (is_binary_operand(operand) ? counts_.synaptic_acs : counts_.synaptic_macs) += w.column(k);
  }
  // The units a crossing updates: the union of the firing units' reach and the firing units.
  void count_fired_reach() {
    if (firing_.size() == 1) {
      const Index n = firing_[0];
      const bool self =
          p_->V_u(n, n) != Scalar(0) || p_->V_r(n, n) != Scalar(0) || p_->V_z(n, n) != Scalar(0);
      counts_.membrane_updates += recurrent_reach_[static_cast<std::size_t>(n)] + (self ? 0 : 1);
      return;
    }
    for (Index m = 0; m < units(); ++m) {
      bool reached = std::find(firing_.begin(), firing_.end(), m) != firing_.end();
      for (std::size_t k = 0; k < firing_.size() && !reached; ++k) {
        const Index n = firing_[k];
        reached =
            p_->V_u(m, n) != Scalar(0) || p_->V_r(m, n) != Scalar(0) || p_->V_z(m, n) != Scalar(0);
      }
      if (reached) ++counts_.membrane_updates;
    }
  }

  using Column = EgruColumn<Scalar>;

  // firing_: the units whose crossing time is t, in increasing index order.
  void collect_firing_units(Scalar t) {
    settle();
    firing_.clear();
    if (sparse_) return sparse_->units_crossing_at(t, *p_, firing_);
    for (Index m = 0; m < units(); ++m)
      if (crossing_[m] == t) firing_.push_back(m);
  }

  // c to time t with the gates of the interval before it (settled first: they are those of the
  // state after the last event).
  void advance(Scalar t) {
    if (sparse_) return sparse_->begin_time(t, *p_);
    if (t == t_last_) return;
    settle();
    Cell::advance(c_, u_, z_, t - t_last_, p_->tau_m);
    t_last_ = t;
  }

  // An event at t: c advanced to t, the event's weight columns added to the pre-activations
  // (vectorised over the units); the gates and crossing times wait for settle().
  void add_columns(Scalar t, const Column* cols, Index n_cols) {
    const Index n = units();
    advance(t);
    if (sparse_) {
      for (Index k = 0; k < n_cols; ++k) sparse_->add_column(cols[k]);
      return;
    }
    for (Index k = 0; k < n_cols; ++k) apply_column(cols[k], n, a_u_, &a_r_, a_z_);
    dirty_ = true;
  }

  // The gates and every unit's next crossing time from the state at t_last_, and the earliest
  // (ties go to the smallest unit index); once per batch of events at one time.
  void settle() const {
    if (sparse_) return sparse_->settle(*p_);
    if (!dirty_) return;
    const Index n = units();
    Cell::gates(a_u_, a_z_, u_, z_);
    Cell::crossing_times(c_, u_, z_, theta_, p_->tau_m, t_last_, crossing_);
    Scalar best = crossing_[0];
    Index best_unit = 0;
    for (Index m = 1; m < n; ++m) {
      if (crossing_[m] < best) {
        best = crossing_[m];
        best_unit = m;
      }
    }
    min_time_ = best;
    min_unit_ = best_unit;
    dirty_ = false;
  }

  std::shared_ptr<const Params> p_;
  // The per-unit state of a sparsely connected layer (p_->sparse); the members below serve the
  // dense layer.
  mutable std::optional<SparseEgruUnits<Scalar>> sparse_;
  Array a_u_, a_r_, a_z_, c_;  // state at t_last_
  Array theta_;                // thresholds (array copy of the parameter)
  Scalar t_last_ = 0;
  // Derived from the state by settle(), lazily: gates (constant until the next event), each
  // unit's absolute next crossing time, the earliest; dirty_ when an event changed the state.
  mutable Array u_, z_;
  mutable Array crossing_;
  mutable Scalar min_time_ = never<Scalar>();
  mutable Index min_unit_ = 0;
  mutable bool dirty_ = true;
  std::vector<Index> firing_;
  std::vector<Column> columns_;
  std::int64_t checkpoint_every_ = 1;
  mutable std::int64_t steps_to_checkpoint_ = 0;  // steps until the next checkpoint
  std::array<WeightPattern<Scalar>, 3> U_, V_;    // of the u, r, z gates
  std::vector<std::uint64_t> input_reach_, recurrent_reach_;
  OperationCounts counts_;  // since reset()
};

}  // namespace egret
