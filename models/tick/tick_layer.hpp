// The engine side of every discrete-time family (docs/model.md §4, the tick schedule): a tick
// schedule t_k = k dt (k = 1, 2, ...), input events binned per tick, surrogate events while a tape
// is recorded, and the tape record of each tick. A family supplies only its equations, as a Cell:
//
//   template <class Scalar> class Cell {
//    public:
//     using Params = ...;   // units(), inputs(), dt, output_time_constant(), validate(),
//                           // visit_parameters (sim/parameters.hpp)
//     using Adjoint = ...;  // the backward side (models/tick/tick_adjoint.hpp); a cell
//                           //   without one runs forward only (no backward pass)
//     static constexpr const char* kType = "...";         // the configuration's type
//     static constexpr bool kHeldOutput = ...;  // events are changes of a held state (delta
//                                               //   semantics, sim/layer.hpp output_is_held)
//     explicit Cell(std::shared_ptr<const Params> p);     // sizes its state and scratch
//     void reset();                                       // the state at t = 0
//     void step(const TickInput<Scalar>& x, TickOutput<Scalar>& out);  // one tick
//     std::size_t record_size() const;                    // what it keeps per tick on a tape,
//     void record(std::vector<Scalar>& tape) const;       //   appended after each step
//     LayerState<Scalar> state() const;                   // named state vectors
//     DenseCost dense_cost() const;                       // the same layer run densely
//   };
//
// The cell counts its operations through TickOutput (counts(), state_changed()).
//
// Input semantics: the events of a tick's bin (t_{k-1}, t_k] are summed per channel. Impulse
// inputs: tick k consumes the sums (x_k), so a channel without events at tick k is zero there.
// Held inputs (the layer below has a held output): the sums are changes, and x_k holds every
// channel's value (models/tick/tick_step.hpp TickInput).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "models/tick/tick_adjoint.hpp"
#include "models/tick/tick_step.hpp"
#include "sim/layer.hpp"

namespace egret {

template <class Scalar, template <class> class Cell>
class TickLayer final : public Layer<Scalar> {
 public:
  using Params = typename Cell<Scalar>::Params;

  explicit TickLayer(std::shared_ptr<const Params> params)
      : p_(checked(std::move(params))), cell_(p_) {
    allocate();
    reset();
  }

  std::string type_name() const override { return Cell<Scalar>::kType; }
  Index units() const override { return p_->units(); }
  Index inputs() const override { return p_->inputs(); }
  Scalar output_time_constant(Index) const override { return p_->output_time_constant(); }
  bool clocked() const override { return true; }
  bool output_is_held() const override { return Cell<Scalar>::kHeldOutput; }
  void set_input_held(bool held) override {
    held_input_ = held;
    reset();
  }
  const Params& params() const { return *p_; }

  std::unique_ptr<Layer<Scalar>> clone() const override {
    auto copy = std::make_unique<TickLayer>(p_);
    copy->set_input_held(held_input_);
    return copy;
  }

  void reset() override {
    cell_.reset();
    bin_.clear();
    for (Index ch : pending_) pending_sum_[ch] = 0, is_pending_[ch] = 0;
    pending_.clear();
    std::fill(held_x_.begin(), held_x_.end(), Scalar(0));
    std::fill(ever_received_.begin(), ever_received_.end(), 0);
    received_.clear();
    next_tick_ = 1;
    counts_ = {};
  }

  // A value-0 input changes no sum and is not binned: surrogate events are value-0 inputs, and
  // binning them would make the forward pass depend on whether a tape is recorded. A held input
  // notes every channel that receives anything, surrogates too: the backward pass owes each of
  // them an adjoint, whether its value ever changed or not.
  void receive_input(Scalar, Index channel, Scalar value, Scheduler<Scalar>&) override {
    if (held_input_) note_arrival(channel);
    if (value == Scalar(0)) return;
    if (!is_pending_[channel]) {
      is_pending_[channel] = 1;
      pending_.push_back(channel);
    }
    pending_sum_[channel] += value;
  }

  void release(const Event<Scalar>&) override {
    throw std::logic_error(std::string(Cell<Scalar>::kType) + ": has no release events");
  }

  InternalEvent<Scalar> next_internal_event() const override { return {tick_time(next_tick_), 0}; }

  // One tick: the bin (t_{k-1}, t_k] goes to the cell, whose emissions are appended in unit
  // order.
  void fire(Scalar t, Scheduler<Scalar>&, std::vector<Emission<Scalar>>& out) override {
    if (t != tick_time(next_tick_))
      throw std::logic_error(std::string(Cell<Scalar>::kType) + ": fire() off the tick");
    bin_.clear();
    bin_old_.clear();
    bin_.time = t;
    bin_.held = held_input_;
    bin_.held_values = held_input_ ? &held_x_ : nullptr;
    for (Index ch : pending_) {
      bin_.channels.push_back(ch);
      bin_.values.push_back(pending_sum_[ch]);
      if (held_input_) hold(ch, pending_sum_[ch]);
      pending_sum_[ch] = 0;
      is_pending_[ch] = 0;
    }
    pending_.clear();
    const bool first_tick = next_tick_ == 1;
    if (first_tick) counts_.membrane_updates += static_cast<std::uint64_t>(p_->units());
    TickOutput<Scalar> emit(out, recording_, counts_, first_tick);
    cell_.step(bin_, emit);
    ++next_tick_;
  }

