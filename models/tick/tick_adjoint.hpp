// The backward side of every discrete-time family: backpropagation through time over the tick
// schedule (docs/adjoint.md, "Discrete BPTT"), generic over the family's cell adjoint, which
// holds only the derivatives of its equations:
//
//   class Cell<Scalar>::Adjoint {
//    public:
//     explicit Adjoint(std::shared_ptr<const Params> p);
//     void begin(NamedParameters<Scalar>& grad);   // zero the carried adjoints; grad is
//                                                  //   shaped like the parameters, zeroed
//     void tick(TickVisit<Scalar>& v, BackwardReport& report);   // tick k, see TickVisit
//     Scalar input_adjoint(Index channel, BackwardReport& report);  // dL/dx_k[channel] of
//                                                  //   the last tick visited
//     bool finite() const;                         // its adjoint state is finite
//   };
//
// This class does the bookkeeping: the previous tick's record, the bin, dL/dy_k from the
// consumers, the adjoints of input values (inputs are consumed by the next tick; those after
// the last tick by none), the output trace's time constant. Input times get no gradient
// (binning), and neither do tick times.
//
// Held inputs (delta semantics): an input event changes x from its tick k on, so its value's
// adjoint is sum_{j >= k} dL/dx_j[channel]. That sum is owed to every channel that received any
// input, a surrogate (value 0) included: a unit below that never changes still sends surrogates,
// and its adjoint must reach it. It is accumulated for each such channel from the last tick down
// to the first tick that consumed one of its inputs, and no further: O(N) per channel and tick
// at which the channel could have been read (docs/model.md section 6). x_k is rebuilt backward
// from the recorded previous values, exactly, and handed to the cell as the tick's input (its
// nonzero channels).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/tick/tick_step.hpp"
#include "sim/layer_adjoint.hpp"
#include "sim/parameters.hpp"

namespace egret {

// One tick k of the backward sweep, for the cell adjoint.
template <class Scalar>
struct TickVisit {
  const Scalar* record = nullptr;            // what the cell recorded at tick k
  const Scalar* previous_record = nullptr;   // ... at tick k - 1 (nullptr: k = 1, state at t = 0)
  const TickInput<Scalar>* input = nullptr;  // the bin tick k consumed
  // In: dL/dy_k from every consumer of the emissions (next layer, readout). Out: the cell
  // leaves in it dL/dy_{k-1} from inside the layer (its recurrence), or zeros; the consumers'
  // part for tick k - 1 is added to it before that tick is visited.
  Eigen::Array<Scalar, Eigen::Dynamic, 1>* dy = nullptr;
};

template <class Scalar, template <class> class Cell>
class TickAdjoint final : public LayerAdjoint<Scalar> {
 public:
  using Params = typename Cell<Scalar>::Params;
  using CellAdjoint = typename Cell<Scalar>::Adjoint;

  TickAdjoint(std::shared_ptr<const Params> p, std::size_t record_size, bool held_input)
      : p_(std::move(p)), cell_(p_), record_size_(record_size), held_input_(held_input) {}

  void begin(const Tape<Scalar>& tape, Index layer) override {
    grad_ = collect_parameter_zeros<Scalar>(*p_);
    cell_.begin(grad_);
    dy_.setZero(p_->units());
    report_ = BackwardReport{};
    any_tick_ = false;
    if (held_input_) read_held_end_state(tape.end_states[static_cast<std::size_t>(layer)]);
  }

  // An input step: its value entered x of the tick that consumed it, the last one visited.
  void jump_adjoint(const Tape<Scalar>& tape, const TapeStep<Scalar>& st, Scalar* d_value,
                    Scalar*) override {
    if (st.kind != EventKind::kInput || !any_tick_) return;
    const Index ch = tape.items_of(st)[0].index;
    d_value[0] = held_input_ ? held_adjoint_[static_cast<std::size_t>(ch)]
                             : cell_.input_adjoint(ch, report_);
  }

  // dL/dy_k of an emitted (or surrogate) unit from its consumers. Emission times are tick
  // times: their adjoints are dropped.
  void emission_adjoint(const TapeItem<Scalar>& item, Scalar d_value, Scalar) override {
    dy_[item.index] += d_value;
  }

  Scalar interval_adjoint(const Tape<Scalar>& tape, const TapeStep<Scalar>& st, Scalar) override {
    if (st.kind != EventKind::kInternal) return 0;
    TickVisit<Scalar> v;
    v.record = read_bin(tape, st, bin_);
    const TapeStep<Scalar>* prev = previous_tick(tape, st);
    v.previous_record = prev ? read_bin(tape, *prev, previous_bin_) : nullptr;
    v.input = held_input_ ? &held_input_now() : &bin_;
    bin_.time = held_now_.time = st.time;
    v.dy = &dy_;
    cell_.tick(v, report_);
    if (held_input_) {
      while (open_channels_ > 0 && received_[open_channels_ - 1].second > st.time) --open_channels_;
      for (std::size_t i = 0; i < open_channels_; ++i) {
        const Index ch = received_[i].first;
        held_adjoint_[static_cast<std::size_t>(ch)] += cell_.input_adjoint(ch, report_);
      }
      for (std::size_t i = 0; i < bin_.size(); ++i)  // x_{k-1} for the next tick visited
        held_x_[static_cast<std::size_t>(bin_.channels[i])] = bin_old_[i];
    }
    ++report_.steps;
    any_tick_ = true;
    return 0;  // tick times do not depend on the parameters
  }

