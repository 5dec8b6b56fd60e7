// The backward side of a continuous EGRU layer with the `exp` gate kernel. The jumps are the box
// kernel's (jump_adjoint.hpp); between steps the adjoints follow ODEs integrated
// backward with Boost.Odeint, and a crossing's time depends on the state through the generic
// guard rule (docs/adjoint.md, "The exp gate kernel"):
//
//   flow      tau_s da_X/dt = b_X - a_X,  tau_m dc/dt = u (z - c)
//   adjoint   dlam_c/dt = (u / tau_m) lam_c
//             dlam_u/dt = lam_u / tau_s - lam_c u (1 - u) (z - c) / tau_m
//             dlam_z/dt = lam_z / tau_s - lam_c u (1 - z^2) / tau_m
//             dlam_r/dt = lam_r / tau_s
//   gradient  dL/db_X += int lam_X / tau_s dt,   dL/dtau_s += int sum_X lam_X (a_X - b_X) / tau_s^2
//             dL/dtau_m += int -lam_c u (z - c) / tau_m^2
//   (every line per unit: each unit has its own tau_m and tau_s)
//   crossing  of unit m at T, with G the adjoint of T (its uses, plus lam . f at T-):
//             lam_c,m(T-) += -G / cdot_m(T-),  dL/dtheta_m += G / cdot_m(T-)
//   state regulariser (adjoint/state_regularizer.hpp), the running cost l = w sum_m h(c_m - a_m),
//             h(x) = max(0, x), a = theta - margin: a source in lam_c, dlam_c/dt -= w H(c - a);
//             dL/dtheta_m -= w int H(c_m - a_m) dt unless detached; l joins lam . f wherever
//             the time adjoints take it (the Hamiltonian), and after the layer's last step the
//             adjoints start from the cost over [T_last, end] (docs/adjoint.md section 4b).
//
// The forward state over an interval is re-created from the state after the previous step
// (dense_replay.hpp, from the tape's checkpoints): the pre-activations in closed form,
// c by the forward pass's own integration (ExpKernelEgruFlow), whose accepted steps are kept.
// The adjoint system, with c, is integrated backward over one forward step at a time, starting
// each from the forward c at the step's end: c is contracting forward, so integrated backward
// over a long interval it would amplify its error; over one error-controlled step it does not.
// Memory: the forward steps of one interval.
#pragma once

#include <boost/numeric/odeint.hpp>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "models/continuous_egru/dense_replay.hpp"
#include "models/continuous_egru/exp_kernel_flow.hpp"
#include "models/continuous_egru/jump_adjoint.hpp"

namespace egret {

template <class Scalar>
class ExpKernelEgruAdjoint final : public ContinuousEgruJumpAdjoint<Scalar> {
 public:
  using Base = ContinuousEgruJumpAdjoint<Scalar>;
  using typename Base::Params;
  using Vec = Eigen::ArrayXd;

  explicit ExpKernelEgruAdjoint(std::shared_ptr<const Params> p) : Base(std::move(p)) {}

  // The state regulariser, integrated with the adjoints.
  bool has_state_cost() const override { return true; }
  Scalar state_cost_value() const override { return static_cast<Scalar>(cost_value_); }

  void begin(const Tape<Scalar>& tape, Index layer) override {
    Base::begin(tape, layer);
    b_u_ = p_->b_u.array().template cast<double>();
    b_r_ = p_->b_r.array().template cast<double>();
    b_z_ = p_->b_z.array().template cast<double>();
    cost_weight_ = double(state_cost_.weight);
    cost_value_ = 0;
    if (state_cost_.active()) {
      level_ = (p_->theta.array() - state_cost_.margin).template cast<double>();
      add_final_interval_cost();
    }
  }