  LayerState<Scalar> state_at(Scalar) const override { return cell_.state(); }

  OperationCounts operation_counts() const override { return counts_; }
  DenseCost dense_cost() const override { return cell_.dense_cost(); }

  NamedParameters<Scalar> parameters() const override { return collect_parameters<Scalar>(*p_); }
  NamedParameters<Scalar> parameter_zeros() const override {
    return collect_parameter_zeros<Scalar>(*p_);
  }
  std::unique_ptr<Layer<Scalar>> with_parameters(
      const NamedParameters<Scalar>& values) const override {
    auto p = std::make_shared<Params>(*p_);
    assign_parameters(*p, values, type_name());
    return std::make_unique<TickLayer>(std::move(p));
  }

  // A cell without an Adjoint type runs forward only: no adjoint, so has_adjoint() is false and
  // training and adjoint tapes refuse the layer, naming it.
  std::unique_ptr<LayerAdjoint<Scalar>> make_adjoint() const override {
    if constexpr (has_adjoint_type<Cell<Scalar>>::value)
      return std::make_unique<TickAdjoint<Scalar, Cell>>(p_, cell_.record_size(), held_input_);
    else
      return nullptr;
  }
  void set_tape_recording(const TapeSettings& s) override { recording_ = s.recording; }
  // Per tick (models/tick/tick_adjoint.hpp reads it back): the bin (count, then channel and sum per
  // channel, in the order they were summed; held inputs add the channel's value before the
  // change), then the cell's record. Input steps record nothing.
  void record_step_state(EventKind kind, std::vector<Scalar>& out) const override {
    if (kind != EventKind::kInternal) return;
    out.push_back(static_cast<Scalar>(bin_.channels.size()));
    for (std::size_t i = 0; i < bin_.channels.size(); ++i) {
      out.push_back(channel_as_scalar<Scalar>(bin_.channels[i], Cell<Scalar>::kType));
      out.push_back(bin_.values[i]);
      if (held_input_) out.push_back(bin_old_[i]);
    }
    cell_.record(out);
  }
  // Held inputs: x at the last tick (every channel), then the number of channels that received
  // any input (surrogates included), and per such channel its number and the time of the tick
  // that consumed its first input, in order of those times.
  void record_end_state(std::vector<Scalar>& out) const override {
    if (!held_input_) return;
    out.insert(out.end(), held_x_.begin(), held_x_.end());
    out.push_back(static_cast<Scalar>(received_.size()));
    for (const auto& [ch, first_tick] : received_) {
      out.push_back(channel_as_scalar<Scalar>(ch, Cell<Scalar>::kType));
      out.push_back(first_tick);
    }
  }

 private:
  // A family whose parameters have a normal form (EvNN's thresholds clamped to [0, 1]) defines
  // Params::normalized(p), applied whenever a layer is built from parameters.
  template <class P, class = void>
  struct has_normal_form : std::false_type {};
  template <class P>
  struct has_normal_form<P, std::void_t<decltype(P::normalized(std::shared_ptr<const P>()))>>
      : std::true_type {};

  template <class C, class = void>
  struct has_adjoint_type : std::false_type {};
  template <class C>
  struct has_adjoint_type<C, std::void_t<typename C::Adjoint>> : std::true_type {};

  static std::shared_ptr<const Params> checked(std::shared_ptr<const Params> p) {
    if (!p) throw std::invalid_argument(std::string(Cell<Scalar>::kType) + ": null parameters");
    if constexpr (has_normal_form<Params>::value) p = Params::normalized(std::move(p));
    p->validate(std::string(Cell<Scalar>::kType) + " layer");
    return p;
  }

  void allocate() {
    const auto d = static_cast<std::size_t>(p_->inputs());
    pending_sum_.assign(d, Scalar(0));
    is_pending_.assign(d, 0);
    held_x_.assign(d, Scalar(0));
    ever_received_.assign(d, 0);
  }

  // A held input channel changes by `change` at this tick.
  void hold(Index ch, Scalar change) {
    bin_old_.push_back(held_x_[ch]);
    held_x_[ch] += change;
  }

  // The first input of a held channel: the coming tick is the first that consumes it.
  void note_arrival(Index ch) {
    if (ever_received_[ch]) return;
    ever_received_[ch] = 1;
    received_.emplace_back(ch, tick_time(next_tick_));
  }

  Scalar tick_time(std::int64_t k) const { return static_cast<Scalar>(k) * p_->dt; }

  std::shared_ptr<const Params> p_;
  Cell<Scalar> cell_;
  TickInput<Scalar> bin_;            // what the last tick consumed (for the tape)
  std::vector<Scalar> pending_sum_;  // summed input per channel for the coming tick
  std::vector<unsigned char> is_pending_;
  std::vector<Index> pending_;  // channels with pending input, in arrival order
  std::int64_t next_tick_ = 1;
  bool recording_ = false;
  OperationCounts counts_;  // since reset()
  // Held inputs (delta semantics): x of every channel, each change's previous value (for the
  // tape), and the channels that received any input, with the time of the first tick that
  // consumed one (in arrival order, so in order of those times).
  bool held_input_ = false;
  std::vector<Scalar> held_x_, bin_old_;
  std::vector<unsigned char> ever_received_;
  std::vector<std::pair<Index, Scalar>> received_;
};

}  // namespace egret
