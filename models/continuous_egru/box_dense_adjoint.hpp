// The backward side of a continuous EGRU layer (box kernel): the adjoints of (c, a_u, a_r, a_z)
// moved across each inter-event interval in closed form (BoxEgruCell::flow_adjoint), the jumps
// (jump_adjoint.hpp), and the dependence of a crossing's time on the state of the
// previous step (routed into that step's adjoints). The forward state after each step is recomputed
// from the tape's checkpoints (dense_replay.hpp). docs/adjoint.md derives every line;
// adjoint/reverse_sweep.hpp is the generic sweep that calls it.
#pragma once

#include <memory>

#include "models/continuous_egru/box_kernel_cell.hpp"
#include "models/continuous_egru/dense_replay.hpp"
#include "models/continuous_egru/jump_adjoint.hpp"

namespace egret {

template <class Scalar>
class ContinuousEgruAdjoint final : public ContinuousEgruJumpAdjoint<Scalar> {
 public:
  using Base = ContinuousEgruJumpAdjoint<Scalar>;
  using typename Base::Array;
  using typename Base::Cell;
  using typename Base::Params;

  explicit ContinuousEgruAdjoint(std::shared_ptr<const Params> p) : Base(std::move(p)) {}

  // The state regulariser (adjoint/state_regularizer.hpp) in closed form per interval.
  bool has_state_cost() const override { return true; }

  void begin(const Tape<Scalar>& tape, Index layer) override {
    Base::begin(tape, layer);
    if (state_cost_.active()) add_final_interval_cost();
  }

  Scalar interval_adjoint(const Tape<Scalar>& tape, const TapeStep<Scalar>& st,
                          Scalar d_time) override {
    const Params& p = *p_;
    const Index i = this->visit_step(st);
    const TapeStep<Scalar>* prev = this->previous_step(i);
    Scalar g_step = d_time + pending_time_;
    if (!this->needs_flow(tape, st, prev)) {
      pending_time_ = 0;
      last_time_adjoint_ = g_step;
      return g_step;
    }
    // The gates over the interval and c at its end (recomputed from the checkpoints).
    const auto& in = replay_.interval_before(i);
    const TapeItem<Scalar>* items = tape.items_of(st);
    const bool crossing = st.kind == EventKind::kInternal;
    const Index m = crossing ? items[0].index : -1;  // the (first) crossing unit
    const Scalar dt = st.time - (prev ? prev->time : Scalar(0));
    const std::int64_t n_items = tape.n_items(st);
    if (crossing && n_items > 1) add_tied_guards(items, n_items, in, replay_.after(i - 1));
    // The end of the interval moves with the step time: dL/dT gets lam_c . dc/dt there.
    // The state cost over the interval moves with its length too (its rate l at T- when the
    // interval has length 0).
    const bool cost = state_cost_.active() && dt != 0;
    if (cost) lam_c_cost_.setZero(p.units());
    const Scalar cost_term =
        cost ? add_state_cost(replay_.after(i - 1).c, in.c_end, in.u, in.z, dt, lam_c_cost_)
             : running_cost(in.c_end);
    const Scalar flow_term =
        (lam_c_ * in.u * (in.z - in.c_end) / p.tau_m.array()).sum() + cost_term;
    g_step += flow_term;
    Scalar lam_c0_extra = 0, to_previous = 0, routed = g_step;
    if (crossing) {
      const Scalar c0 = replay_.after(i - 1).c[m];  // the state right after the previous step
      lam_c0_extra = this->crossing_time_adjoint(m, c0, in.u[m], in.z[m], g_step, n_items);
      to_previous = g_step;
      routed = 0;
    }
    if (dt != 0) flow_back(dt, in);  // an interval of length 0 is the identity
    if (cost) lam_c_ += lam_c_cost_;
    if (crossing) lam_c_[m] += lam_c0_extra;
    // The start of the interval moves with the previous step's time.
    pending_time_ = prev ? to_previous - flow_term : Scalar(0);
    last_time_adjoint_ = g_step;
    return routed;
  }

