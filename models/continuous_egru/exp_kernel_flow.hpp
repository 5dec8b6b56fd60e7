// The flow of a continuous EGRU layer with the `exp` gate kernel between two events
// (exp_kernel_cell.hpp): every unit's pre-activations relax toward their biases in closed
// form, and c is integrated as one vector ODE with Boost.Odeint (Dormand-Prince 5(4),
// error-controlled, in double whatever the layer's scalar). The forward pass
// (exp_dense_units.hpp) and the backward pass's recomputation of the forward state
// (dense_replay.hpp, exp_dense_adjoint.hpp) both call these functions, so
// the recomputed state is bitwise the forward state.
#pragma once

#include <Eigen/Core>
#include <boost/numeric/odeint.hpp>
#include <cmath>
#include <vector>

#include "models/continuous_egru/continuous_egru_params.hpp"
#include "models/continuous_egru/exp_kernel_cell.hpp"

namespace egret {

struct ExpKernelEgruFlow {
  using Vec = Eigen::ArrayXd;

  // a <- its value dt later (relaxed toward b with each unit's tau_s), through double as in the
  // forward pass.
  template <class Array, class Bias, class Tau, class Scalar>
  static void relax(Array& a, const Bias& b, Scalar dt, const Tau& tau_s) {
    for (Eigen::Index m = 0; m < a.size(); ++m)
      a[m] = static_cast<Scalar>(
          ExpKernelEgruCell::relaxed(double(a[m]), double(b[m]), double(dt), double(tau_s[m])));
  }

  // c from t0 to t1 with the pre-activations a_u0, a_z0 at t0. `work` is reused across calls;
  // `observe(t, c)` sees the state after every accepted step (and at t0), for the backward pass.
  template <class Scalar, class Array, class Observer>
  static void integrate_c(const ContinuousEgruParams<Scalar>& p, Array& c, const Array& a_u0,
                          const Array& a_z0, double t0, double t1, std::vector<double>& work,
                          Observer&& observe) {
    const Eigen::Index n = c.size();
    work.resize(static_cast<std::size_t>(n));
    for (Eigen::Index m = 0; m < n; ++m) work[static_cast<std::size_t>(m)] = double(c[m]);
    const Vec a_u = a_u0.template cast<double>(), a_z = a_z0.template cast<double>();
    const Vec b_u = p.b_u.array().template cast<double>(),
              b_z = p.b_z.array().template cast<double>();
    const Vec tau_s = p.tau_s.array().template cast<double>(),
              tau_m = p.tau_m.array().template cast<double>();
    // One relaxation factor for all units when they share tau_s (one exp per evaluation).
    const bool shared_tau_s = n > 0 && (tau_s == tau_s[0]).all();
    Vec u(n), z(n), e(n);
    auto rhs = [&](const std::vector<double>& x, std::vector<double>& dxdt, double time) {
      if (shared_tau_s)
        e.setConstant(std::exp(-(time - t0) / tau_s[0]));
      else
        e = (-(time - t0) / tau_s).exp();
      ExpKernelEgruCell::gates(b_u + (a_u - b_u) * e, b_z + (a_z - b_z) * e, u, z);
      const Eigen::Map<const Vec> cx(x.data(), n);
      Eigen::Map<Vec>(dxdt.data(), n) = u * (z - cx) / tau_m;
    };
    const double tol = double(p.ode_tolerance);
    boost::numeric::odeint::integrate_adaptive(
        boost::numeric::odeint::make_controlled(
            tol, tol, boost::numeric::odeint::runge_kutta_dopri5<std::vector<double>>()),
        rhs, work, t0, t1, n > 0 ? initial_step(tau_m.minCoeff(), tau_s.minCoeff()) : 1.0,
        [&](const std::vector<double>& x, double t) { observe(t, x); });
    for (Eigen::Index m = 0; m < n; ++m)
      c[m] = static_cast<Scalar>(work[static_cast<std::size_t>(m)]);
  }

  // The first step tried: far below both time constants (the controller grows it).
  static double initial_step(double tau_m, double tau_s) { return 1e-3 * std::min(tau_m, tau_s); }

  // No observer (the forward pass).
  struct Unobserved {
    void operator()(double, const std::vector<double>&) const {}
  };
};

}  // namespace egret
