// Parameters of one spiking-gated linear recurrent layer
// (models/spiking_gated/spiking_gated_cell.hpp, spiking-gate paper Eq. 7-10): the candidate's W_x
// (N x D) and b_x (N), the forget gate's W_c (N x D) and b_c (N) (Eq. 10 writes W_h, Fig. 3 W_c),
// the input gate's PSN current W_i (N x D), b_i (N) and its learnable rate inv_tau_m (N, > 0: the
// leak 1 - exp(-dt inv_tau_m) is in (0, 1) for every value). The threshold theta, the width of the
// stochastic threshold, dt and the surrogate's alpha_s are settings; the output is held (delta
// semantics), so there is no output time constant.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "models/shared/parameter_checks.hpp"
#include "sim/parameters.hpp"

namespace egret {

// The forget gate of Eq. 10, real-valued: c = c_hat tanh(rho) / rho with rho = sqrt(c_hat^2 + 1)
// (the paper implements |.| as sqrt(|.|^2 + 1)); odd, inside (-1, 1), slope tanh(1) at 0.
template <class Scalar>
Scalar forget_gate(Scalar c_hat) {
  const Scalar rho = std::sqrt(c_hat * c_hat + Scalar(1));
  return c_hat * std::tanh(rho) / rho;
}

// dc / dc_hat = tanh(rho) / rho + c_hat^2 ((1 - tanh^2 rho) rho - tanh rho) / rho^3.
template <class Scalar>
Scalar forget_gate_derivative(Scalar c_hat) {
  const Scalar rho2 = c_hat * c_hat + Scalar(1);
  const Scalar rho = std::sqrt(rho2);
  const Scalar t = std::tanh(rho);
  return t / rho + c_hat * c_hat * ((Scalar(1) - t * t) * rho - t) / (rho2 * rho);
}

template <class ScalarT>
struct SpikingGatedParams {
  using Scalar = ScalarT;
  Matrix<Scalar> W_x, W_c, W_i;
  Vector<Scalar> b_x, b_c, b_i, inv_tau_m;
  Scalar dt = 1;                 // tick interval [ms]
  Scalar theta = 0;              // the constant part of the gate's threshold (Eq. 8)
  Scalar noise_width = 1;        // X ~ U(0, noise_width) in runs that record a tape (Eq. 8)
  Scalar alpha_s = 1;            // arctan surrogate 1 / (1 + (alpha_s pi v)^2)
  std::uint64_t noise_seed = 1;  // the layer's seed: the threshold noise is a hash of it

  Index units() const { return b_x.size(); }
  Index inputs() const { return W_x.cols(); }
  Scalar output_time_constant() const { return std::numeric_limits<Scalar>::infinity(); }
  // The PSN's leak per tick, the paper's 1/tau_m (Eq. 7).
  Scalar leak(Index unit) const { return -std::expm1(-dt * inv_tau_m[unit]); }

  template <class Self, class F>
  static void visit_parameters(Self& p, F&& f) {
    f(ParameterSpec{"W_x"}, p.W_x);
    f(ParameterSpec{"b_x"}, p.b_x);
    f(ParameterSpec{"W_c"}, p.W_c);
    f(ParameterSpec{"b_c"}, p.b_c);
    f(ParameterSpec{"W_i"}, p.W_i);
    f(ParameterSpec{"b_i"}, p.b_i);
    // learnable in the paper (1/tau_m in (0, 1)^N); positive through softplus
    f(ParameterSpec{"inv_tau_m", Constraint::kSoftplus}, p.inv_tau_m);
  }

  struct RandomInit {
    Scalar weight_scale = 1, forget_scale = 1, gate_scale = 1;
    Scalar bias_forget = 2;                 // b_c: c = 0.87 at x = 0
    Scalar bias_gate = 0, bias_spread = 0;  // b_i ~ bias_gate + U(-spread, spread)
    Scalar leak = Scalar(0.1);              // the paper's initial 1/tau_m
  };
  static SpikingGatedParams random(Index units, Index inputs, std::uint64_t seed, Scalar dt,
                                   const RandomInit& init) {
    SpikingGatedParams p;
    SeededUniform<Scalar> uniform(seed);
    const Scalar s = Scalar(1) / std::sqrt(static_cast<Scalar>(inputs));
    for (Matrix<Scalar>* w : {&p.W_x, &p.W_c, &p.W_i}) w->resize(units, inputs);
    uniform.fill(p.W_x, init.weight_scale * s);
    uniform.fill(p.W_c, init.forget_scale * s);
    uniform.fill(p.W_i, init.gate_scale * s);
    p.b_x.setZero(units);
    p.b_c.setConstant(units, init.bias_forget);
    p.b_i.resize(units);
    for (Index i = 0; i < units; ++i)
      p.b_i[i] = init.bias_gate + uniform(-init.bias_spread, init.bias_spread);
    p.dt = dt;
    p.inv_tau_m.setConstant(units, -std::log1p(-init.leak) / dt);
    p.noise_seed = seed;
    return p;
  }

  void validate(const std::string& layer = "spiking_gated layer") const {
    const Index n = units(), d = inputs();
    if (n < 1 || d < 1) throw std::invalid_argument(layer + ": needs units >= 1 and inputs >= 1");
    detail::check_shape(W_x, n, d, layer, "W_x");
    detail::check_shape(b_x, n, 1, layer, "b_x");
    detail::check_shape(W_c, n, d, layer, "W_c");
    detail::check_shape(b_c, n, 1, layer, "b_c");
    detail::check_shape(W_i, n, d, layer, "W_i");
    detail::check_shape(b_i, n, 1, layer, "b_i");
    detail::check_shape(inv_tau_m, n, 1, layer, "inv_tau_m");
    for (Index i = 0; i < n; ++i)
      detail::check_positive(inv_tau_m[i], layer, ("inv_tau_m[" + std::to_string(i) + "]").c_str(),
                             false);
    detail::check_time_scale(dt, layer, "dt", false);
    if (!std::isfinite(theta)) throw std::invalid_argument(layer + ": threshold must be finite");
    detail::check_in_range(noise_width, ValueRange{0, std::numeric_limits<double>::infinity()},
                           layer, "threshold_noise");
    detail::check_positive(alpha_s, layer, "surrogate.alpha", false);
  }
};

}  // namespace egret
