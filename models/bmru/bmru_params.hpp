// Parameters of one BMRU layer (models/bmru/bmru_cell.hpp, BMRU paper Eq. 11): candidate weights
// W_x (N x D) and bias b_x (N), bistability-width weights W_beta (N x D) and bias b_beta (N), and
// the per-unit output magnitude alpha (N). No recurrent weights. dt and the surrogate's alpha_s are
// settings; the output is held (delta semantics), so there is no output time constant.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "models/shared/parameter_checks.hpp"
#include "sim/parameters.hpp"

namespace egret {

template <class ScalarT>
struct BmruParams {
  using Scalar = ScalarT;
  Matrix<Scalar> W_x, W_beta;
  Vector<Scalar> b_x, b_beta, alpha;
  Scalar dt = 1;       // tick interval [ms]
  Scalar alpha_s = 1;  // arctan surrogate 1 / (1 + (alpha_s pi u)^2); S gets twice it

  Index units() const { return b_x.size(); }
  Index inputs() const { return W_x.cols(); }
  Scalar output_time_constant() const { return std::numeric_limits<Scalar>::infinity(); }

  template <class Self, class F>
  static void visit_parameters(Self& p, F&& f) {
    f(ParameterSpec{"W_x"}, p.W_x);
    f(ParameterSpec{"b_x"}, p.b_x);
    f(ParameterSpec{"W_beta"}, p.W_beta);
    f(ParameterSpec{"b_beta"}, p.b_beta);
    f(ParameterSpec{"alpha"}, p.alpha);
  }

  struct RandomInit {
    Scalar weight_scale = 1, beta_scale = 1;
    Scalar bias_beta = Scalar(0.5), bias_spread = Scalar(0.1);
    Scalar alpha = 1;
  };
  static BmruParams random(Index units, Index inputs, std::uint64_t seed, const RandomInit& init) {
    BmruParams p;
    SeededUniform<Scalar> uniform(seed);
    const Scalar s = Scalar(1) / std::sqrt(static_cast<Scalar>(inputs));
    p.W_x.resize(units, inputs);
    p.W_beta.resize(units, inputs);
    uniform.fill(p.W_x, init.weight_scale * s);
    uniform.fill(p.W_beta, init.beta_scale * s);
    p.b_x.resize(units);
    p.b_beta.resize(units);
    for (Index i = 0; i < units; ++i) p.b_x[i] = uniform(-init.bias_spread, init.bias_spread);
    for (Index i = 0; i < units; ++i)
      p.b_beta[i] = init.bias_beta + uniform(-init.bias_spread, init.bias_spread);
    p.alpha.setConstant(units, init.alpha);
    return p;
  }

  void validate(const std::string& layer = "bmru layer") const {
    const Index n = units(), d = inputs();
    if (n < 1 || d < 1) throw std::invalid_argument(layer + ": needs units >= 1 and inputs >= 1");
    detail::check_shape(W_x, n, d, layer, "W_x");
    detail::check_shape(W_beta, n, d, layer, "W_beta");
    detail::check_shape(b_x, n, 1, layer, "b_x");
    detail::check_shape(b_beta, n, 1, layer, "b_beta");
    detail::check_shape(alpha, n, 1, layer, "alpha");
    detail::check_time_scale(dt, layer, "dt", false);
    detail::check_positive(alpha_s, layer, "surrogate.alpha", false);
  }
};

}  // namespace egret
