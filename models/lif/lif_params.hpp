// Parameters of one LIF layer (models/lif/lif_cell.hpp): input weights W (N x D), recurrent weights
// V (N x N), bias b (N), thresholds theta (N, > 0), the membrane time constants tau_mem (N, unit n
// decays with alpha_n = exp(-dt / tau_mem_n)) and the output trace's tau_o (one per layer); dt and
// the surrogate's alpha_s are settings.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "models/shared/parameter_checks.hpp"
#include "sim/parameters.hpp"

namespace egret {

template <class ScalarT>
struct LifParams {
  using Scalar = ScalarT;
  Matrix<Scalar> W, V;
  Vector<Scalar> b, theta;
  Vector<Scalar> tau_mem;  // membrane time constant of every unit [ms]
  Scalar tau_o = 10;       // output-trace time constant [ms]
  Scalar dt = 1;           // tick interval [ms]
  Scalar alpha_s = 1;      // arctan surrogate 1 / (1 + (alpha_s pi u)^2)

  Index units() const { return theta.size(); }
  Index inputs() const { return W.cols(); }
  Scalar output_time_constant() const { return tau_o; }
  // Every unit's decay alpha_n = exp(-dt / tau_mem_n) (std::exp per entry: the value a scalar
  // tau_mem gave). The cells compute it once, when they are built.
  Eigen::Array<Scalar, Eigen::Dynamic, 1> decay() const {
    return tau_mem.array().unaryExpr([this](Scalar tau) { return std::exp(-dt / tau); });
  }
  // d alpha_n / d tau_mem_n = alpha_n dt / tau_mem_n^2 (the adjoints' dL/dtau_mem), from decay().
  Eigen::Array<Scalar, Eigen::Dynamic, 1> decay_derivative(
      const Eigen::Array<Scalar, Eigen::Dynamic, 1>& alpha) const {
    return alpha * dt / tau_mem.array().square();
  }

  template <class Self, class F>
  static void visit_parameters(Self& p, F&& f) {
    f(ParameterSpec{"W"}, p.W);
    f(ParameterSpec{"V"}, p.V);
    f(ParameterSpec{"b"}, p.b);
    f(ParameterSpec{"theta", Constraint::kSoftplus}, p.theta);
    f(ParameterSpec{"tau_mem", Constraint::kLog, Training::kTimeConstant, Rank::kMatrix,
                    /*was_scalar=*/true},
      p.tau_mem);
    f(ParameterSpec{"tau_o", Constraint::kLog, Training::kTimeConstant}, p.tau_o);
  }

  struct RandomInit {
    Scalar weight_scale = 1, recurrent_scale = 1;
    Scalar bias = 0, bias_spread = 0;
    Scalar threshold = 1;
    Scalar tau_mem = 20;  // every unit's membrane time constant [ms]
  };
  static LifParams random(Index units, Index inputs, std::uint64_t seed, const RandomInit& init) {
    LifParams p;
    SeededUniform<Scalar> uniform(seed);
    fill_random(p, units, inputs, uniform, init);
    return p;
  }
  // W, V, b drawn from `uniform`, theta and tau_mem constant (families built on LIF integration
  // draw their own parameters after these from the same generator).
  static void fill_random(LifParams& p, Index units, Index inputs, SeededUniform<Scalar>& uniform,
                          const RandomInit& init) {
    p.W.resize(units, inputs);
    p.V.resize(units, units);
    uniform.fill(p.W, init.weight_scale / std::sqrt(static_cast<Scalar>(inputs)));
    uniform.fill(p.V, init.recurrent_scale / std::sqrt(static_cast<Scalar>(units)));
    p.b.resize(units);
    for (Index i = 0; i < units; ++i)
      p.b[i] = init.bias + uniform(-init.bias_spread, init.bias_spread);
    p.theta.setConstant(units, init.threshold);
    p.tau_mem.setConstant(units, init.tau_mem);
  }

  void validate(const std::string& layer = "lif layer") const {
    const Index n = units(), d = inputs();
    if (n < 1 || d < 1) throw std::invalid_argument(layer + ": needs units >= 1 and inputs >= 1");
    detail::check_shape(W, n, d, layer, "W");
    detail::check_shape(V, n, n, layer, "V");
    detail::check_shape(b, n, 1, layer, "b");
    detail::check_shape(theta, n, 1, layer, "theta");
    detail::check_thresholds(theta, layer, "theta");
    detail::check_time_scales(tau_mem, n, layer, "tau_mem");
    detail::check_time_scale(tau_o, layer, "tau_o", false);
    detail::check_time_scale(dt, layer, "dt", false);
    detail::check_positive(alpha_s, layer, "surrogate.alpha", false);
  }
};

}  // namespace egret
