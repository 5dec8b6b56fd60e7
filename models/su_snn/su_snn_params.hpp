// Parameters of one selective-update spiking layer (models/su_snn/su_snn_cell.hpp, suRNN paper Fig.
// A1): the LIF layer's input weights W (N x D), recurrent weights V (N x N), bias b (N), thresholds
// theta (N, > 0) and membrane time constants tau_mem (N), the output trace's tau_o, and the
// rhythmic gate generator's g_b (N), g_alpha, g_phi (N x K), g_omega (K). dt and the two
// surrogates' alpha_s (spikes) and slope (gate) are settings.
#pragma once

#include <cstdint>
#include <string>

#include "models/lif/lif_params.hpp"
#include "models/rhythmic_gate/rhythmic_gate.hpp"
#include "models/shared/parameter_checks.hpp"
#include "sim/parameters.hpp"

namespace egret {

// A LIF layer's parameters (models/lif/lif_params.hpp: W, V, b, theta, tau_mem, tau_o, dt,
// alpha_s) and the rhythmic gate with its surrogate's slope.
template <class ScalarT>
struct SuSnnParams : LifParams<ScalarT> {
  using Scalar = ScalarT;
  using Lif = LifParams<ScalarT>;
  RhythmicGate<Scalar> gate;
  Scalar slope = 1;  // gate surrogate beta s (1 - s), s = sigmoid(beta a)

  template <class Self, class F>
  static void visit_parameters(Self& p, F&& f) {
    Lif::visit_parameters(p, f);
    f(ParameterSpec{"g_b"}, p.gate.b);
    f(ParameterSpec{"g_alpha"}, p.gate.alpha);
    f(ParameterSpec{"g_phi"}, p.gate.phi);
    f(ParameterSpec{"g_omega"}, p.gate.omega);
  }

  struct RandomInit : Lif::RandomInit {
    Index frequencies = 0;  // 0: as many as units (the paper's default K = H)
    Scalar period_min = 2, period_max = 200, amplitude = 1, gate_bias = 0;
  };
  static SuSnnParams random(Index units, Index inputs, std::uint64_t seed, const RandomInit& init) {
    SuSnnParams p;
    SeededUniform<Scalar> uniform(seed);
    Lif::fill_random(p, units, inputs, uniform, init);
    p.gate.set_random(units, init.frequencies > 0 ? init.frequencies : units, init.period_min,
                      init.period_max, init.amplitude, init.gate_bias, uniform);
    return p;
  }

  void validate(const std::string& layer = "su_snn layer") const {
    Lif::validate(layer);
    gate.validate(layer);
    detail::check_positive(slope, layer, "surrogate.slope", false);
  }
};

}  // namespace egret
