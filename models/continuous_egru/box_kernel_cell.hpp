// The physics of one continuous-time EGRU unit with the `box` gate kernel (docs/model.md §1):
// gates, flow, guard (next crossing), and jumps. Nothing here knows about queues or layers;
// the layer (continuous_egru_layer.hpp) applies these equations to N units, the engine decides
// when. The adjoint pass (adjoint/) differentiates exactly these functions.
//
//   u = sigmoid(a_u), r = sigmoid(a_r), z = tanh(a_z)
//   tau_m dc/dt = u (z - c)                 (gates piecewise constant between events)
//   guard: c = theta, reached from below    (internal event, value y = theta, then c = 0)
//   jumps on the receivers of an event of unit n with value y:
//     a_u += V_u[:, n] y,  a_r += V_r[:, n] y,  a_z += V_z[:, n] r_n(s-) y
//   jumps on an external input (channel k, value x): a_X += U_X[:, k] x, c unchanged.
//
// Each equation comes in a scalar form (one unit) and an array form (all units of a layer at
// once), written with exp and log only so that Eigen vectorises them (it has SIMD exp/log for
// float and double, but not tanh/expm1/log1p for double): tanh(a) = 1 - 2 / (1 + exp(2a)).
// The two forms are the same formulas, term for term.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "models/egru/egru_gates.hpp"
#include "models/shared/subnormals.hpp"

namespace egret::detail {

// The exponent x = u q of a decay exp(-u dt / tau_m) (q = -dt / tau_m), computed so that no step
// of exp(x) has a subnormal result, with exp(x) bitwise unchanged: where |x| < kTinyX = eps / 8,
// exp(x) rounds to exactly 1 (1 + x is within a quarter ulp of 1), and x is replaced by 0
// (exp(0) = 1). Left alone, such an x makes the polynomial's x^3 underflow (below 2.3e-13 in
// float), and u q itself is subnormal for the smallest u: so u is taken as 0 where u < kTinyU and
// |q| < kBigQ (then |u q| < kTinyX as well).
// NaN stays NaN. Vectorised: Eigen keeps an expression with it in packets (a select() would make
// the whole expression scalar, std::exp included).
template <class Scalar>
struct DecayExponent {
  using Limits = std::numeric_limits<Scalar>;
  static constexpr Scalar kTinyX = Limits::epsilon() / Scalar(8);  // 2^-26 (float)
  static constexpr Scalar kTinyU = kNearlySubnormal<Scalar>;       // 2^-100 (float)
  static constexpr Scalar kBigQ = kTinyX / kTinyU;                 // 2^74 (float)

  Scalar operator()(Scalar u, Scalar q) const {
    return kZeroTinyX((u < kTinyU && std::abs(q) < kBigQ ? Scalar(0) : u) * q);
  }
  template <class Packet>
  Packet packetOp(const Packet& u, const Packet& q) const {
    namespace ei = Eigen::internal;
    const Packet tiny_u = ei::pand(ei::pcmp_lt(u, ei::pset1<Packet>(kTinyU)),
                                   ei::pcmp_lt(ei::pabs(q), ei::pset1<Packet>(kBigQ)));
    return kZeroTinyX.packetOp(ei::pmul(ei::pandnot(u, tiny_u), q));
  }

 private:
  static constexpr ZeroBelowMagnitude<Scalar> kZeroTinyX{kTinyX};
};

}  // namespace egret::detail

// Eigen evaluates an expression in packets only where every functor in it says it can.
template <class Scalar>
struct Eigen::internal::functor_traits<egret::detail::DecayExponent<Scalar>> {
  enum { Cost = 6, PacketAccess = true };
};

namespace egret {

template <class Scalar>
struct BoxEgruCell : EgruGates<Scalar> {  // gates: models/egru/egru_gates.hpp
  using Array = typename EgruGates<Scalar>::Array;
  using EgruGates<Scalar>::gates;

