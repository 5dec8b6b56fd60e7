// Parameters of one discrete-time EGRU layer (paper convention, docs/model.md §4).
#pragma once

#include "models/egru/egru_weights.hpp"

namespace egret {

template <class Scalar>
struct DiscreteEgruParams : EgruWeights<Scalar> {
  Scalar dt = 1;         // tick interval [ms]: ticks at t_k = k dt, k = 1, 2, ...
  Vector<Scalar> tau_o;  // each unit's output-trace time constant [ms] (N; default 10)
  // Training: the pseudo-derivative H'(v) = dampening * max(0, 1 - |v| / half_width), v = c -
  // theta.
  Scalar dampening = Scalar(0.3);
  Scalar half_width = Scalar(0.5);

  using RandomInit = typename EgruWeights<Scalar>::RandomInit;

  // The named parameters (sim/parameters.hpp); dt and the pseudo-derivative are settings.
  template <class Self, class F>
  static void visit_parameters(Self& p, F&& f) {
    visit_egru_weights(p, f);
    ParameterSpec tau_o{"tau_o", Constraint::kLog, Training::kTimeConstant};
    tau_o.was_scalar = true;  // one value per layer before checkpoint format 4
    f(tau_o, p.tau_o);
  }

  static DiscreteEgruParams zeros(Index units, Index inputs, Scalar threshold = Scalar(0.5)) {
    DiscreteEgruParams p;
    p.set_zero(units, inputs, threshold);
    p.tau_o.setConstant(units, 10);
    return p;
  }
  static DiscreteEgruParams random(Index units, Index inputs, std::uint64_t seed,
                                   const RandomInit& init) {
    DiscreteEgruParams p;
    p.set_random(units, inputs, seed, init);
    p.tau_o.setConstant(units, 10);
    return p;
  }

  void validate(const std::string& layer = "discrete_egru layer") const {
    this->validate_weights(layer);
    detail::check_time_scale(dt, layer, "dt", false);
    detail::check_time_scales(tau_o, this->units(), layer, "tau_o");
    detail::check_positive(dampening, layer, "pseudo_derivative.dampening", false);
    detail::check_positive(half_width, layer, "pseudo_derivative.half_width", false);
  }
};

// The u and r rows stacked ([U_u; U_r], [V_u; V_r], [b_u; b_r]) so that one column add serves
// both gates: shared read-only by a layer, its clones and its adjoint.
template <class Scalar>
struct DiscreteEgruStackedWeights {
  Matrix<Scalar> U_ur, V_ur;
  Vector<Scalar> b_ur;
  explicit DiscreteEgruStackedWeights(const DiscreteEgruParams<Scalar>& p) {
    const Index n = p.units();
    U_ur.resize(2 * n, p.inputs());
    U_ur << p.U_u, p.U_r;
    V_ur.resize(2 * n, n);
    V_ur << p.V_u, p.V_r;
    b_ur.resize(2 * n);
    b_ur << p.b_u, p.b_r;
  }
};

}  // namespace egret
