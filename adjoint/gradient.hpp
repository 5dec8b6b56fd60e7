// Gradients of a loss with respect to everything the exact backward pass differentiates:
// per continuous EGRU layer (U_X, V_X, b_X, theta, tau_m, tau_o), the readout (W_o, b_o), and
// the external input events (times and values). Also the report of what the backward pass met.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/continuous_egru_params.hpp"

namespace egret {

template <class Scalar>
struct LayerGradient {
  Matrix<Scalar> U_u, U_r, U_z;
  Matrix<Scalar> V_u, V_r, V_z;
  Vector<Scalar> b_u, b_r, b_z, theta;
  Scalar tau_m = 0;
  Scalar tau_o = 0;

  void set_zero(Index units, Index inputs) {
    for (auto* m : {&U_u, &U_r, &U_z}) m->setZero(units, inputs);
    for (auto* m : {&V_u, &V_r, &V_z}) m->setZero(units, units);
    for (auto* v : {&b_u, &b_r, &b_z, &theta}) v->setZero(units);
    tau_m = tau_o = 0;
  }
  LayerGradient& operator+=(const LayerGradient& o) {
    U_u += o.U_u;
    U_r += o.U_r;
    U_z += o.U_z;
    V_u += o.V_u;
    V_r += o.V_r;
    V_z += o.V_z;
    b_u += o.b_u;
    b_r += o.b_r;
    b_z += o.b_z;
    theta += o.theta;
    tau_m += o.tau_m;
    tau_o += o.tau_o;
    return *this;
  }
  LayerGradient& operator*=(Scalar s) {
    for (auto* m : {&U_u, &U_r, &U_z, &V_u, &V_r, &V_z}) *m *= s;
    for (auto* v : {&b_u, &b_r, &b_z, &theta}) *v *= s;
    tau_m *= s;
    tau_o *= s;
    return *this;
  }
};

template <class Scalar>
struct Gradient {
  std::vector<LayerGradient<Scalar>> layers;
  Matrix<Scalar> W_o;  // empty without a readout
  Vector<Scalar> b_o;
  std::vector<Scalar> input_time;   // dL/ds_i per event of the (sorted) input stream
  std::vector<Scalar> input_value;  // dL/dx_i

  Gradient& operator+=(const Gradient& o) {
    for (std::size_t l = 0; l < layers.size(); ++l) layers[l] += o.layers[l];
    if (W_o.size()) {
      W_o += o.W_o;
      b_o += o.b_o;
    }
    return *this;  // input gradients are per sample and are not summed
  }
  Gradient& operator*=(Scalar s) {
    for (auto& l : layers) l *= s;
    W_o *= s;
    b_o *= s;
    return *this;
  }
};

// What the backward pass met on the way. A gradient with nonfinite > 0 must not be used.
struct BackwardReport {
  std::size_t steps = 0;
  // Several units crossing at exactly one time: the event time's dependence is taken from the
  // first unit; under a perturbation the events would separate (not differentiable).
  std::size_t simultaneous_crossings = 0;
  // Crossings where dc/dt at the threshold, u (z - theta) / tau_m, is below grazing_rate: the
  // event time is ill-conditioned (its derivatives grow like 1 / (z - theta)).
  std::size_t grazing_crossings = 0;
  double grazing_rate = 1e-6;
  std::size_t nonfinite_steps = 0;
  std::string first_problem;  // the first non-finite step, with its time, layer and kind
  bool ok() const { return nonfinite_steps == 0; }
};

}  // namespace egret