  // Only a family whose output trace's time constant is a parameter named tau_o trains it (one
  // value for the layer, or one per unit).
  void add_output_time_constant_gradient(Index unit, Scalar d) override {
    if (auto* tau_o = grad_.find("tau_o")) (*tau_o)(tau_o->rows() == 1 ? 0 : unit, 0) += d;
  }

  void finish() override {}
  const NamedParameters<Scalar>& gradient() const override { return grad_; }
  bool finite() const override { return cell_.finite() && dy_.allFinite(); }
  void add_to_report(BackwardReport& r) const override {
    r.surrogate_pairs += report_.surrogate_pairs;
    r.zero_surrogate_pairs += report_.zero_surrogate_pairs;
    r.backward_macs += report_.backward_macs;
  }

 private:
  // The previous tick of the layer (input steps between record nothing), or nullptr at tick 1.
  static const TapeStep<Scalar>* previous_tick(const Tape<Scalar>& tape,
                                               const TapeStep<Scalar>& st) {
    const TapeStep<Scalar>* s = tape.previous(st);
    while (s && s->kind != EventKind::kInternal) s = tape.previous(*s);
    return s;
  }

  [[noreturn]] static void mismatch() {
    throw std::logic_error(std::string(Cell<Scalar>::kType) +
                           " adjoint: the tape does not match the layer");
  }

  // A tick's record (models/tick/tick_layer.hpp): the bin into `bin` (held inputs: the previous
  // values into bin_old_); returns the cell's record.
  const Scalar* read_bin(const Tape<Scalar>& tape, const TapeStep<Scalar>& st,
                         TickInput<Scalar>& bin) {
    const auto& all = tape.step_states[static_cast<std::size_t>(st.layer)];
    const auto offset = static_cast<std::size_t>(st.state);
    const std::size_t stride = held_input_ ? 3 : 2;
    if (offset >= all.size()) mismatch();
    const Scalar count = all[offset];
    if (!(count >= 0) || stride * static_cast<double>(count) > static_cast<double>(all.size()))
      mismatch();
    const auto n = static_cast<std::size_t>(count);
    if (offset + 1 + stride * n + record_size_ > all.size()) mismatch();
    bin.clear();
    if (&bin == &bin_) bin_old_.clear();
    for (std::size_t i = 0; i < n; ++i) {
      const Scalar* entry = all.data() + offset + 1 + stride * i;
      bin.channels.push_back(static_cast<Index>(entry[0]));
      bin.values.push_back(entry[1]);
      if (held_input_ && &bin == &bin_) bin_old_.push_back(entry[2]);
    }
    return all.data() + offset + 1 + stride * n;
  }

  // Held inputs: x at the last tick, and the channels that received any input with the time of
  // the first tick that consumed one (TickLayer's end record, in order of those times).
  void read_held_end_state(const std::vector<Scalar>& end) {
    const auto d = static_cast<std::size_t>(p_->inputs());
    if (end.size() < d + 1) mismatch();
    held_x_.assign(end.begin(), end.begin() + static_cast<std::ptrdiff_t>(d));
    const Scalar count = end[d];
    if (!(count >= 0) || 2 * static_cast<double>(count) != static_cast<double>(end.size() - d - 1))
      mismatch();
    received_.clear();
    for (std::size_t i = d + 1; i + 1 < end.size(); i += 2) {
      const Scalar ch = end[i];
      if (!(ch >= 0) || !(static_cast<double>(ch) < static_cast<double>(d))) mismatch();
      if (!received_.empty() && !(received_.back().second <= end[i + 1])) mismatch();
      received_.emplace_back(static_cast<Index>(ch), end[i + 1]);
    }
    open_channels_ = received_.size();
    held_adjoint_.assign(d, Scalar(0));
  }

  // x_k's nonzero channels, as the cell's adjoint expects its input.
  const TickInput<Scalar>& held_input_now() {
    held_now_.clear();
    for (std::size_t ch = 0; ch < held_x_.size(); ++ch) {
      if (held_x_[ch] == Scalar(0)) continue;
      held_now_.channels.push_back(static_cast<Index>(ch));
      held_now_.values.push_back(held_x_[ch]);
    }
    return held_now_;
  }

  std::shared_ptr<const Params> p_;
  CellAdjoint cell_;
  std::size_t record_size_;
  bool held_input_;
  std::vector<Scalar> held_x_, bin_old_, held_adjoint_;  // held inputs: x_k, previous values,
                                                         //   sum_{j >= k} dL/dx_j
  // Held inputs: the channels that received input, with the time of the first tick that consumed
  // one; the first open_channels_ of them were received at or before the tick being visited.
  std::vector<std::pair<Index, Scalar>> received_;
  std::size_t open_channels_ = 0;
  TickInput<Scalar> held_now_;
  NamedParameters<Scalar> grad_;
  Eigen::Array<Scalar, Eigen::Dynamic, 1> dy_;
  TickInput<Scalar> bin_, previous_bin_;
  BackwardReport report_;
  bool any_tick_ = false;
};

}  // namespace egret
