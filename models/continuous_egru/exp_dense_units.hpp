// The state of a continuous EGRU layer with the `exp` gate kernel (exp_kernel_cell.hpp):
// between events every unit's pre-activations relax toward their biases, and c is integrated
// with Boost.Odeint (Dormand-Prince 5(4), error-controlled) in double whatever the layer's
// scalar. The next crossing of each unit is searched on the stepper's dense output:
//   * every step [t0, t1] is scanned with a bound (ExpKernelEgruCell::Unit::
//     earliest_possible_crossing): c cannot reach theta before the bound's time, so the scan
//     jumps there and evaluates the dense output; a crossing cannot hide between two sample
//     points, even one where c goes up and comes back down inside one step;
//   * a sample at or above theta brackets the crossing, which Boost.Math's TOMS 748 then finds
//     on the dense output to `crossing_tolerance` (ms);
//   * a unit stops being searched when its c is below theta and its z can no longer exceed
//     theta (it never crosses), or, after 40 tau_s, when its gates equal their biases: the rest
//     is the box kernel's closed form, or at the end of the run (set_search_end): a crossing
//     after it is reported as never. Without that end, a tau_s far above tau_m would make the
//     search step through 40 tau_s at the explicit stepper's stable step, about tau_m.
// Same interface as DenseEgruUnits (box_dense_units.hpp); ContinuousEgruLayer holds
// one of them. Events bring every unit to their time, as in the dense layer.
#pragma once

#include <algorithm>
#include <array>
#include <boost/math/tools/toms748_solve.hpp>
#include <boost/numeric/odeint.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "events/event.hpp"
#include "models/continuous_egru/box_kernel_cell.hpp"
#include "models/continuous_egru/checkpoint_layout.hpp"
#include "models/continuous_egru/continuous_egru_params.hpp"
#include "models/continuous_egru/event_columns.hpp"
#include "models/continuous_egru/exp_kernel_cell.hpp"
#include "models/continuous_egru/exp_kernel_flow.hpp"

namespace egret {

template <class Scalar>
class ExpKernelEgruUnits {
 public:
  using Array = typename BoxEgruCell<Scalar>::Array;
  using Params = ContinuousEgruParams<Scalar>;
  using Cell = ExpKernelEgruCell;
  // After this many tau_s the relaxation factor exp(-t / tau_s) is 4.25e-18: the gates differ
  // from their biases' by at most 4.25e-18 |a0 - b|, far below the integration's tolerance, so
  // the flow is taken as the box kernel's with constant gates and the rest of the search is its
  // closed form (BoxEgruCell::time_to_crossing).
  static constexpr double kSettledTimeConstants = 40;

  // `p` outlives the units (the layer holds both).
  explicit ExpKernelEgruUnits(const Params& p) : p_(&p) {
    const Index n = p.units();
    for (Array* v : {&a_u_, &a_r_, &a_z_, &c_, &crossing_}) v->resize(n);
    bound_.resize(n);
    resolved_.assign(static_cast<std::size_t>(n), false);
  }

  void reset(const Params& p) {
    a_u_ = p.b_u.array();
    a_r_ = p.b_r.array();
    a_z_ = p.b_z.array();
    c_ = p.c_init.array();
    t_last_ = 0;
    dirty_ = true;
    settle(p);
  }

  // Crossings after end_time are never asked for (Layer::set_end_time); infinity: none.
  void set_search_end(Scalar end_time) { search_end_ = double(end_time); }

  Index units() const { return c_.size(); }
  Scalar a_r(Index m) const { return a_r_[m]; }
  // The gate pre-activations at t >= t_last (relaxed toward the biases).
  std::array<std::vector<Scalar>, 3> preactivations(Scalar t) const {
    const Params& p = *p_;
    std::array<std::vector<Scalar>, 3> out;
    const Array* a[3] = {&a_u_, &a_r_, &a_z_};
    const Vector<Scalar>* b[3] = {&p.b_u, &p.b_r, &p.b_z};
    for (int g = 0; g < 3; ++g)
      for (Index m = 0; m < units(); ++m)
        out[static_cast<std::size_t>(g)].push_back(static_cast<Scalar>(
            Cell::relaxed((*a[g])[m], (*b[g])[m], double(t - t_last_), double(p.tau_s[m]))));
    return out;
  }

  // Every unit's c integrated to t and its pre-activations relaxed to t.
  void begin_time(Scalar t, const Params& p) {
    if (t == t_last_) return;
    integrate_all(p, double(t));
    ExpKernelEgruFlow::relax(a_u_, p.b_u, t - t_last_, p.tau_s);
    ExpKernelEgruFlow::relax(a_r_, p.b_r, t - t_last_, p.tau_s);
    ExpKernelEgruFlow::relax(a_z_, p.b_z, t - t_last_, p.tau_s);
    t_last_ = t;
    dirty_ = true;
  }