  // Closed-form flow: c(t0 + dt) = c0 + (z - c0) (1 - exp(-u dt / tau_m)) with the gates held
  // at (u, z); dt = 0 returns c0 exactly.
  static Scalar flow(Scalar c0, Scalar u, Scalar z, Scalar dt, Scalar tau_m) {
    return c0 + (z - c0) * (Scalar(1) - std::exp(-u * dt / tau_m));
  }

  // dc/dt, the right-hand side of the flow.
  static Scalar rate(Scalar c, Scalar u, Scalar z, Scalar tau_m) { return u * (z - c) / tau_m; }

  // Time from now until c reaches theta, with the gates held at (u, z); infinity when the flow
  // never gets there (z <= theta: c relaxes toward z without reaching theta). A state already at
  // or above theta (possible only through rounding, since c is continuous and starts below)
  // crosses now.
  //   c0 < theta < z:  dt = (tau_m / u) ln((z - c0) / (z - theta))
  // written as ln(1 + (theta - c0) / (z - theta)).
  static Scalar time_to_crossing(Scalar c0, Scalar u, Scalar z, Scalar theta, Scalar tau_m) {
    if (c0 >= theta) return Scalar(0);
    if (z <= theta) return std::numeric_limits<Scalar>::infinity();
    return (tau_m / u) * std::log(Scalar(1) + (theta - c0) / (z - theta));
  }

  // ---- Derivatives (used by the adjoint, models/continuous_egru/box_dense_adjoint.hpp).

  // Partial derivatives of the time to crossing dt* = (tau_m/u) ln((z - c0)/(z - theta)),
  // given dt* itself (c0 < theta < z):
  //   d/dc0 = -(tau_m/u) / (z - c0)              d/dtheta = (tau_m/u) / (z - theta)
  //   d/dz  = (tau_m/u) (1/(z - c0) - 1/(z - theta))
  //   d/du  = -dt*/u                             d/dtau_m = dt*/tau_m
  // They grow like 1/(z - theta) as the crossing becomes grazing (dc/dt at the crossing,
  // u (z - theta) / tau_m, goes to 0).
  struct CrossingPartials {
    Scalar c0, u, z, theta, tau_m;
  };
  static CrossingPartials crossing_partials(Scalar c0, Scalar u, Scalar z, Scalar theta,
                                            Scalar tau_m, Scalar dt_star) {
    const Scalar k = tau_m / u;
    return {-k / (z - c0), -dt_star / u, k * (Scalar(1) / (z - c0) - Scalar(1) / (z - theta)),
            k / (z - theta), dt_star / tau_m};
  }

  // ---- The state regulariser's running cost (adjoint/state_regularizer.hpp): the integral of
  // the excess h = max(0, c - a) of c over a level a, over one interval of the flow,
  //   c(s) = z + (c0 - z) e^(-k s),  k = u / tau_m,  0 <= s <= dt,
  // and its partial derivatives. c is monotone, so c > a on one sub-interval [s1, s2]; where
  // its ends are the level crossing s_a = (1/k) ln((c0 - z) / (a - z)), the integrand is 0
  // there and they do not move the integral. With L = s2 - s1,
  //   I1 = int_{s1}^{s2} e^(-k s) ds,    I2 = int_{s1}^{s2} s e^(-k s) ds,
  //   value = (z - a) L + (c0 - z) I1
  //   d/dc0 = I1,  d/dz = L - I1,  d/da = -L,  d/dk = -(c0 - z) I2,  d/ddt = h(c_end - a).
  struct ExcessIntegral {
    Scalar value = 0, c0 = 0, u = 0, z = 0, tau_m = 0, level = 0, dt = 0;
  };
  static ExcessIntegral excess_integral(Scalar c0, Scalar c_end, Scalar u, Scalar z, Scalar dt,
                                        Scalar tau_m, Scalar level) {
    ExcessIntegral g;
    const bool start_above = c0 > level, end_above = c_end > level;
    if (!start_above && !end_above) return g;
    const Scalar k = u / tau_m;
    // The level crossing, where c passes the level inside the interval.
    // (Clamped to the interval against rounding: in exact arithmetic it lies inside.)
    const Scalar s_a =
        start_above == end_above
            ? Scalar(0)
            : std::min(dt, std::max(Scalar(0), std::log((c0 - z) / (level - z)) / k));
    const Scalar s1 = start_above ? Scalar(0) : s_a, s2 = end_above ? dt : s_a;
    const Scalar L = s2 - s1, x = k * L, e1 = std::exp(-k * s1);
    const Scalar I1 = e1 * L * one_minus_exp_over(x);
    const Scalar I2 = e1 * (s1 * L * one_minus_exp_over(x) + L * L * second_moment_factor(x));
    g.value = (z - level) * L + (c0 - z) * I1;
    g.c0 = I1;
    g.z = L - I1;
    g.level = -L;
    const Scalar d_k = -(c0 - z) * I2;
    g.u = d_k / tau_m;
    g.tau_m = -d_k * u / (tau_m * tau_m);
    g.dt = end_above ? c_end - level : Scalar(0);
    return g;
  }

