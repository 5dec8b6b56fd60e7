// The physics of a selective-update spiking layer (su-SNN, suRNN paper Fig. A1) on the tick
// schedule: the rhythmic gate (models/rhythmic_gate/rhythmic_gate.hpp) over the LIF layer's
// integration (models/lif/lif_cell.hpp):
//   a_k = g_b + sum_j g_alpha[:, j] sin(g_omega_j t_k + g_phi[:, j]),   g_k = H(a_k)
//   ubar_k = alpha u_{k-1} + W x_k + V s_{k-1} + b - theta H(u_{k-1} - theta),
//   alpha = exp(-dt / tau_mem) per unit
//   u_k = u_{k-1} + g_k (ubar_k - u_{k-1}),   s_k = g_k H(u_k - theta)
// A closed unit neither integrates nor fires: u is carried exactly, the unit sends nothing, and
// without a tape its rows of W (impulse inputs) and V are not read.
// The soft reset is owed by the unit's last open tick: while closed, H(u - theta) keeps the
// spike it sent, and the next open tick subtracts theta once (docs/model.md, su-SNN). With every
// gate open this is the LIF layer. Spikes are binary events (value 1). The backward side is
// models/su_snn/su_snn_adjoint.hpp.
#pragma once

#include <memory>
#include <vector>

#include "models/rhythmic_gate/open_units.hpp"
#include "models/shared/surrogates.hpp"
#include "models/shared/synapse_counting.hpp"
#include "models/su_snn/su_snn_adjoint.hpp"
#include "models/su_snn/su_snn_params.hpp"
#include "models/tick/input_drive.hpp"
#include "models/tick/sparse_columns.hpp"
#include "models/tick/tick_step.hpp"

namespace egret {

template <class Scalar>
class SuSnnCell {
 public:
  using Params = SuSnnParams<Scalar>;
  using Adjoint = SuSnnAdjoint<Scalar>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  static constexpr const char* kType = "su_snn";
  static constexpr bool kHeldOutput = false;  // spikes are events, not changes

  explicit SuSnnCell(std::shared_ptr<const Params> p)
      : p_(std::move(p)),
        alpha_(p_->decay()),
        gate_(p_->gate),
        W_pattern_(p_->W),
        V_pattern_(p_->V) {
    const Index n = p_->units();
    u_.resize(n);
    ubar_.resize(n);
    a_.resize(n);
    drive_.resize(n);
    open_.resize(n);
  }

  void reset() {
    u_.setZero();
    ubar_.setZero();
    a_.setZero();
    spiking_.clear();
    input_.reset(p_->units());
  }

  void step(const TickInput<Scalar>& x, TickOutput<Scalar>& out) {
    const Params& p = *p_;
    gate_.activation(x.time, a_);
    open_.gather(a_);
    count_products(x, out.counts());
    const bool every = out.recording();
    integrate(x, every);
    spiking_.clear();
    // Without a tape only the open units: a closed unit keeps u, cannot spike and has no
    // surrogate to record. One loop for both runs (the same instructions per unit).
    const Index units = open_.walked(every, p.units());
    for (Index i = 0; i < units; ++i) {
      const Index m = open_.walked_unit(every, i);
      const bool open = a_[m] > Scalar(0);
      if (open && u_[m] != ubar_[m]) out.state_changed();
      if (open) u_[m] = ubar_[m];
      const Scalar over = u_[m] - p.theta[m];
      if (open && over > Scalar(0)) {
        spiking_.push_back(m);
        out.event(m, Scalar(1));
      } else if (open ? arctan_surrogate(over, p.alpha_s) != Scalar(0) : over > Scalar(0)) {
        out.surrogate(m);  // ds/du (open) or ds/da (closed above threshold) is not zero
      }
    }
  }