  void add_columns(const EgruColumn<Scalar>* cols, Index n_cols) {
    if (n_cols == 0) return;
    apply_columns(cols, n_cols, units(), a_u_, &a_r_, a_z_);
    dirty_ = true;
  }

  void reset_unit(Index m) {
    c_[m] = BoxEgruCell<Scalar>::reset_state();
    dirty_ = true;
  }

  // The earliest next crossing. Every unit gets a cheap lower bound on its crossing time
  // (ExpKernelEgruCell::Unit::earliest_possible_crossing_ever); units are then searched on the
  // dense output in the order of their bounds, until the next bound lies beyond the earliest
  // crossing found. The others keep their bound (resolved_ false): any event before it changes
  // their state anyway, and crossing_times() resolves them when asked.
  void settle(const Params& p) {
    if (!dirty_) return;
    const Index n = units();
    order_.resize(static_cast<std::size_t>(n));
    for (Index m = 0; m < n; ++m) {
      order_[static_cast<std::size_t>(m)] = m;
      bound_[m] = unit(m, p).earliest_possible_crossing_ever(double(c_[m]), double(t_last_));
      resolved_[static_cast<std::size_t>(m)] = false;
    }
    std::sort(order_.begin(), order_.end(), [&](Index a, Index b) {
      return bound_[a] < bound_[b] || (bound_[a] == bound_[b] && a < b);
    });
    double best = never<double>();
    for (const Index m : order_) {
      if (bound_[m] > best) break;  // its crossing, if any, comes after the earliest
      resolve(m, p);
      best = std::min(best, double(crossing_[m]));
    }
    earliest_unit_ = 0;
    earliest_time_ = never<Scalar>();
    for (Index m = 0; m < n; ++m) {
      if (resolved_[static_cast<std::size_t>(m)] && crossing_[m] < earliest_time_) {
        earliest_time_ = crossing_[m];
        earliest_unit_ = m;
      }
    }
    dirty_ = false;
  }

  Index earliest_unit() const { return earliest_unit_; }
  Scalar earliest_time() const { return earliest_time_; }
  // An unresolved unit's bound exceeds the earliest crossing, so it cannot cross at t.
  void units_crossing_at(Scalar t, const Params& p, std::vector<Index>& out) {
    settle(p);
    for (Index m = 0; m < units(); ++m)
      if (resolved_[static_cast<std::size_t>(m)] && crossing_[m] == t) out.push_back(m);
  }
  const Array& crossing_times(const Params& p) {
    settle(p);
    for (Index m = 0; m < units(); ++m)
      if (!resolved_[static_cast<std::size_t>(m)]) resolve(m, p);
    return crossing_;
  }

  // c of every unit at time t >= t_last.
  void state_at(Scalar t, Scalar* c_out) const {
    for (Index m = 0; m < units(); ++m)
      c_out[m] = static_cast<Scalar>(integrate(m, *p_, double(t)));
  }
  // [c; a_u; a_z; a_r]: the exp kernel's adjoint needs a_r too (its relaxation feeds the
  // gradients of b_r and tau_s).
  void append_state_now(std::vector<Scalar>& out) const {
    const std::array<const Array*, 4> blocks = {&c_, &a_u_, &a_z_, &a_r_};  // in layout order
    CheckpointLayout::append(out, units(), GateKernel::kExp, [&](CheckpointBlock b, Scalar* to) {
      const Array& from = *blocks[static_cast<std::size_t>(b)];
      std::copy(from.data(), from.data() + from.size(), to);
    });
  }

 private:
  using State = std::array<double, 1>;

  void resolve(Index m, const Params& p) {
    crossing_[m] = static_cast<Scalar>(next_crossing_time(m, p));
    resolved_[static_cast<std::size_t>(m)] = true;
  }

  Cell::Unit unit(Index m, const Params& p) const {
    return {double(t_last_),  double(a_u_[m]),    double(a_z_[m]),    double(p.b_u[m]),
            double(p.b_z[m]), double(p.tau_s[m]), double(p.tau_m[m]), double(p.theta[m])};
  }
  static auto system(const Cell::Unit& cell) {
    return [cell](const State& x, State& dxdt, double t) { dxdt[0] = cell.rate(x[0], t); };
  }
  static double initial_step(const Cell::Unit& cell) {
    return ExpKernelEgruFlow::initial_step(cell.tau_m, cell.tau_s);
  }

  // Every unit's c from t_last to t, as one vector ODE (exp_kernel_flow.hpp): the
  // gates are computed for all units at once.
  void integrate_all(const Params& p, double t) {
    ExpKernelEgruFlow::integrate_c(p, c_, a_u_, a_z_, double(t_last_), t, all_c_,
                                   ExpKernelEgruFlow::Unobserved{});
  }

