// Parameters of a layer of current-based units, NIR's neuron nodes on egret's tick schedule
// (docs/model.md §13; models/cuba_lif/cuba_cell.hpp). Per unit n, with S the unit's input
//   S_k = W x_k + V y_{k-1} + b   (y: the layer's own output of the previous tick)
//   synapse:  tau_syn dI/dt = -I + w_in S            (without a synapse: I = S)
//   membrane: tau_mem dv/dt = (v_leak - v) + r I     (without a leak: dv/dt = r I, r in 1/ms)
// and, for spiking units (cuba_lif), a spike when v > v_threshold, after which v = v_reset.
// Whether the layer's units have a synapse and a leak are settings (NIR's CubaLIF has both, LIF
// a leak only, IF neither); the parameters of a part the units lack do not exist. Graded units
// (cuba_li: NIR's CubaLI, LI, Integrator) have no threshold and send their v.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "models/shared/parameter_checks.hpp"
#include "sim/parameters.hpp"

namespace egret {

template <class ScalarT, bool Spiking>
struct CubaParams {
  using Scalar = ScalarT;
  static constexpr bool kSpiking = Spiking;
  Matrix<Scalar> W, V;                  // input (N x D) and recurrent (N x N) weights
  Vector<Scalar> b;                     // constant input
  Vector<Scalar> w_in, tau_syn;         // the synapse (tau_syn [ms])
  Vector<Scalar> tau_mem, v_leak;       // the leak (tau_mem [ms])
  Vector<Scalar> r;                     // resistance (1/ms without a leak)
  Vector<Scalar> v_threshold, v_reset;  // spiking units only
  Scalar tau_o = 10;                    // output-trace time constant [ms] (spiking units)
  Scalar dt = 1;                        // tick interval [ms]
  bool synapse = true, leak = true;

  Index units() const { return r.size(); }
  Index inputs() const { return W.cols(); }
  // Spiking units' events feed an exponential trace; graded units' changes a held one.
  Scalar output_time_constant() const {
    return Spiking ? tau_o : std::numeric_limits<Scalar>::infinity();
  }

  template <class Self, class F>
  static void visit_parameters(Self& p, F&& f) {
    f(ParameterSpec{"W"}, p.W);
    f(ParameterSpec{"V"}, p.V);
    f(ParameterSpec{"b"}, p.b);
    if (p.synapse) {
      f(ParameterSpec{"w_in"}, p.w_in);
      f(ParameterSpec{"tau_syn", Constraint::kLog, Training::kTimeConstant}, p.tau_syn);
    }
    if (p.leak) {
      f(ParameterSpec{"tau_mem", Constraint::kLog, Training::kTimeConstant}, p.tau_mem);
      f(ParameterSpec{"v_leak"}, p.v_leak);
    }
    f(ParameterSpec{"r"}, p.r);
    if constexpr (Spiking) {
      f(ParameterSpec{"v_threshold"}, p.v_threshold);
      f(ParameterSpec{"v_reset"}, p.v_reset);
      f(ParameterSpec{"tau_o", Constraint::kLog, Training::kTimeConstant}, p.tau_o);
    }
  }

  struct RandomInit {
    Scalar weight_scale = 1, recurrent_scale = 1;
    Scalar tau_syn = 5, tau_mem = 20, threshold = 1;
  };
  // W, V uniform (scaled by 1/sqrt of their inputs), b = 0, w_in = r = 1, v_leak = v_reset = 0.
  static CubaParams random(Index units, Index inputs, std::uint64_t seed, const RandomInit& init,
                           bool synapse, bool leak) {
    CubaParams p;
    p.synapse = synapse;
    p.leak = leak;
    SeededUniform<Scalar> uniform(seed);
    p.W.resize(units, inputs);
    p.V.resize(units, units);
    uniform.fill(p.W, init.weight_scale / std::sqrt(static_cast<Scalar>(inputs)));
    uniform.fill(p.V, init.recurrent_scale / std::sqrt(static_cast<Scalar>(units)));
    p.b.setZero(units);
    p.w_in.setOnes(synapse ? units : 0);
    p.tau_syn.setConstant(synapse ? units : 0, init.tau_syn);
    p.tau_mem.setConstant(leak ? units : 0, init.tau_mem);
    p.v_leak.setZero(leak ? units : 0);
    p.r.setOnes(units);
    p.v_threshold.setConstant(Spiking ? units : 0, init.threshold);
    p.v_reset.setZero(Spiking ? units : 0);
    return p;
  }

  void validate(const std::string& layer) const {
    const Index n = units(), d = inputs();
    if (n < 1 || d < 1) throw std::invalid_argument(layer + ": needs units >= 1 and inputs >= 1");
    detail::check_shape(W, n, d, layer, "W");
    detail::check_shape(V, n, n, layer, "V");
    detail::check_shape(b, n, 1, layer, "b");
    detail::check_shape(r, n, 1, layer, "r");
    if (synapse) {
      detail::check_shape(w_in, n, 1, layer, "w_in");
      detail::check_time_scales(tau_syn, n, layer, "tau_syn");
    }
    if (leak) {
      detail::check_time_scales(tau_mem, n, layer, "tau_mem");
      detail::check_shape(v_leak, n, 1, layer, "v_leak");
    }
    if constexpr (Spiking) {
      detail::check_shape(v_threshold, n, 1, layer, "v_threshold");
      detail::check_shape(v_reset, n, 1, layer, "v_reset");
      detail::check_time_scale(tau_o, layer, "tau_o", false);
    }
    detail::check_time_scale(dt, layer, "dt", false);
  }
};

template <class Scalar>
using CubaLifParams = CubaParams<Scalar, true>;
template <class Scalar>
using CubaLiParams = CubaParams<Scalar, false>;

}  // namespace egret