  // Per tick the adjoint needs a_k, ubar_k (every unit: the gate's surrogate needs ubar - u of
  // closed units too) and u_k.
  std::size_t record_size() const { return 3 * static_cast<std::size_t>(p_->units()); }
  void record(std::vector<Scalar>& tape) const {
    tape.insert(tape.end(), a_.data(), a_.data() + a_.size());
    tape.insert(tape.end(), ubar_.data(), ubar_.data() + ubar_.size());
    tape.insert(tape.end(), u_.data(), u_.data() + u_.size());
  }

  // Dense: W x_k and V s_{k-1} in full; a unit's state is u.
  DenseCost dense_cost() const { return {dense_pairs(p_->W) + dense_pairs(p_->V), 1}; }

  LayerState<Scalar> state() const {
    auto vec = [](const auto& v) { return std::vector<Scalar>(v.data(), v.data() + v.size()); };
    std::vector<Scalar> spikes(static_cast<std::size_t>(p_->units()), Scalar(0));
    for (Index m : spiking_) spikes[static_cast<std::size_t>(m)] = 1;
    const Array g = (a_.array() > Scalar(0)).template cast<Scalar>();
    LayerState<Scalar> s;
    s.variables = {{"u", vec(u_)}, {"s", spikes}, {"g", vec(g)}, {"a", vec(a_)}};
    return s;
  }

 private:
  // ubar_k for the open units (every unit while a tape is recorded), from u_{k-1} and s_{k-1}.
  // Without a tape a closed unit's row of V is not read.
  void integrate(const TickInput<Scalar>& x, bool every_unit) {
    const Params& p = *p_;
    drive_ = p.b;
    if (every_unit || x.held) input_.add_to(drive_, p.W, x);
    if (every_unit) {
      ones_.assign(spiking_.size(), Scalar(1));
      add_scaled_columns(drive_, p.V, spiking_, ones_);  // binary spikes: accumulates
    }
    const Index units = open_.walked(every_unit, p.units());
    for (Index k = 0; k < units; ++k) {
      const Index m = open_.walked_unit(every_unit, k);
      if (!every_unit) {
        if (!x.held)
          for (std::size_t i = 0; i < x.size(); ++i)
            drive_[m] += p.W(m, x.channels[i]) * x.values[i];
        for (Index j : spiking_) drive_[m] += p.V(m, j);
      }
      const Scalar owed_reset = u_[m] - p.theta[m] > Scalar(0) ? p.theta[m] : Scalar(0);
      ubar_[m] = alpha_[m] * u_[m] + drive_[m] - owed_reset;
    }
  }

  // The synaptic pairs of the open-units schedule (docs/metrics.md), with or without a tape: the
  // open rows of V against s_{k-1} (accumulates) and of W against impulse inputs; held inputs'
  // changes update the running W x_k of every row.
  void count_products(const TickInput<Scalar>& x, OperationCounts& ops) {
    const OperandSplit inputs = OperandSplit::of(x.values, x.size());
    ones_.assign(spiking_.size(), Scalar(1));
    const OperandSplit spikes{static_cast<std::uint64_t>(spiking_.size()), 0};
    if (x.held)
      W_pattern_.count_columns(ops, x.channels, x.values);
    else
      W_pattern_.count_rows(ops, open_, x.channels, x.values, inputs);
    V_pattern_.count_rows(ops, open_, spiking_, ones_, spikes);
  }

  std::shared_ptr<const Params> p_;
  Array alpha_;                // every unit's decay exp(-dt / tau_mem)
  GateSchedule<Scalar> gate_;  // the rhythmic gate, 2K sines per tick
  WeightPattern<Scalar> W_pattern_, V_pattern_;
  Array u_;                     // membrane potentials after the last tick
  Array ubar_;                  // the integration of the last tick (open units; all recording)
  Vector<Scalar> a_;            // the gate's activation at the last tick
  OpenUnits open_;              // the units open at the last tick
  Vector<Scalar> drive_;        // scratch: b + W x_k + V s_{k-1}
  std::vector<Index> spiking_;  // units with s = 1 at the last tick
  std::vector<Scalar> ones_;
  InputDrive<Scalar> input_;  // W x_k (models/tick/input_drive.hpp)
};

}  // namespace egret
