// The guards of units that cross theta at one time (one internal step with several items).
//
// The forward pass fires them together. A perturbation would separate them, and the gradient is
// the derivative from the side where they cross in the step's order (increasing unit index): the
// step taken as sub-steps, item s applied to the state x_s after items 0 .. s-1, with intervals of
// length 0 between them. Sub-step 0 is timed from the layer's previous step by the family's usual
// guard. Sub-step s >= 1 is timed from x_s, where unit n_s is at theta already (its time to
// crossing is 0): its guard takes the adjoint of its own time,
//
//   G_s = sum_{i >= s} g_i + later + H(x_s),
//
// g_i the time adjoint of item i's emission, `later` what the later steps route to the step's time,
// and H(x_s) = lam . f at x_s: lam_c,n_i is its value right after the step for i < s (n_i is reset
// there), 0 for i = s and the guard's own contribution for i > s (with the exp kernel, H also has
// the relaxing pre-activations' terms, and lam_r,n_i for i < s lacks what n_i's aux added: aux is
// r before n_i's own jump). The guard adds -G_s / cdot to lam_c,n_s at T- and G_s / cdot to
// dL/dtheta_n_s, with cdot = u (z - theta) / tau_m at x_s (a rate at or below 0 has no guard:
// the crossing is grazing). Sub-step 0 then takes sum_i g_i + later + H(x_0) with these guards in
// lam_c, which is the family's usual step.
// docs/adjoint.md §6 derives it. The work is O(listed units x items) and the memory O(items^2);
// only the listed units' terms of H change between sub-steps (a sparse layer lists the units the
// step touches).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "models/continuous_egru/continuous_egru_params.hpp"
#include "models/continuous_egru/event_columns.hpp"
#include "models/egru/egru_gates.hpp"
#include "sim/layer_adjoint.hpp"
#include "sim/tape.hpp"

namespace egret {

template <class Scalar>
class TiedCrossingGuards {
 public:
  using Vec = Eigen::ArrayXd;
  using Gates = EgruGates<double>;

  // The listed units, right before the step's jumps (T-): their indices, c, pre-activations a_u
  // and a_z, and lam_c (read for the units that do not cross in the step). Sized by list().
  std::vector<Index> unit;
  Vec c, a_u, a_z, lam_c;

  void list(Index n) {
    unit.resize(static_cast<std::size_t>(n));
    for (Vec* v : {&c, &a_u, &a_z, &lam_c}) v->resize(n);
  }
  void list_all(Index n) {  // a dense layer: every unit, in order
    list(n);
    for (Index m = 0; m < n; ++m) unit[static_cast<std::size_t>(m)] = m;
  }

  // The step's emissions as the sweep finished them: lam_c of the unit right after the step, the
  // adjoint of the emission's time, and what its aux (the reset gate r before the jump) added to
  // lam_r of the unit, which belongs to the sub-states before its own jump only.
  struct Emission {
    double lam_c_after = 0, time_adjoint = 0, lam_r_from_aux = 0;
  };

  // The terms of H besides those of c and the state cost (the exp kernel's relaxing
  // pre-activations, -sum_X lam_X (a_X - b_X) / tau_s; none with the box kernel): `before`, their
  // value at T-, and `jump(s)`, what items[s]'s jump changes in them (called for s = 0, 1, ...
  // in order).
  struct Relaxation {
    double before = 0;
    std::function<double(std::int64_t)> jump;
  };

  // The guards of sub-steps 1 .. k-1 (guard(s), to add to lam_c of items[s].index at T-), their
  // theta terms added to g_theta.
  void solve(const ContinuousEgruParams<Scalar>& p, const TapeItem<Scalar>* items, std::int64_t k,
             const Emission* emissions, double later, const StateCost<Scalar>& cost,
             const Relaxation& relaxation, Matrix<Scalar>& g_theta) {
    const auto n = static_cast<std::size_t>(k);
    locate(p.units(), items, k);
    sub_state_terms(p, items, k, emissions, cost, relaxation);
    guard_.assign(n, 0.0);
    for (std::int64_t s = k - 1; s >= 1; --s) {
      const auto us = static_cast<std::size_t>(s);
      later += emissions[us].time_adjoint;
      double h = own_terms_[us];
      for (std::size_t i = us + 1; i < n; ++i) h += guard_[i] * tied_rate_[us * n + i];
      const double g = later + h, rate = crossing_rate_[us];
      if (!(rate > 0)) continue;
      guard_[us] = -g / rate;
      g_theta(items[s].index, 0) += static_cast<Scalar>(g / rate);
    }
  }
  double guard(std::int64_t s) const { return guard_[static_cast<std::size_t>(s)]; }
  // dc/dt at theta of items[s]'s unit at x_s (s >= 1), for the report's grazing count.
  double crossing_rate(std::int64_t s) const { return crossing_rate_[static_cast<std::size_t>(s)]; }