  // ---- Array forms: the same equations for all units of a layer, each with its own tau_m (an
  // array, or a segment of one, of the units' time constants).

  // The decays E = exp(-u dt / tau_m) of the flow over dt, as an array expression (u: an array
  // or segment; dt, tau_m: arrays, segments or scalars), bitwise exp(u * (-dt / tau_m)) but with
  // no subnormal intermediate (detail::DecayExponent). A busy input drives some units' a_u far
  // below zero and their u = sigmoid(a_u) to 1e-20 and less, and every operation whose result is
  // subnormal costs a microcode assist on Intel CPUs (over 100 cycles): the DVXplorer recording's
  // forward pass spent over a third of its time there (docs/speed.md, "Subnormal arithmetic").
  template <class U, class Dt, class Tau>
  static auto decays(const U& u, const Dt& dt, const Tau& tau_m) {
    if constexpr (std::is_arithmetic_v<Dt> && std::is_arithmetic_v<Tau>) {
      return u.binaryExpr(Array::Constant(u.size(), -dt / tau_m), detail::DecayExponent<Scalar>{})
          .exp();
    } else {
      return u.binaryExpr(-dt / tau_m, detail::DecayExponent<Scalar>{}).exp();
    }
  }

  // c <- flow(c, u, z, dt, tau_m), in place.
  template <class Tau>
  static void advance(Array& c, const Array& u, const Array& z, Scalar dt, const Tau& tau_m) {
    c += (z - c) * (Scalar(1) - decays(u, dt, tau_m));
  }
  // The same in two parts, for a caller that keeps the decay E = exp(-u dt / tau_m) for
  // flow_adjoint (bitwise the same c as advance: the same operations on the same values).
  template <class Tau>
  static void decay(const Array& u, Scalar dt, const Tau& tau_m, Array& E) {
    E = decays(u, dt, tau_m);
  }
  static void advance_by_decay(Array& c, const Array& z, const Array& E) {
    c += (z - c) * (Scalar(1) - E);
  }

  // Backward through the flow over dt: with c_end = flow(c0, u, z, dt, tau_m) and the adjoint
  // lam_end of c_end, adds the adjoints of the flow's inputs:
  //   dc_end/dc0 = E = exp(-u dt/tau_m)          dc_end/dz = 1 - E
  //   dc_end/du  = (z - c_end) dt / tau_m         dc_end/dtau_m = -(z - c_end) u dt / tau_m^2
  // (z - c_end = (z - c0) E lets every term use c_end). lam_c0 holds E on entry (the forward
  // step's decay, computed once: an exp per unit is most of this) and is overwritten; lam_u /
  // lam_z / lam_tau (per unit) are accumulated. No temporary arrays: this runs at every interval
  // of training.
  template <class Tau, class LamTau>
  static void flow_adjoint(const Array& lam_end, const Array& c_end, const Array& u, const Array& z,
                           Scalar dt, const Tau& tau_m, Array& lam_c0, Array& lam_u, Array& lam_z,
                           LamTau&& lam_tau) {
    lam_z += lam_end * (Scalar(1) - lam_c0);
    lam_c0 *= lam_end;
    const auto gap = lam_end * (z - c_end);
    lam_u += gap * (dt / tau_m);
    lam_tau -= gap * u * dt / (tau_m * tau_m);
  }

