// A layer of N continuous-time EGRU units, driven by the engine: the events (inputs, releases,
// crossings), their weight columns, the counts and the tape. The units' state lives in one of
// three classes with one interface: with the box gate kernel DenseEgruUnits (one anchor time for
// all units; box_dense_units.hpp) or, for a sparsely connected layer
// (ContinuousEgruParams::sparse), SparseEgruUnits (an anchor per unit, so that an event costs
// its column's connections; box_sparse_units.hpp); with the exp gate kernel
// ExpKernelEgruUnits (c integrated by Odeint; exp_dense_units.hpp). The engine sees one
// "next internal event" per layer instead of N queue entries.
#pragma once

#include <algorithm>
#include <array>
#include <memory>
#include <variant>
#include <vector>

#include "models/continuous_egru/box_dense_units.hpp"
#include "models/continuous_egru/box_kernel_cell.hpp"
#include "models/continuous_egru/box_sparse_units.hpp"
#include "models/continuous_egru/checkpoint_layout.hpp"
#include "models/continuous_egru/continuous_egru_params.hpp"
#include "models/continuous_egru/event_columns.hpp"
#include "models/continuous_egru/exp_dense_units.hpp"
#include "models/shared/synapse_counting.hpp"
#include "sim/layer.hpp"

namespace egret {

template <class Scalar>
class ContinuousEgruLayer final : public Layer<Scalar> {
 public:
  using Params = ContinuousEgruParams<Scalar>;
  using Cell = BoxEgruCell<Scalar>;
  using Array = typename Cell::Array;
  using Column = EgruColumn<Scalar>;

  explicit ContinuousEgruLayer(std::shared_ptr<const Params> params)
      : p_(checked(std::move(params))),
        connections_(p_->sparse && p_->gate_kernel == GateKernel::kBox
                         ? SparseEgruConnections<Scalar>::of(*p_)
                         : nullptr),
        units_(make_units(*p_, connections_)) {
    count_patterns();
    reset();
  }

  std::string type_name() const override { return "continuous_egru"; }
  Index units() const override { return p_->units(); }
  Index inputs() const override { return p_->inputs(); }
  Scalar output_time_constant(Index unit) const override { return p_->tau_o[unit]; }
  bool clocked() const override { return false; }
  const Params& params() const { return *p_; }

  // A copy, reset: it shares the parameters and this layer's counted weight patterns. Counting
  // them again would scan every weight once per clone, and a batch clones the network per worker
  // and block of samples.
  std::unique_ptr<Layer<Scalar>> clone() const override {
    auto copy = std::make_unique<ContinuousEgruLayer>(*this);
    copy->reset();
    return copy;
  }

  void reset() override {
    counts_ = {};
    visit([&](auto& u) { u.reset(*p_); });
  }

  void receive_input(Scalar t, Index channel, Scalar value, Scheduler<Scalar>& sched) override {
    const InputEvent<Scalar> input{t, channel, value};
    receive_inputs(t, &input, 1, sched);
  }
  // A binned stream's inputs of one time in one pass (a busy recording sends hundreds): every
  // unit is brought to t once, and the columns are added in the order of single calls, so the
  // state is bitwise theirs.
  void receive_inputs(Scalar t, const InputEvent<Scalar>* inputs, Index n,
                      Scheduler<Scalar>& sched) override {
    columns_.resize(static_cast<std::size_t>(n));
    for (Index k = 0; k < n; ++k) {
      Column& col = columns_[static_cast<std::size_t>(k)];
      write_event_column(col, *p_, EventKind::kInput, inputs[k].channel, inputs[k].value,
                         Scalar(0));
      count_input_column(inputs[k].channel, col.scale_ur);
    }
    add_columns(t, columns_.data(), n);
    if (!std::isfinite(p_->window_input)) return;
    for (Index k = 0; k < n; ++k) {
      Scheduler<Scalar> item = sched.for_item(k);
      item.schedule(t + p_->window_input, EventKind::kInputRelease, inputs[k].channel,
                    inputs[k].value);
    }
  }

