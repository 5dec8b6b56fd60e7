// Parameters of one selective-update RNN layer (models/surnn/surnn_cell.hpp, suRNN paper Eq. 4 and
// 6): the vanilla RNN's W (N x D), V (N x N), b (N), and the rhythmic gate generator's g_b (N),
// g_alpha, g_phi (N x K), g_omega (K). dt and the surrogate's slope are settings; the output is
// held (delta semantics), so there is no output time constant.
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
struct SurnnParams {
  using Scalar = ScalarT;
  Matrix<Scalar> W, V;
  Vector<Scalar> b;
  RhythmicGate<Scalar> gate;
  Scalar dt = 1;     // tick interval [ms]
  Scalar slope = 1;  // beta of the gate's surrogate beta s (1 - s), s = sigmoid(beta a)

  Index units() const { return b.size(); }
  Index inputs() const { return W.cols(); }
  Scalar output_time_constant() const { return std::numeric_limits<Scalar>::infinity(); }

  template <class Self, class F>
  static void visit_parameters(Self& p, F&& f) {
    f(ParameterSpec{"W"}, p.W);
    f(ParameterSpec{"V"}, p.V);
    f(ParameterSpec{"b"}, p.b);
    f(ParameterSpec{"g_b"}, p.gate.b);
    f(ParameterSpec{"g_alpha"}, p.gate.alpha);
    f(ParameterSpec{"g_phi"}, p.gate.phi);
    f(ParameterSpec{"g_omega"}, p.gate.omega);
  }

  struct RandomInit {
    Scalar weight_scale = 1, recurrent_scale = 1;
    Index frequencies = 0;  // 0: as many as units (the paper's default K = H)
    Scalar period_min = 2, period_max = 200, amplitude = 1, gate_bias = 0;
  };
  static SurnnParams random(Index units, Index inputs, std::uint64_t seed, const RandomInit& init) {
    SurnnParams p;
    SeededUniform<Scalar> uniform(seed);
    p.W.resize(units, inputs);
    p.V.resize(units, units);
    uniform.fill(p.W, init.weight_scale / std::sqrt(static_cast<Scalar>(inputs)));
    uniform.fill(p.V, init.recurrent_scale / std::sqrt(static_cast<Scalar>(units)));
    p.b.setZero(units);
    p.gate.set_random(units, init.frequencies > 0 ? init.frequencies : units, init.period_min,
                      init.period_max, init.amplitude, init.gate_bias, uniform);
    return p;
  }

  void validate(const std::string& layer = "surnn layer") const {
    const Index n = units(), d = inputs();
    if (n < 1 || d < 1) throw std::invalid_argument(layer + ": needs units >= 1 and inputs >= 1");
    detail::check_shape(W, n, d, layer, "W");
    detail::check_shape(V, n, n, layer, "V");
    detail::check_shape(b, n, 1, layer, "b");
    gate.validate(layer);
    detail::check_time_scale(dt, layer, "dt", false);
    detail::check_positive(slope, layer, "surrogate.slope", false);
  }
};

}  // namespace egret
