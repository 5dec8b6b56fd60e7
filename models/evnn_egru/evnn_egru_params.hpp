// Parameters of one EGRU layer in EvNN's convention (docs/model.md, "EvNN convention"), named
// and shaped as evnn_pytorch.EGRU's: kernel (C x 3N), recurrent_kernel (N x 3N), bias and
// recurrent_bias (3N), thr (N); gate order [z, r, g]. tau_o is the engine's output trace.
// Initialisation as EvNN's: Xavier-normal kernels (gain), zero biases, thr ~ Beta(3 m / (1 - m),
// 3) with mean m, from a seeded generator (the same numbers on every platform).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "models/shared/parameter_checks.hpp"
#include "sim/parameters.hpp"

namespace egret {

template <class ScalarT>
struct EvnnEgruParams {
  using Scalar = ScalarT;
  // Row-major, as torch stores them: row c is what an event of sender c touches (3N weights).
  RowMajorMatrix<Scalar> kernel, recurrent_kernel;
  Vector<Scalar> bias, recurrent_bias, thr;
  Scalar tau_o = Scalar(9.491221581029903);  // dt / ln(10/9): decay 0.9 per tick at dt = 1
  Scalar dt = 1;                             // tick interval [ms]
  Scalar dampening = Scalar(0.7);            // gamma of gamma max(0, 1 - eps |v|)
  Scalar support = Scalar(1);                // eps

  Index units() const { return thr.size(); }
  Index inputs() const { return kernel.rows(); }
  Scalar output_time_constant() const { return tau_o; }

  template <class Self, class F>
  static void visit_parameters(Self& p, F&& f) {
    f(ParameterSpec{"kernel"}, p.kernel);
    f(ParameterSpec{"recurrent_kernel"}, p.recurrent_kernel);
    f(ParameterSpec{"bias"}, p.bias);
    f(ParameterSpec{"recurrent_bias"}, p.recurrent_bias);
    f(ParameterSpec{"thr"}, p.thr);
    f(ParameterSpec{"tau_o", Constraint::kLog, Training::kTimeConstant}, p.tau_o);
  }

  static EvnnEgruParams random(Index units, Index inputs, std::uint64_t seed, Scalar gain,
                               Scalar thr_mean) {
    EvnnEgruParams p;
    SeededUniform<double> u(seed);
    auto normal = [&u] {  // Box-Muller on the portable uniform generator
      const double a = u(0x1.0p-53, 1), b = u(0, 1);
      return std::sqrt(-2 * std::log(a)) * std::cos(6.283185307179586 * b);
    };
    auto xavier = [&](RowMajorMatrix<Scalar>& m, Index rows, Index cols) {
      m.resize(rows, cols);
      const double sd =
          static_cast<double>(gain) * std::sqrt(2.0 / static_cast<double>(rows + cols));
      for (Index i = 0; i < rows; ++i)
        for (Index j = 0; j < cols; ++j) m(i, j) = static_cast<Scalar>(sd * normal());
    };
    xavier(p.kernel, inputs, 3 * units);
    xavier(p.recurrent_kernel, units, 3 * units);
    p.bias.setZero(3 * units);
    p.recurrent_bias.setZero(3 * units);
    const double m = static_cast<double>(thr_mean);
    p.thr.resize(units);
    for (Index i = 0; i < units; ++i) {
      const double x = gamma_variate(3 * m / (1 - m), u, normal), y = gamma_variate(3, u, normal);
      p.thr[i] = static_cast<Scalar>(x / (x + y));
    }
    return p;
  }

  // EvNN clamps the thresholds to [0, 1] at every forward call: a layer is built from the
  // clamped parameters (models/tick/tick_layer.hpp), so parameters() reports what it runs with.
  static std::shared_ptr<const EvnnEgruParams> normalized(std::shared_ptr<const EvnnEgruParams> p) {
    if (!p || !((p->thr.array() < Scalar(0)).any() || (p->thr.array() > Scalar(1)).any())) return p;
    auto c = std::make_shared<EvnnEgruParams>(*p);
    c->thr = c->thr.cwiseMax(Scalar(0)).cwiseMin(Scalar(1));
    return c;
  }

  void validate(const std::string& layer = "evnn_egru layer") const {
    const Index n = units(), c = inputs();
    if (n < 1 || c < 1) throw std::invalid_argument(layer + ": needs units >= 1 and inputs >= 1");
    detail::check_shape(kernel, c, 3 * n, layer, "kernel");
    detail::check_shape(recurrent_kernel, n, 3 * n, layer, "recurrent_kernel");
    detail::check_shape(bias, 3 * n, 1, layer, "bias");
    detail::check_shape(recurrent_bias, 3 * n, 1, layer, "recurrent_bias");
    detail::check_shape(thr, n, 1, layer, "thr");
    detail::check_time_scale(dt, layer, "dt", false);
    detail::check_time_scale(tau_o, layer, "tau_o", false);
    detail::check_in_range(dampening, ValueRange{0, std::numeric_limits<double>::infinity()}, layer,
                           "dampening_factor");
    detail::check_positive(support, layer, "pseudo_derivative_support", false);
  }

 private:
  // Gamma(shape, 1) by Marsaglia and Tsang (shape < 1: boosted by U^(1/shape)).
  template <class U, class N>
  static double gamma_variate(double shape, U& u, N& normal) {
    if (shape < 1)
      return gamma_variate(shape + 1, u, normal) * std::pow(u(0x1.0p-53, 1), 1 / shape);
    const double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
    for (;;) {
      const double x = normal(), v0 = 1 + c * x;
      if (v0 <= 0) continue;
      const double v = v0 * v0 * v0, w = u(0x1.0p-53, 1);
      if (std::log(w) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
  }
};

}  // namespace egret
