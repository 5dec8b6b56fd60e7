// The physics of one continuous-time EGRU unit with the `exp` gate kernel (docs/model.md §1,
// EGRU paper Eq. 3-4): between events the gate pre-activations relax toward their biases,
//
//   tau_s da_X/dt = b_X - a_X        a_X(t0 + dt) = b_X + (a_X(t0) - b_X) exp(-dt / tau_s)
//   tau_m dc/dt   = u(t) (z(t) - c)  u = sigmoid(a_u(t)), z = tanh(a_z(t))
//
// so c has no closed form and is integrated numerically (exp_dense_units.hpp). The
// jumps, the guard c = theta and the reset are those of the box kernel (box_kernel_cell.hpp).
// What this file adds is what the integration and the crossing search need: the relaxed
// pre-activations, the right-hand side, and a bound on how early c can reach theta.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/egru/egru_gates.hpp"

namespace egret {

struct ExpKernelEgruCell : EgruGates<double> {  // integrated in double whatever the scalar
  // a_X at t0 + dt, from a0 at t0.
  static double relaxed(double a0, double bias, double dt, double tau_s) {
    return bias + (a0 - bias) * std::exp(-dt / tau_s);
  }

  // One unit between two events: its pre-activations at t0 and biases, and the constants.
  struct Unit {
    double t0 = 0;
    double a_u0 = 0, a_z0 = 0, b_u = 0, b_z = 0;
    double tau_s = 1, tau_m = 1, theta = 1;

    double u(double t) const { return sigmoid(relaxed(a_u0, b_u, t - t0, tau_s)); }
    double z(double t) const { return candidate(relaxed(a_z0, b_z, t - t0, tau_s)); }
    // dc/dt at time t.
    double rate(double c, double t) const { return u(t) * (z(t) - c) / tau_m; }

    // a_X moves monotonically from a_X0 toward b_X, so the largest z on [t, infinity) is at t
    // or in the limit. c < theta and that bound <= theta: c never reaches theta after t (at
    // c = theta, dc/dt = u (z - theta) <= 0).
    bool never_crosses_after(double c, double t) const {
      return c < theta && std::max(z(t), candidate(b_z)) <= theta;
    }

    // The earliest time after t at which c (= c at t) can reach theta, over [t, infinity): the
    // bound below with the gates' extremes over the whole relaxation (at t or in the limit).
    double earliest_possible_crossing_ever(double c, double t) const {
      if (c >= theta) return t;
      const double z_max = std::max(z(t), candidate(b_z));
      if (z_max <= theta) return std::numeric_limits<double>::infinity();
      const double u_max = std::max(u(t), sigmoid(b_u));
      return t + (tau_m / u_max) * std::log1p((theta - c) / (z_max - theta));
    }

    // The earliest time in [t, t1] at which c (= c at t) can reach theta, or infinity if it
    // cannot before t1. On [t, t1] the gates are monotone, so z <= z_max and u <= u_max with
    // both at the ends; while c < z_max, dc/dt <= u_max (z_max - c) / tau_m, whose solution
    // reaches theta after (tau_m / u_max) ln((z_max - c) / (z_max - theta)).
    double earliest_possible_crossing(double c, double t, double t1) const {
      if (c >= theta) return t;
      const double z_max = std::max(z(t), z(t1));
      if (z_max <= theta) return std::numeric_limits<double>::infinity();
      const double u_max = std::max(u(t), u(t1));
      const double when = t + (tau_m / u_max) * std::log1p((theta - c) / (z_max - theta));
      return when <= t1 ? when : std::numeric_limits<double>::infinity();
    }
  };
};

}  // namespace egret