  // Absolute next crossing times t + time_to_crossing(...) for every unit (arguments: arrays or
  // segments of arrays).
  template <class C, class U, class Z, class Theta, class Tau, class Out>
  static void crossing_times(const C& c, const U& u, const Z& z, const Theta& theta,
                             const Tau& tau_m, Scalar t, Out&& out) {
    // Every term as an array expression, then the cases in a plain loop: Eigen 3.4 evaluates
    // select() one lane at a time, so a log or division inside it would be scalar (docs/speed.md
    // has the measurement). Lanes with z <= theta or c >= theta compute a
    // meaningless value, which keep_cases() discards.
    out = t + (tau_m * u.inverse()) * (Scalar(1) + (theta - c) / (z - theta)).log();
    keep_cases(c, z, theta, t, out);
  }

  // Lower bounds of the absolute crossing times, without a logarithm: ln(1 + x) >= x / (1 + x)
  // with x = (theta - c) / (z - theta) gives dt* >= (tau_m / u) (theta - c) / (z - c). Exact
  // (equal to crossing_times) where the unit crosses now (c >= theta) or never (z <= theta).
  // A sparse layer keeps these for units that cannot be the next to cross.
  template <class C, class U, class Z, class Theta, class Tau, class Out>
  static void crossing_time_lower_bounds(const C& c, const U& u, const Z& z, const Theta& theta,
                                         const Tau& tau_m, Scalar t, Out&& out) {
    out = t + (tau_m * u.inverse()) * ((theta - c) / (z - c));
    keep_cases(c, z, theta, t, out);
  }

  // Value carried by an internal event (y = c(s-) = theta) and the state after it.
  static Scalar event_value(Scalar theta) { return theta; }
  static constexpr Scalar reset_state() { return Scalar(0); }

  // Scales of the weight columns added to the receivers' (a_u, a_r) and a_z by an event:
  // recurrent events scale a_z by the sender's reset gate, inputs do not.
  static Scalar recurrent_scale_ur(Scalar y) { return y; }
  static Scalar recurrent_scale_z(Scalar y, Scalar r_sender) { return r_sender * y; }
  static Scalar input_scale(Scalar x) { return x; }

 private:
  // (1 - e^(-x)) / x, 1 at x = 0, without cancellation for small x.
  static Scalar one_minus_exp_over(Scalar x) {
    return x == Scalar(0) ? Scalar(1) : -std::expm1(-x) / x;
  }
  // (1 - e^(-x) (1 + x)) / x^2 (1/2 at x = 0): the direct form cancels for small x, where the
  // series 1/2 - x/3 + x^2/8 - x^3/30 is used (its next term, x^4/144, is below 1e-10 for
  // x < 0.01).
  static Scalar second_moment_factor(Scalar x) {
    if (x < Scalar(0.01)) return Scalar(0.5) - x / 3 + x * x / 8 - x * x * x / 30;
    return (-std::expm1(-x) - x * std::exp(-x)) / (x * x);
  }

  // out <- t where the unit crosses now (c >= theta), +inf where it never will (z <= theta, or
  // NaN), out itself where c < theta < z. A loop the compiler vectorises with blends. Every value
  // is loaded whatever the case: with z read only where c < theta, GCC 12 used masked loads and
  // half the lanes.
  template <class C, class Z, class Theta, class Out>
  static void keep_cases(const C& c, const Z& z, const Theta& theta, Scalar t, Out& out) {
    const Scalar inf = std::numeric_limits<Scalar>::infinity();
    const Scalar *cs = c.data(), *zs = z.data(), *ths = theta.data();
    Scalar* os = out.data();
    for (Eigen::Index i = 0; i < out.size(); ++i) {
      const Scalar ci = cs[i], zi = zs[i], th = ths[i], oi = os[i];
      const Scalar unless_now = zi > th ? oi : inf;
      os[i] = ci >= th ? t : unless_now;
    }
  }
};

}  // namespace egret
