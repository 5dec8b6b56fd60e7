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
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "models/tick_step.hpp"
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

  TickAdjoint(std::shared_ptr<const Params> p, std::size_t record_size)
      : p_(std::move(p)), cell_(p_), record_size_(record_size) {}

  void begin(const Tape<Scalar>&, Index) override {
    grad_ = collect_parameters<Scalar>(*p_).zeros_like();
    cell_.begin(grad_);
    dy_.setZero(p_->units());
    report_ = BackwardReport{};
    any_tick_ = false;
  }

  // An input step: its value entered x of the tick that consumed it, the last one visited.
  void jump_adjoint(const Tape<Scalar>& tape, const TapeStep<Scalar>& st, Scalar* d_value,
                    Scalar*) override {
    if (st.kind != EventKind::kInput || !any_tick_) return;
    d_value[0] = cell_.input_adjoint(tape.items_of(st)[0].index, report_);
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
    v.input = &bin_;
    v.dy = &dy_;
    cell_.tick(v, report_);
    ++report_.steps;
    any_tick_ = true;
    return 0;  // tick times do not depend on the parameters
  }

  // Only a family whose output trace's time constant is a parameter named tau_o trains it.
  void add_output_time_constant_gradient(Scalar d) override {
    if (auto* tau_o = grad_.find("tau_o")) (*tau_o)(0, 0) += d;
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

  // A tick's record (models/tick_layer.hpp): the bin into `bin`; returns the cell's record.
  const Scalar* read_bin(const Tape<Scalar>& tape, const TapeStep<Scalar>& st,
                         TickInput<Scalar>& bin) const {
    const auto& all = tape.step_states[static_cast<std::size_t>(st.layer)];
    const auto offset = static_cast<std::size_t>(st.state);
    auto mismatch = [] {
      throw std::logic_error(std::string(Cell<Scalar>::kType) +
                             " adjoint: the tape does not match the layer");
    };
    if (offset >= all.size()) mismatch();
    const Scalar count = all[offset];
    if (!(count >= 0) || 2 * static_cast<double>(count) > static_cast<double>(all.size()))
      mismatch();
    const auto n = static_cast<std::size_t>(count);
    if (offset + 1 + 2 * n + record_size_ > all.size()) mismatch();
    bin.clear();
    for (std::size_t i = 0; i < n; ++i) {
      bin.channels.push_back(static_cast<Index>(all[offset + 1 + 2 * i]));
      bin.values.push_back(all[offset + 2 + 2 * i]);
    }
    return all.data() + offset + 1 + 2 * n;
  }

  std::shared_ptr<const Params> p_;
  CellAdjoint cell_;
  std::size_t record_size_;
  NamedParameters<Scalar> grad_;
  Eigen::Array<Scalar, Eigen::Dynamic, 1> dy_;
  TickInput<Scalar> bin_, previous_bin_;
  BackwardReport report_;
  bool any_tick_ = false;
};

}  // namespace egret