  Scalar interval_adjoint(const Tape<Scalar>& tape, const TapeStep<Scalar>& st,
                          Scalar d_time) override {
    const Index i = this->visit_step(st);
    const TapeStep<Scalar>* prev = this->previous_step(i);
    const double g_uses = double(d_time + pending_time_);
    if (!this->needs_flow(tape, st, prev)) {
      pending_time_ = 0;
      last_time_adjoint_ = static_cast<Scalar>(g_uses);
      return static_cast<Scalar>(g_uses);
    }
    const double t0 = prev ? double(prev->time) : 0.0, t1 = double(st.time);
    load_interval(replay_.after(i - 1), t0, t1);
    const bool crossing = st.kind == EventKind::kInternal;
    const std::int64_t n_items = tape.n_items(st);
    if (crossing && n_items > 1) add_tied_guards(tape.items_of(st), n_items, t1);
    const double flow_term = hamiltonian(t1);
    const double g_step = g_uses + flow_term;
    if (crossing) crossing_time_adjoint(tape.items_of(st)[0].index, g_step, n_items);
    if (t1 > t0) flow_back();
    store_adjoints();
    // The start of the interval moves with the previous step's time: -lam . f there, which is
    // lam . f at T- (lam . f is constant along an autonomous flow). A crossing's time also moves
    // one for one with the previous step's.
    const double to_previous = crossing ? g_step : 0.0;
    pending_time_ = prev ? static_cast<Scalar>(to_previous - flow_term) : Scalar(0);
    last_time_adjoint_ = static_cast<Scalar>(g_step);
    return crossing ? Scalar(0) : static_cast<Scalar>(g_step);
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
  using LayerAdjoint<Scalar>::state_cost_;

  // The state cost after the layer's last step, [T_last, end] (over the whole run if the layer
  // has no step), with all adjoints 0 at the end: the first contribution to the adjoints. The
  // last step's time moves the interval's start: -H there, which is -H at the end = -l(end).
  void add_final_interval_cost() {
    const Index last = replay_.steps() - 1;
    const double t_last = last >= 0 ? double(replay_.step(last).time) : 0.0;
    const double end = double(state_cost_.end_time);
    if (!(end > t_last)) return;
    load_interval(replay_.after(last), t_last, end);
    const double cost_at_end = running_cost(end);
    flow_back();
    store_adjoints();
    if (last >= 0) pending_time_ = static_cast<Scalar>(-cost_at_end);
  }

  // l = w sum_m h(c_m - a_m) at t1- (c at the end of the loaded interval); 0 when off.
  double running_cost(double) const {
    if (cost_weight_ == 0) return 0;
    const Eigen::Map<const Vec> c(step_c_.data() + step_c_.size() - n_, n_);
    return cost_weight_ * (c - level_).max(0.0).sum();
  }

  // The interval [t0, t1]: the forward state after the previous step, the forward integration
  // of c with its accepted steps, and the adjoints in double.
  template <class State>
  void load_interval(const State& before, double t0, double t1) {
    const Params& p = *p_;
    n_ = p.units();
    t0_ = t0;
    tau_s_ = p.tau_s.array().template cast<double>();
    tau_m_ = p.tau_m.array().template cast<double>();
    d0_u_ = before.a_u.template cast<double>() - b_u_;
    d0_r_ = before.a_r.template cast<double>() - b_r_;
    d0_z_ = before.a_z.template cast<double>() - b_z_;
    step_times_.clear();
    step_c_.clear();
    auto keep = [&](double t, const std::vector<double>& c) {
      step_times_.push_back(t);
      step_c_.insert(step_c_.end(), c.begin(), c.end());
    };
    c_scratch_ = before.c;
    if (t1 > t0) {
      ExpKernelEgruFlow::integrate_c(p, c_scratch_, before.a_u, before.a_z, t0, t1, flow_work_,
                                     keep);
      if (step_times_.size() < 2 || step_times_.back() != t1)
        throw std::logic_error("continuous_egru adjoint (exp kernel): integration missed t1");
    } else {
      step_times_.push_back(t0);  // an interval of length 0: c as it is, no allocation
      step_c_.insert(step_c_.end(), c_scratch_.data(), c_scratch_.data() + n_);
    }
    y_.assign(static_cast<std::size_t>(kParts * n_ + kScalars), 0.0);
    const Scalar* lam[4] = {lam_c_.data(), lam_u_.data(), lam_r_.data(), lam_z_.data()};
    for (int k = 0; k < 4; ++k)
      for (Index m = 0; m < n_; ++m) y_[static_cast<std::size_t>((k + 1) * n_ + m)] = lam[k][m];
  }

  // lam . f at t1- (the end of the interval, before the step's jumps). Leaves u_, z_ at t1-,
  // which crossing_time_adjoint reads.
  double hamiltonian(double t1) {
    gates_at(t1);
    const Eigen::Map<const Vec> c(step_c_.data() + step_c_.size() - n_, n_);
    const double* y = y_.data();
    const Eigen::Map<const Vec> lc(y + n_, n_), lu(y + 2 * n_, n_), lr(y + 3 * n_, n_),
        lz(y + 4 * n_, n_);
    const double flow_c = (lc * u_ * (z_ - c) / tau_m_).sum();
    return flow_c - (relaxation_product(lu, lr, lz) * e_ / tau_s_).sum() + running_cost(t1);
  }

  // A crossing of unit m at T = t1 with the total time adjoint g: T moves by -dc_m / cdot_m
  // under a change dc_m of c_m(T-) and by dtheta / cdot_m under a change of theta_m. The rate is
  // taken at c = theta (the guard), as in the box kernel; an interval of length 0 (the unit at
  // theta when the previous step happened) has the same guard. A rate at or below 0 has none.
  void crossing_time_adjoint(Index m, double g, std::int64_t n_crossing) {
    const double theta = double(p_->theta[m]);
    const double rate = u_[m] * (z_[m] - theta) / tau_m_[m];
    this->count_crossing(static_cast<Scalar>(rate), n_crossing);
    if (!(rate > 0)) return;
    y_[static_cast<std::size_t>(n_ + m)] -= g / rate;
    (*g_.theta)(m, 0) += static_cast<Scalar>(g / rate);
  }

  // Units crossing together at t1: the guards of the step's sub-steps after the first
  // (tied_crossings.hpp), every unit listed with its state at t1-. The relaxing pre-activations
  // are in lam . f: each jump's column changes them, -sum_X lam_X column_X / tau_s, and after its
  // own jump a unit's lam_r no longer holds what its aux added (aux is r before that jump).
  void add_tied_guards(const TapeItem<Scalar>* items, std::int64_t k, double t1) {
    auto& t = this->tied_;
    t.list_all(n_);
    gates_at(t1);
    t.a_u = b_u_ + d0_u_ * e_;
    t.a_z = b_z_ + d0_z_ * e_;
    t.c = Eigen::Map<const Vec>(step_c_.data() + step_c_.size() - n_, n_);
    const Eigen::Map<const Vec> lc(y_.data() + n_, n_), lu(y_.data() + 2 * n_, n_),
        lr(y_.data() + 3 * n_, n_), lz(y_.data() + 4 * n_, n_);
    t.lam_c = lc;
    tied_lam_r_ = lr;
    tied_a_r_ = b_r_ + d0_r_ * e_;
    typename TiedCrossingGuards<Scalar>::Relaxation relaxation;
    relaxation.before = -(relaxation_product(lu, lr, lz) * e_ / tau_s_).sum();
    const auto& emissions = this->emissions_;
    relaxation.jump = [&, items](std::int64_t s) {
      const TapeItem<Scalar>& item = items[s];
      const EgruColumn<Scalar> col = event_column(*p_, item.kind, item.index, item.value, item.aux);
      const double ur = double(col.scale_ur), sz = double(col.scale_z);
      double change = 0;
      for (Index m = 0; m < n_; ++m) {
        change -= (ur * (lu[m] * double(col.u[m]) + tied_lam_r_[m] * double(col.r[m])) +
                   sz * lz[m] * double(col.z[m])) /
                  tau_s_[m];
        tied_a_r_[m] += ur * double(col.r[m]);
      }
      const Index j = item.index;
      const double from_aux = emissions[static_cast<std::size_t>(s)].lam_r_from_aux;
      change += from_aux * (tied_a_r_[j] - b_r_[j]) / tau_s_[j];
      tied_lam_r_[j] -= from_aux;
      return change;
    };
    this->solve_tied_crossings(items, k, double(pending_time_), relaxation);
    for (std::int64_t s = 1; s < k; ++s)
      y_[static_cast<std::size_t>(n_ + items[s].index)] += t.guard(s);
  }

  // The adjoint system backward over each forward step, latest first, c restarted from the
  // forward value at the step's end.
  void flow_back() {
    namespace odeint = boost::numeric::odeint;
    const double tol = double(p_->ode_tolerance);
    const std::size_t n = static_cast<std::size_t>(n_);
    for (std::size_t k = step_times_.size() - 1; k > 0; --k) {
      const double t_hi = step_times_[k], h = t_hi - step_times_[k - 1];
      std::copy(step_c_.begin() + static_cast<std::ptrdiff_t>(k * n),
                step_c_.begin() + static_cast<std::ptrdiff_t>((k + 1) * n), y_.begin());
      auto rhs = [&](const std::vector<double>& y, std::vector<double>& dy, double s) {
        backward_rhs(y, dy, t_hi - s);
      };
      odeint::integrate_adaptive(
          odeint::make_controlled(tol, tol, odeint::runge_kutta_dopri5<std::vector<double>>()), rhs,
          y_, 0.0, h, h);
    }
  }

  // d/ds of [c, lam_c, lam_u, lam_r, lam_z, g_b_u, g_b_r, g_b_z, g_theta, g_tau_m, g_tau_s,
  // cost] (all N-vectors but the cost) at time t, where s = t_hi - t runs backward.
  void backward_rhs(const std::vector<double>& y, std::vector<double>& dy, double t) {
    using Map = Eigen::Map<const Vec>;
    using Out = Eigen::Map<Vec>;
    const Index n = n_;
    gates_at(t);
    const Map c(y.data(), n), lc(y.data() + n, n), lu(y.data() + 2 * n, n), lr(y.data() + 3 * n, n),
        lz(y.data() + 4 * n, n);
    double* d = dy.data();
    gap_ = z_ - c;
    const Vec& gap = gap_;
    Out(d, n) = -u_ * gap / tau_m_;
    Out(d + n, n) = -u_ * lc / tau_m_;
    if (cost_weight_ != 0) {
      above_ = (c > level_).template cast<double>();
      Out(d + n, n) += cost_weight_ * above_;
      if (state_cost_.detach_threshold)
        Out(d + 8 * n, n).setZero();
      else
        Out(d + 8 * n, n) = -cost_weight_ * above_;
      d[kParts * n] = cost_weight_ * (c - level_).max(0.0).sum();
    } else {
      Out(d + 8 * n, n).setZero();
      d[kParts * n] = 0;
    }
    Out(d + 2 * n, n) = lc * u_ * (1 - u_) * gap / tau_m_ - lu / tau_s_;
    Out(d + 3 * n, n) = -lr / tau_s_;
    Out(d + 4 * n, n) = lc * u_ * (1 - z_ * z_) / tau_m_ - lz / tau_s_;
    Out(d + 5 * n, n) = lu / tau_s_;
    Out(d + 6 * n, n) = lr / tau_s_;
    Out(d + 7 * n, n) = lz / tau_s_;
    Out(d + 9 * n, n) = -lc * u_ * gap / (tau_m_ * tau_m_);
    Out(d + 10 * n, n) = relaxation_product(lu, lr, lz) * e_ / (tau_s_ * tau_s_);
  }

  // Per unit, sum_X lam_X (a_X(t0) - b_X): times e, minus tau_s lam . da/dt of the gates (the
  // gates' share of lam . f, and of the tau_s integrand).
  template <class L>
  auto relaxation_product(const L& lu, const L& lr, const L& lz) const {
    return lu * d0_u_ + lr * d0_r_ + lz * d0_z_;
  }

  // Each unit's relaxation factor e = exp(-(t - t0) / tau_s) at t, and u and z there.
  void gates_at(double t) {
    e_ = (-(t - t0_) / tau_s_).exp();
    ExpKernelEgruCell::gates(b_u_ + d0_u_ * e_, b_z_ + d0_z_ * e_, u_, z_);
  }

  // The adjoints at the start of the interval back into the layer's arrays, and the integrals
  // into the gradient.
  void store_adjoints() {
    const Index n = n_;
    const double* y = y_.data();
    Scalar* lam[4] = {lam_c_.data(), lam_u_.data(), lam_r_.data(), lam_z_.data()};
    for (int k = 0; k < 4; ++k)
      for (Index m = 0; m < n; ++m) lam[k][m] = static_cast<Scalar>(y[(k + 1) * n + m]);
    Matrix<Scalar>* bias[3] = {g_.b_u, g_.b_r, g_.b_z};
    for (int k = 0; k < 3; ++k)
      for (Index m = 0; m < n; ++m) (*bias[k])(m, 0) += static_cast<Scalar>(y[(k + 5) * n + m]);
    for (Index m = 0; m < n; ++m) (*g_.theta)(m, 0) += static_cast<Scalar>(y[8 * n + m]);
    for (Index m = 0; m < n; ++m) {
      (*g_.tau_m)(m, 0) += static_cast<Scalar>(y[9 * n + m]);
      (*g_.tau_s)(m, 0) += static_cast<Scalar>(y[10 * n + m]);
    }
    cost_value_ += y[kParts * n];
  }

  static constexpr Index kParts = 11;   // N-vectors in the backward system
  static constexpr Index kScalars = 1;  // then the state cost's value

  // The biases in double (once per sweep); one interval: its start, the constants, the
  // pre-activations' distance to their biases at its start, scratch.
  Vec b_u_, b_r_, b_z_;
  Index n_ = 0;
  double t0_ = 0;
  Vec tau_s_, tau_m_;  // each unit's
  Vec d0_u_, d0_r_, d0_z_, e_, u_, z_, gap_, above_;
  Vec level_;  // theta - margin of the state regulariser
  double cost_weight_ = 0, cost_value_ = 0;
  std::vector<double> step_times_, step_c_;  // the forward integration's accepted steps
  std::vector<double> y_, flow_work_;        // the backward system's state; integrate_c's
  typename Base::Array c_scratch_;
  Vec tied_lam_r_, tied_a_r_;  // lam_r and a_r through the sub-states of tied crossings
};

}  // namespace egret
