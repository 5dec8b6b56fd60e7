// The physics of one discrete-time EGRU unit, paper convention (docs/model.md §4, EGRU paper Eq.
// 1-2):
//   u = sigmoid(U_u x_k + V_u y_{k-1} + b_u)     r = sigmoid(U_r x_k + V_r y_{k-1} + b_r)
//   z = tanh(U_z x_k + V_z (r * y_{k-1}) + b_z)
//   c_k = u z + (1 - u) c_{k-1} - y_{k-1}        y_k = c_k H(c_k - theta)
// with H(v) = 1 for v > 0, else 0. The reset gate multiplies the SENDING unit's output, as in
// the continuous model. The layer (discrete_egru_layer.hpp) assembles the pre-activations
// event-sparsely; the per-unit update is here, in a scalar form and an array form (all units,
// vectorised by Eigen; tanh written with exp as in the continuous cell).
#pragma once

#include <Eigen/Core>
#include <cmath>

#include "models/egru/egru_gates.hpp"

namespace egret {

template <class Scalar>
struct DiscreteEgruCell : EgruGates<Scalar> {  // gates: models/egru/egru_gates.hpp
  using Array = typename EgruGates<Scalar>::Array;

  // c_k from the gates, the previous state and the previous output.
  static Scalar next_state(Scalar u, Scalar z, Scalar c_prev, Scalar y_prev) {
    return u * z + (Scalar(1) - u) * c_prev - y_prev;
  }
  static bool fires(Scalar c, Scalar theta) { return c - theta > 0; }
  // The training surrogate of H'(v): gamma max(0, 1 - |v| / eps) (dampening gamma, half-width
  // eps); zero outside |v| < eps, which is what makes the backward pass sparse.
  static Scalar pseudo_derivative(Scalar v, Scalar gamma, Scalar eps) {
    const Scalar h = Scalar(1) - std::abs(v) / eps;
    return h > 0 ? gamma * h : Scalar(0);
  }
  static Scalar output(Scalar c, Scalar theta) { return fires(c, theta) ? c : Scalar(0); }

  // Array form of one step for all units: c <- next_state(u(a_u), z(a_z), c, y), y <- output.
  // u and z are the caller's scratch (no allocation per tick once sized).
  template <class AU, class AZ>
  static void step(const AU& a_u, const AZ& a_z, const Array& theta, Array& c, Array& y, Array& u,
                   Array& z) {
    EgruGates<Scalar>::gates(a_u, a_z, u, z);
    c = u * z + (Scalar(1) - u) * c - y;
    y = (c - theta > Scalar(0)).select(c, Scalar(0));
  }
};

}  // namespace egret