  // c of unit m at t >= t_last, integrated from its state at t_last.
  double integrate(Index m, const Params& p, double t) const {
    State x{double(c_[m])};
    if (t == double(t_last_)) return x[0];
    const Cell::Unit cell = unit(m, p);
    const double tol = double(p.ode_tolerance);
    boost::numeric::odeint::integrate_adaptive(
        boost::numeric::odeint::make_controlled(
            tol, tol, boost::numeric::odeint::runge_kutta_dopri5<State>()),
        system(cell), x, double(t_last_), t, initial_step(cell));
    return x[0];
  }

  // The absolute time at which unit m's c next reaches theta from below, or never.
  double next_crossing_time(Index m, const Params& p) const {
    const Cell::Unit cell = unit(m, p);
    const double c0 = double(c_[m]), t0 = double(t_last_);
    if (c0 >= cell.theta) return t0;  // only through rounding: c is continuous
    if (cell.never_crosses_after(c0, t0)) return never<double>();
    const double settled = t0 + kSettledTimeConstants * cell.tau_s;
    const double search_end = std::min(settled, search_end_);
    const double tol = double(p.ode_tolerance);
    auto stepper = boost::numeric::odeint::make_dense_output(
        tol, tol, boost::numeric::odeint::runge_kutta_dopri5<State>());
    stepper.initialize(State{c0}, t0, initial_step(cell));
    const auto rhs = system(cell);
    while (stepper.current_time() < search_end) {
      const double c_start = stepper.current_state()[0];
      if (cell.never_crosses_after(c_start, stepper.current_time())) return never<double>();
      const auto [ta, tb] = stepper.do_step(rhs);
      const double found = crossing_in_step(stepper, cell, ta, tb, double(p.crossing_tolerance));
      if (found < never<double>()) return found;
    }
    if (search_end < settled) return never<double>();  // past the end of the run
    const double t = stepper.current_time(), c = stepper.current_state()[0];
    return t + BoxEgruCell<double>::time_to_crossing(
                   c, Cell::sigmoid(cell.b_u), Cell::candidate(cell.b_z), cell.theta, cell.tau_m);
  }

  // The crossing inside the dense-output step [ta, tb], or never. The scan's sample points come
  // from the bound, so c stays below theta between them.
  template <class Stepper>
  static double crossing_in_step(Stepper& stepper, const Cell::Unit& cell, double ta, double tb,
                                 double tolerance) {
    State x;
    auto c_at = [&](double t) {
      stepper.calc_state(t, x);
      return x[0];
    };
    double t = ta, c = c_at(ta);
    // A bound that creeps (grazing: the true slope far below the bound's) still moves at least
    // this much per sample; 4096 samples of a step are far finer than its error control.
    const double least_move = (tb - ta) / 4096;
    while (c < cell.theta) {
      double next = cell.earliest_possible_crossing(c, t, tb);
      if (next == never<double>()) return never<double>();
      next = std::min(tb, std::max(next, t + least_move));
      const double c_next = c_at(next);
      if (c_next >= cell.theta) return root(c_at, cell.theta, t, next, c, c_next, tolerance);
      if (next >= tb) return never<double>();
      t = next;
      c = c_next;
    }
    return t;
  }

  // c(t) = theta on [lo, hi], c(lo) < theta <= c(hi): TOMS 748 to `tolerance` ms; the upper
  // end of the final bracket (where c has reached theta).
  template <class F>
  static double root(F&& c_at, double theta, double lo, double hi, double c_lo, double c_hi,
                     double tolerance) {
    if (c_hi == theta) return hi;
    std::uintmax_t iterations = 200;
    const auto bracket = boost::math::tools::toms748_solve(
        [&](double t) { return c_at(t) - theta; }, lo, hi, c_lo - theta, c_hi - theta,
        [tolerance](double a, double b) { return std::abs(b - a) <= tolerance; }, iterations);
    return bracket.second;
  }

  const Params* p_;
  Array a_u_, a_r_, a_z_, c_;  // state at t_last_
  Scalar t_last_ = 0;
  Array crossing_;        // of the resolved units
  Eigen::ArrayXd bound_;  // every unit's lower bound on its crossing time
  std::vector<bool> resolved_;
  std::vector<Index> order_;   // units by bound, for settle()
  std::vector<double> all_c_;  // integrate_all's state
  Scalar earliest_time_ = never<Scalar>();
  Index earliest_unit_ = 0;
  bool dirty_ = true;
  double search_end_ = std::numeric_limits<double>::infinity();
};

}  // namespace egret