  void release(const Event<Scalar>& e) override { release_all(&e, 1); }
  // Releases of one time (those of a binned stream's inputs come together), in one pass.
  void release_all(const Event<Scalar>* events, Index n) override {
    if (n > 1 && events[n - 1].time != events[0].time)
      throw std::logic_error("continuous_egru: a batch of releases of different times");
    columns_.resize(static_cast<std::size_t>(n));
    for (Index k = 0; k < n; ++k) {
      const Event<Scalar>& e = events[k];
      Column& col = columns_[static_cast<std::size_t>(k)];
      write_event_column(col, *p_, e.kind, e.index, e.value, e.aux);
      count_release(e, col);
    }
    add_columns(events[0].time, columns_.data(), n);
  }

  // The window changes of a binned stream's time (events/window_changes.hpp): one column per
  // change of nonzero delta, scaled by it, and none for an input that meets the end of an equal
  // one. The counts are those of the inputs and releases the changes stand for.
  Scalar netted_input_window() const override {
    return std::isfinite(p_->window_input) ? p_->window_input : Scalar(0);
  }
  void receive_window_changes(Scalar t, const WindowChange<Scalar>* changes, Index n) override {
    columns_.resize(static_cast<std::size_t>(n));
    std::size_t n_cols = 0;
    for (Index k = 0; k < n; ++k) {
      const WindowChange<Scalar>& c = changes[k];
      count_window_change(c);
      write_event_column(columns_[n_cols], *p_, EventKind::kInput, c.channel, c.delta, Scalar(0));
      n_cols += c.delta != Scalar(0) ? 1 : 0;
    }
    if (n_cols > 0) add_columns(t, columns_.data(), static_cast<Index>(n_cols));
  }

  InternalEvent<Scalar> next_internal_event() const override {
    return visit([&](auto& u) -> InternalEvent<Scalar> {
      u.settle(*p_);
      return {u.earliest_time(), u.earliest_unit()};
    });
  }

  // Only the exp kernel's search costs enough to stop at the end of the run.
  void set_end_time(Scalar end_time) override {
    if (auto* u = std::get_if<ExpKernelEgruUnits<Scalar>>(&units_)) u->set_search_end(end_time);
  }

