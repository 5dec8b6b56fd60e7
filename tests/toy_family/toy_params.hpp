// Parameters of the test-only toy family (tests/toy_family/toy_cell.hpp): input weights W (N x D),
// bias b (N), the integration time constant tau (alpha = exp(-dt / tau)) and the output trace's
// tau_o; dt is a setting. The worked example of docs/cell_families.md: a family that lives
// outside models/ and is registered at run time.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "models/shared/parameter_checks.hpp"
#include "sim/parameters.hpp"

namespace egret {

template <class ScalarT>
struct ToyParams {
  using Scalar = ScalarT;
  Matrix<Scalar> W;
  Vector<Scalar> b;
  Scalar tau = 5;    // integration time constant [ms]
  Scalar tau_o = 5;  // output-trace time constant [ms]
  Scalar dt = 1;     // tick interval [ms]

  Index units() const { return b.size(); }
  Index inputs() const { return W.cols(); }
  Scalar output_time_constant() const { return tau_o; }
  Scalar decay() const { return std::exp(-dt / tau); }

  template <class Self, class F>
  static void visit_parameters(Self& p, F&& f) {
    f(ParameterSpec{"W"}, p.W);
    f(ParameterSpec{"b"}, p.b);
    f(ParameterSpec{"tau", Constraint::kLog, Training::kTimeConstant}, p.tau);
    f(ParameterSpec{"tau_o", Constraint::kLog, Training::kTimeConstant}, p.tau_o);
  }

  static ToyParams random(Index units, Index inputs, std::uint64_t seed, Scalar weight_scale) {
    ToyParams p;
    p.W.resize(units, inputs);
    SeededUniform<Scalar> uniform(seed);
    uniform.fill(p.W, weight_scale / std::sqrt(static_cast<Scalar>(inputs)));
    p.b.setZero(units);
    return p;
  }

  void validate(const std::string& layer = "toy layer") const {
    const Index n = units(), d = inputs();
    if (n < 1 || d < 1) throw std::invalid_argument(layer + ": needs units >= 1 and inputs >= 1");
    detail::check_shape(W, n, d, layer, "W");
    detail::check_shape(b, n, 1, layer, "b");
    detail::check_time_scale(tau, layer, "tau", false);
    detail::check_time_scale(tau_o, layer, "tau_o", false);
    detail::check_time_scale(dt, layer, "dt", false);
  }
};

}  // namespace egret