 private:
  // Each item's position among the listed units.
  void locate(Index units, const TapeItem<Scalar>* items, std::int64_t k) {
    position_of_.assign(static_cast<std::size_t>(units), -1);
    for (std::size_t q = 0; q < unit.size(); ++q)
      position_of_[static_cast<std::size_t>(unit[q])] = static_cast<Index>(q);
    item_position_.resize(static_cast<std::size_t>(k));
    for (std::int64_t s = 0; s < k; ++s) {
      const Index q = position_of_[static_cast<std::size_t>(items[s].index)];
      if (q < 0) throw std::logic_error("TiedCrossingGuards: a crossing unit is not listed");
      item_position_[static_cast<std::size_t>(s)] = q;
    }
  }

  // Forward through the sub-states x_1 .. x_{k-1}: at each, H without the guards (own_terms_),
  // the rates of the units still to cross (tied_rate_, row s) and the crossing unit's rate at
  // theta.
  void sub_state_terms(const ContinuousEgruParams<Scalar>& p, const TapeItem<Scalar>* items,
                       std::int64_t k, const Emission* emissions, const StateCost<Scalar>& cost,
                       const Relaxation& relaxation) {
    const auto n = static_cast<std::size_t>(k);
    const auto listed = static_cast<Index>(unit.size());
    au_ = a_u;
    az_ = a_z;
    cs_ = c;
    lam_ = lam_c;
    for (std::size_t s = 0; s < n; ++s) lam_[item_position_[s]] = 0;  // reset in the step
    tau_.resize(listed);
    level_.resize(listed);
    for (Index q = 0; q < listed; ++q) {
      tau_[q] = double(p.tau_m[unit[static_cast<std::size_t>(q)]]);
      level_[q] = double(p.theta[unit[static_cast<std::size_t>(q)]] - cost.margin);
    }
    own_terms_.assign(n, 0.0);
    tied_rate_.assign(n * n, 0.0);
    crossing_rate_.assign(n, 0.0);
    double relaxed = relaxation.before;
    for (std::size_t s = 1; s < n; ++s) {
      apply(p, items[s - 1], emissions[s - 1]);
      if (relaxation.jump) relaxed += relaxation.jump(static_cast<std::int64_t>(s - 1));
      Gates::gates(au_, az_, u_, z_);
      rate_ = u_ * (z_ - cs_) / tau_;
      double h = (lam_ * rate_).sum() + relaxed;
      if (cost.active()) h += double(cost.weight) * (cs_ - level_).max(0.0).sum();
      own_terms_[s] = h;
      for (std::size_t i = s + 1; i < n; ++i) tied_rate_[s * n + i] = rate_[item_position_[i]];
      const Index q = item_position_[s];
      crossing_rate_[s] =
          u_[q] * (z_[q] - double(p.theta[items[s].index])) / double(p.tau_m[items[s].index]);
    }
  }

  // Item's jump on the listed units: its column, its unit reset (lam_c there: the value after).
  void apply(const ContinuousEgruParams<Scalar>& p, const TapeItem<Scalar>& item,
             const Emission& e) {
    const EgruColumn<Scalar> col = event_column(p, item.kind, item.index, item.value, item.aux);
    for (std::size_t q = 0; q < unit.size(); ++q) {
      const Index m = unit[q];
      au_[static_cast<Index>(q)] += double(col.scale_ur) * double(col.u[m]);
      az_[static_cast<Index>(q)] += double(col.scale_z) * double(col.z[m]);
    }
    const Index q = position_of_[static_cast<std::size_t>(item.index)];
    cs_[q] = 0;  // BoxEgruCell::reset_state
    lam_[q] = e.lam_c_after;
  }

  std::vector<Index> position_of_, item_position_;
  Vec au_, az_, cs_, lam_, u_, z_, rate_, tau_, level_;
  std::vector<double> own_terms_, tied_rate_, crossing_rate_, guard_;
};

}  // namespace egret