 private:
  using Base::g_;
  using Base::lam_c_;
  using Base::lam_r_;
  using Base::lam_u_;
  using Base::lam_z_;
  using Base::last_time_adjoint_;
  using Base::p_;
  using Base::pending_time_;
  using Base::replay_;
  using Interval = typename ContinuousEgruReplay<Scalar>::Interval;
  using LayerAdjoint<Scalar>::state_cost_;

  // The state cost after the layer's last step, [T_last, end] (over the whole run if the layer
  // has no step): the first contribution to the adjoints, and to the last step's time.
  void add_final_interval_cost() {
    const Index last = replay_.steps() - 1;
    const Scalar t_last = last >= 0 ? replay_.step(last).time : Scalar(0);
    const Scalar dt = state_cost_.end_time - t_last;
    if (!(dt > 0)) return;
    const auto& after = replay_.after(last);
    Array u, z;
    Cell::gates(after.a_u, after.a_z, u, z);
    Array c_end = after.c;
    Cell::advance(c_end, u, z, dt, p_->tau_m.array());
    const Scalar d_dt = add_state_cost(after.c, c_end, u, z, dt, lam_c_);
    if (last >= 0) pending_time_ = -d_dt;
  }

  // Units crossing together: the guards of the step's sub-steps after the first
  // (tied_crossings.hpp), every unit listed with its state at T-.
  void add_tied_guards(const TapeItem<Scalar>* items, std::int64_t k, const Interval& in,
                       const typename ContinuousEgruReplay<Scalar>::State& before) {
    const Index n = p_->units();
    auto& t = this->tied_;
    t.list_all(n);
    t.c = in.c_end.template cast<double>();
    t.a_u = before.a_u.template cast<double>();  // constant over the interval (box kernel)
    t.a_z = before.a_z.template cast<double>();
    t.lam_c = lam_c_.template cast<double>();
    this->solve_tied_crossings(items, k, double(pending_time_));
    for (std::int64_t s = 1; s < k; ++s) lam_c_[items[s].index] += Scalar(t.guard(s));
  }

  // The state cost's rate l at a state c of every unit (0 when off).
  Scalar running_cost(const Array& c) const {
    Scalar l = 0;
    if (state_cost_.active())
      for (Index i = 0; i < p_->units(); ++i) l += this->state_cost_rate(i, c[i]);
    return l;
  }

  // The state cost over one interval of every unit (c from c0 to c_end with the gates u, z): the
  // partials by c0 added to lam_c0; returns the derivative by the interval's length.
  Scalar add_state_cost(const Array& c0, const Array& c_end, const Array& u, const Array& z,
                        Scalar dt, Array& lam_c0) {
    Scalar d_dt = 0;
    for (Index i = 0; i < p_->units(); ++i) {
      const auto d = Base::add_state_cost(i, c0[i], c_end[i], u[i], z[i], dt);
      lam_c0[i] += d.c0;
      d_dt += d.dt;
    }
    return d_dt;
  }

  // Back across an interval of length dt with its gates and c at its end: lam(start) from
  // lam(end) in closed form, and the gates' adjoints.
  void flow_back(Scalar dt, const Interval& in) {
    const Index n = p_->units();
    lam_u_gate_.setZero(n);
    lam_z_gate_.setZero(n);
    lam_c0_ = in.decay;  // E, computed by the replay's forward step over the interval
    Cell::flow_adjoint(lam_c_, in.c_end, in.u, in.z, dt, p_->tau_m.array(), lam_c0_, lam_u_gate_,
                       lam_z_gate_, g_.tau_m->col(0).array());
    lam_u_ += lam_u_gate_ * in.u * (Scalar(1) - in.u);
    lam_z_ += lam_z_gate_ * (Scalar(1) - in.z * in.z);
    lam_c_.swap(lam_c0_);
  }

  Array lam_u_gate_, lam_z_gate_, lam_c0_;  // scratch of one interval
  Array lam_c_cost_;                        // the state cost's part of lam_c0
};

}  // namespace egret
