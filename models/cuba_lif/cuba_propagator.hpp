// One tick of the current-based units' linear flow (models/cuba_lif/cuba_params.hpp), solved
// exactly for an input S_k held over the tick (t_{k-1}, t_k] (zero-order hold; docs/model.md
// §13). With h = dt, per unit:
//   I_k = a_syn I_{k-1} + b_syn S_k
//   v_k = a_mem v_{k-1} + c_leak + c_in S_k + c_syn I_{k-1}
// The coefficients are computed once per layer in double, whatever the run's precision, with
// expm1 where 1 - exp(-x) would cancel.
#pragma once

#include <Eigen/Core>
#include <cmath>

#include "sim/numeric_types.hpp"

namespace egret {

namespace detail {
// expm1(x) / x, 1 at x = 0.
inline double expm1_ratio(double x) {
  return x == 0 ? 1.0 : std::expm1(x) / x;
}
// x - (1 - exp(-x)) = x + expm1(-x), by its series below 0.1 (the difference would cancel).
inline double x_minus_one_minus_exp(double x) {
  if (x >= 0.1) return x + std::expm1(-x);
  double term = x * x / 2, sum = 0;
  for (int n = 2; n < 24; ++n) {
    sum += term;
    term *= -x / (n + 1);
  }
  return sum;
}
}  // namespace detail

template <class Scalar>
struct CubaPropagator {
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  Array a_syn, b_syn, a_mem, c_leak, c_in, c_syn;

  template <class Params>
  explicit CubaPropagator(const Params& p) {
    const Index n = p.units();
    for (Array* a : {&a_syn, &b_syn, &a_mem, &c_leak, &c_in, &c_syn}) a->setZero(n);
    const double h = static_cast<double>(p.dt);
    for (Index m = 0; m < n; ++m) set_unit(p, m, h);
  }

 private:
  template <class Params>
  void set_unit(const Params& p, Index m, double h) {
    const double r = static_cast<double>(p.r[m]);
    const double w = p.synapse ? static_cast<double>(p.w_in[m]) : 1.0;
    const double ts = p.synapse ? static_cast<double>(p.tau_syn[m]) : 0.0;
    double am = 1, in = 0, syn = 0, leak = 0;
    if (p.leak) {
      const double tm = static_cast<double>(p.tau_mem[m]);
      am = std::exp(-h / tm);
      const double rise = -std::expm1(-h / tm);  // 1 - a_mem
      leak = rise * static_cast<double>(p.v_leak[m]);
      if (p.synapse) {
        // K = ts / (ts - tm) (a_syn - a_mem) = a_mem (h / tm) expm1(d) / d, d = h/tm - h/ts.
        const double k = am * (h / tm) * detail::expm1_ratio(h / tm - h / ts);
        in = r * w * (rise - k);
        syn = r * k;
      } else {
        in = r * rise;
      }
    } else if (p.synapse) {
      in = r * w * ts * detail::x_minus_one_minus_exp(h / ts);
      syn = r * ts * -std::expm1(-h / ts);
    } else {
      in = r * h;
    }
    a_mem[m] = static_cast<Scalar>(am);
    c_leak[m] = static_cast<Scalar>(leak);
    c_in[m] = static_cast<Scalar>(in);
    c_syn[m] = static_cast<Scalar>(syn);
    if (p.synapse) {
      a_syn[m] = static_cast<Scalar>(std::exp(-h / ts));
      b_syn[m] = static_cast<Scalar>(w * -std::expm1(-h / ts));
    }
  }
};

}  // namespace egret
