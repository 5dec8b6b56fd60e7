// The physics of one continuous-time EGRU unit with the `box` gate kernel (DESIGN section 1):
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
#pragma once

#include <cmath>
#include <limits>

namespace egret {

template <class Scalar>
struct BoxEgruCell {
  static Scalar sigmoid(Scalar a) { return Scalar(1) / (Scalar(1) + std::exp(-a)); }
  static Scalar update_gate(Scalar a_u) { return sigmoid(a_u); }
  static Scalar reset_gate(Scalar a_r) { return sigmoid(a_r); }
  static Scalar candidate(Scalar a_z) { return std::tanh(a_z); }

  // Closed-form flow: c(t0 + dt) with the gates held at (u, z), written as
  // c0 + (z - c0) (1 - exp(-u dt / tau_m)) with expm1 so that short intervals (the common case
  // between dense events) lose no digits and dt = 0 returns c0 exactly.
  static Scalar flow(Scalar c0, Scalar u, Scalar z, Scalar dt, Scalar tau_m) {
    return c0 - (z - c0) * std::expm1(-u * dt / tau_m);
  }

  // dc/dt, the right-hand side of the flow.
  static Scalar rate(Scalar c, Scalar u, Scalar z, Scalar tau_m) { return u * (z - c) / tau_m; }

  // Time from now until c reaches theta, with the gates held at (u, z); infinity when the flow
  // never gets there (z <= theta: c relaxes toward z without reaching theta). A state already at
  // or above theta (possible only through rounding, since c is continuous and starts below)
  // crosses now.
  //   c0 < theta < z:  dt = (tau_m / u) ln((z - c0) / (z - theta))
  // written with log1p((theta - c0) / (z - theta)) for accuracy when c0 is close to theta.
  static Scalar time_to_crossing(Scalar c0, Scalar u, Scalar z, Scalar theta, Scalar tau_m) {
    if (c0 >= theta) return Scalar(0);
    if (z <= theta) return std::numeric_limits<Scalar>::infinity();
    return (tau_m / u) * std::log1p((theta - c0) / (z - theta));
  }

  // Value carried by an internal event (y = c(s-) = theta) and the state after it.
  static Scalar event_value(Scalar theta) { return theta; }
  static constexpr Scalar reset_state() { return Scalar(0); }

  // Scales of the weight columns added to the receivers' (a_u, a_r) and a_z by an event:
  // recurrent events scale a_z by the sender's reset gate, inputs do not.
  static Scalar recurrent_scale_ur(Scalar y) { return y; }
  static Scalar recurrent_scale_z(Scalar y, Scalar r_sender) { return r_sender * y; }
  static Scalar input_scale(Scalar x) { return x; }
};

}  // namespace egret