  // Every unit whose crossing time is exactly t fires, synchronously: each sends y = theta with
  // its reset gate r_n(t-) read before any of the simultaneous jumps, so the result does not
  // depend on the order of units.
  void fire(Scalar t, Scheduler<Scalar>& sched, std::vector<Emission<Scalar>>& out) override {
    firing_.clear();
    visit([&](auto& u) {
      u.settle(*p_);
      u.units_crossing_at(t, *p_, firing_);
    });
    if (firing_.empty()) throw std::logic_error("continuous_egru: fire() with no crossing at t");
    visit([&](auto& u) { u.begin_time(t, *p_); });
    columns_.clear();
    for (Index n : firing_) {
      const Scalar y = Cell::event_value(p_->theta[n]);
      const Scalar r = Cell::reset_gate(visit([&](auto& u) { return u.a_r(n); }));
      visit([&](auto& u) { u.reset_unit(n); });
      write_event_column(columns_.emplace_back(), *p_, EventKind::kInternal, n, y, r);
      emit(out, n, y, r);
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
    std::vector<Scalar> c(static_cast<std::size_t>(units()));
    LayerState<Scalar> s;
    visit([&](auto& u) {
      u.settle(*p_);
      u.state_at(t, c.data());
      auto [a_u, a_r, a_z] = u.preactivations(t);
      s.variables = {{"a_u", a_u}, {"a_r", a_r}, {"a_z", a_z}, {"c", c}};
    });
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
  NamedParameters<Scalar> parameter_zeros() const override {
    return collect_parameter_zeros<Scalar>(*p_);
  }
  std::unique_ptr<Layer<Scalar>> with_parameters(
      const NamedParameters<Scalar>& values) const override {
    auto p = std::make_shared<Params>(*p_);
    assign_parameters(*p, values, type_name());
    return std::make_unique<ContinuousEgruLayer>(std::move(p));
  }

  // The sparse layer keeping each sender's largest connections (|w_u| + |w_r| + |w_z|).
  bool prunable() const override { return true; }
  std::unique_ptr<Layer<Scalar>> pruned(double keep) const override {
    auto p = std::make_shared<Params>(*p_);
    p->keep_largest_connections(static_cast<Scalar>(keep), static_cast<Scalar>(keep));
    p->sparse = true;
    return std::make_unique<ContinuousEgruLayer>(std::move(p));
  }

  // Defined with the backward side (continuous_egru_layer_adjoint.hpp), so that the forward
  // pass includes nothing of it; compiled once, in continuous_egru_family.cpp.
  std::unique_ptr<LayerAdjoint<Scalar>> make_adjoint() const override;
  // The tape keeps the state [c; a_u; a_z] (exp kernel: [c; a_u; a_z; a_r]) right after every
  // K-th step of the layer (the first included); the adjoint recomputes the steps in between
  // forward from these checkpoints (dense_replay.hpp; a sparse layer's unit by unit,
  // box_sparse_replay.hpp). The box kernel needs no a_r:
  // each emission's reset gate is on the tape, and its a_r does not flow.
  void set_tape_recording(const TapeSettings& s) override {
    checkpoint_every_ = s.checkpoint_every > 0 ? s.checkpoint_every : auto_checkpoint_every();
    steps_to_checkpoint_ = 0;
  }
  // The dense layers' replay and adjoint walk every item of a step (dense_replay.hpp,
  // jump_adjoint.hpp); the sparse layer's pieces follow single-input steps.
  bool tape_merges_simultaneous_inputs() const override {
    return p_->gate_kernel == GateKernel::kExp || !p_->sparse;
  }
  void record_step_state(EventKind, std::vector<Scalar>& out) const override {
    if (steps_to_checkpoint_-- > 0) return;
    steps_to_checkpoint_ = checkpoint_every_ - 1;
    visit([&](auto& u) { u.append_state_now(out); });
  }
  // About kCheckpointBytesPerStep of checkpoint per step, whatever the size of the layer.
  std::int64_t auto_checkpoint_every() const {
    const auto bytes =
        static_cast<std::int64_t>(CheckpointLayout::width(*p_) * Index(sizeof(Scalar)));
    return std::max<std::int64_t>(1,
                                  (bytes + kCheckpointBytesPerStep - 1) / kCheckpointBytesPerStep);
  }
  static constexpr std::int64_t kCheckpointBytesPerStep = 64;

  // Per-unit view of the current crossing times (for tests and diagnostics).
  const Array& crossing_times() const {
    return visit([&](auto& u) -> const Array& {
      u.settle(*p_);
      return u.crossing_times(*p_);
    });
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
    input_pairs_.resize(static_cast<std::size_t>(p.inputs()));
    for (Index k = 0; k < p.inputs(); ++k)
      input_pairs_[static_cast<std::size_t>(k)] =
          U_[0].column(k) + U_[1].column(k) + U_[2].column(k);
    recurrent_reach_ = reach(p.V_u, p.V_r, p.V_z);
    // A unit crossing alone updates its reach and itself (once). Kept per unit: reading the
    // diagonal of three N x N matrices at every crossing was three cache misses.
    fired_reach_ = recurrent_reach_;
    for (Index n = 0; n < p.units(); ++n)
      if (p.V_u(n, n) == Scalar(0) && p.V_r(n, n) == Scalar(0) && p.V_z(n, n) == Scalar(0))
        ++fired_reach_[static_cast<std::size_t>(n)];
  }
  // The three gates' columns share the operand: their pairs are counted together.
  void count_input_column(Index k, Scalar operand) {
    // Without branches: a binned stream's graded and binary values alternate unpredictably.
    const auto c = static_cast<std::size_t>(k);
    const std::uint64_t pairs = input_pairs_[c];
    const bool binary = is_binary_operand(operand);
    counts_.synaptic_acs += binary ? pairs : 0;
    counts_.synaptic_macs += !binary && operand != Scalar(0) ? pairs : 0;
    counts_.membrane_updates += input_reach_[c];
  }
  // count_input_column for the input a change starts (operand x) and the release it ends
  // (operand -x, binary exactly when x is), without branches: whether a change starts an input,
  // ends one or both varies from channel to channel, and mispredicting it cost 7 % of a busy
  // recording's forward pass (docs/speed.md).
  void count_window_change(const WindowChange<Scalar>& c) {
    const auto ch = static_cast<std::size_t>(c.channel);
    const std::uint64_t pairs = input_pairs_[ch];
    const std::uint64_t starts = c.start >= 0, ends = c.end >= 0;
    const std::uint64_t start_binary = is_binary_operand(c.started);
    const std::uint64_t end_binary = is_binary_operand(c.ended);
    const std::uint64_t start_graded = (start_binary ^ 1) & (c.started != Scalar(0));
    const std::uint64_t end_graded = (end_binary ^ 1) & (c.ended != Scalar(0));
    counts_.synaptic_acs += pairs * ((starts & start_binary) + (ends & end_binary));
    counts_.synaptic_macs += pairs * ((starts & start_graded) + (ends & end_graded));
    counts_.membrane_updates += input_reach_[ch] * (starts + ends);
  }
  void count_release(const Event<Scalar>& e, const Column& col) {
    if (e.kind == EventKind::kInputRelease) {
      count_input_column(e.index, col.scale_ur);
      return;
    }
    count_recurrent_column(e.index, col.scale_ur, col.scale_z);
    counts_.membrane_updates += recurrent_reach_[static_cast<std::size_t>(e.index)];
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
      counts_.membrane_updates += fired_reach_[static_cast<std::size_t>(firing_[0])];
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

  static std::shared_ptr<const Params> checked(std::shared_ptr<const Params> p) {
    if (!p) throw std::invalid_argument("continuous_egru layer: null parameters");
    p->validate();
    return p;
  }
  using Units =
      std::variant<DenseEgruUnits<Scalar>, SparseEgruUnits<Scalar>, ExpKernelEgruUnits<Scalar>>;
  static Units make_units(const Params& p,
                          std::shared_ptr<const SparseEgruConnections<Scalar>> connections) {
    if (p.gate_kernel == GateKernel::kExp) return Units(std::in_place_index<2>, p);
    if (p.sparse) return Units(std::in_place_index<1>, p, std::move(connections));
    return Units(std::in_place_index<0>, p);
  }
  // f(the units' state), whichever class holds it. The state is mutable: settling it (the
  // gates and crossing times) is lazy and happens when the engine asks.
  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit(std::forward<F>(f), units_);
  }

  // An event at t: every unit's state brought to t, the event's weight columns added to the
  // pre-activations; the gates and crossing times wait for the next settle().
  void add_columns(Scalar t, const Column* cols, Index n_cols) {
    visit([&](auto& u) {
      u.begin_time(t, *p_);
      u.add_columns(cols, n_cols);
    });
  }

  std::shared_ptr<const Params> p_;
  std::shared_ptr<const SparseEgruConnections<Scalar>> connections_;  // a sparse box layer's
  mutable Units units_;
  std::vector<Index> firing_;
  std::vector<Column> columns_;
  std::int64_t checkpoint_every_ = 1;
  mutable std::int64_t steps_to_checkpoint_ = 0;  // steps until the next checkpoint
  std::array<WeightPattern<Scalar>, 3> U_, V_;    // of the u, r, z gates
  std::vector<std::uint64_t> input_reach_, recurrent_reach_, fired_reach_;
  std::vector<std::uint64_t> input_pairs_;  // per channel: nonzero weights of its three columns
  OperationCounts counts_;                  // since reset()
};

// Both scalar types are instantiated once, with the backward side, in continuous_egru_family.cpp.
extern template class ContinuousEgruLayer<float>;
extern template class ContinuousEgruLayer<double>;

}  // namespace egret
