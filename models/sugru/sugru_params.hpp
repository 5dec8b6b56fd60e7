// Parameters of one selective-update GRU layer (models/sugru/sugru_cell.hpp, suRNN paper Fig. A1):
// the GRU's input weights W_r, W_z, W_n (N x D), recurrent weights V_r, V_z, V_n (N x N) and biases
// b_r, b_z, b_n (N), and the rhythmic gate generator's g_b, g_alpha, g_phi, g_omega
// (models/rhythmic_gate/rhythmic_gate.hpp). dt and the surrogate's slope are settings; the output
// is held.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "models/rhythmic_gate/rhythmic_gate.hpp"
#include "models/shared/parameter_checks.hpp"
#include "sim/parameters.hpp"

namespace egret {

template <class ScalarT>
struct SugruParams {
  using Scalar = ScalarT;
  Matrix<Scalar> W_r, W_z, W_n, V_r, V_z, V_n;
  Vector<Scalar> b_r, b_z, b_n;
  RhythmicGate<Scalar> gate;
  Scalar dt = 1;
  Scalar slope = 1;

  Index units() const { return b_r.size(); }
  Index inputs() const { return W_r.cols(); }
  Scalar output_time_constant() const { return std::numeric_limits<Scalar>::infinity(); }

  template <class Self, class F>
  static void visit_parameters(Self& p, F&& f) {
    f(ParameterSpec{"W_r"}, p.W_r);
    f(ParameterSpec{"W_z"}, p.W_z);
    f(ParameterSpec{"W_n"}, p.W_n);
    f(ParameterSpec{"V_r"}, p.V_r);
    f(ParameterSpec{"V_z"}, p.V_z);
    f(ParameterSpec{"V_n"}, p.V_n);
    f(ParameterSpec{"b_r"}, p.b_r);
    f(ParameterSpec{"b_z"}, p.b_z);
    f(ParameterSpec{"b_n"}, p.b_n);
    f(ParameterSpec{"g_b"}, p.gate.b);
    f(ParameterSpec{"g_alpha"}, p.gate.alpha);
    f(ParameterSpec{"g_phi"}, p.gate.phi);
    f(ParameterSpec{"g_omega"}, p.gate.omega);
  }

  struct RandomInit {
    Scalar weight_scale = 1, recurrent_scale = 1, bias_z = 0;
    Index frequencies = 0;
    Scalar period_min = 2, period_max = 200, amplitude = 1, gate_bias = 0;
  };
  static SugruParams random(Index units, Index inputs, std::uint64_t seed, const RandomInit& init) {
    SugruParams p;
    SeededUniform<Scalar> uniform(seed);
    const Scalar su = init.weight_scale / std::sqrt(static_cast<Scalar>(inputs));
    const Scalar sv = init.recurrent_scale / std::sqrt(static_cast<Scalar>(units));
    for (Matrix<Scalar>* w : {&p.W_r, &p.W_z, &p.W_n}) {
      w->resize(units, inputs);
      uniform.fill(*w, su);
    }
    for (Matrix<Scalar>* v : {&p.V_r, &p.V_z, &p.V_n}) {
      v->resize(units, units);
      uniform.fill(*v, sv);
    }
    p.b_r.setZero(units);
    p.b_z.setConstant(units, init.bias_z);
    p.b_n.setZero(units);
    p.gate.set_random(units, init.frequencies > 0 ? init.frequencies : units, init.period_min,
                      init.period_max, init.amplitude, init.gate_bias, uniform);
    return p;
  }

  void validate(const std::string& layer = "sugru layer") const {
    const Index n = units(), d = inputs();
    if (n < 1 || d < 1) throw std::invalid_argument(layer + ": needs units >= 1 and inputs >= 1");
    detail::check_shape(W_r, n, d, layer, "W_r");
    detail::check_shape(W_z, n, d, layer, "W_z");
    detail::check_shape(W_n, n, d, layer, "W_n");
    detail::check_shape(V_r, n, n, layer, "V_r");
    detail::check_shape(V_z, n, n, layer, "V_z");
    detail::check_shape(V_n, n, n, layer, "V_n");
    detail::check_shape(b_r, n, 1, layer, "b_r");
    detail::check_shape(b_z, n, 1, layer, "b_z");
    detail::check_shape(b_n, n, 1, layer, "b_n");
    gate.validate(layer);
    detail::check_time_scale(dt, layer, "dt", false);
    detail::check_positive(slope, layer, "surrogate.slope", false);
  }
};

}  // namespace egret
