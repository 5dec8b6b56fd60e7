// Parameters of one continuous-time EGRU layer with the box gate kernel (docs/model.md §1).
#pragma once

#include <limits>

#include "models/egru/egru_weights.hpp"

namespace egret {

enum class GateKernel { kBox, kExp };

template <class Scalar>
struct ContinuousEgruParams : EgruWeights<Scalar> {
  Vector<Scalar> c_init;  // internal state at t = 0, each < theta (default 0)
  // The time constants [ms], one per unit (N; a configuration's scalar is broadcast): the
  // state's, the output trace's and, with the exp kernel, the gates'.
  Vector<Scalar> tau_m, tau_o, tau_s;
  Scalar window_input = std::numeric_limits<Scalar>::infinity();      // hold of inputs [ms]
  Scalar window_recurrent = std::numeric_limits<Scalar>::infinity();  // hold of events [ms]
  // Sparse connectivity: the connections are the nonzero weights (a zero in all three gates of
  // a weight position is an absent connection). Events then cost their column's connections
  // (models/continuous_egru/box_sparse_units.hpp) and gradients cover the connections only, so
  // training keeps absent connections absent. A setting, like the windows.
  bool sparse = false;
  // Whether a unit's own event jumps its own pre-activations (through the diagonal of V). The
  // paper's model (EGRU paper, Suppl. Eq. S11) says it does not: a_X,n(s+) = a_X,n(s-) for the
  // sender n. Without self-recurrence the diagonal of V is no connection: it is zero (validate()
  // refuses anything else) and training leaves it zero, so the forward pass needs no special
  // case. A setting, like the windows.
  bool self_recurrence = false;
  // How the gate pre-activations move between events (docs/model.md §1): held (box: piecewise
  // constant, closed-form events) or relaxing toward the biases with time constant tau_s (exp:
  // c integrated with Boost.Odeint, crossings found on its dense output to crossing_tolerance).
  GateKernel gate_kernel = GateKernel::kBox;
  Scalar ode_tolerance = Scalar(1e-12);       // relative and absolute error per step on c (exp)
  Scalar crossing_tolerance = Scalar(1e-12);  // bracket width of a crossing time [ms] (exp)

  using RandomInit = typename EgruWeights<Scalar>::RandomInit;

  // The named parameters (sim/parameters.hpp); the windows are settings, not parameters.
  template <class Self, class F>
  static void visit_parameters(Self& p, F&& f) {
    visit_egru_weights(p, f);
    f(ParameterSpec{"c_init", Constraint::kFree, Training::kFixed}, p.c_init);
    f(time_constant_spec("tau_m"), p.tau_m);
    f(time_constant_spec("tau_o"), p.tau_o);
    if (p.gate_kernel == GateKernel::kExp) f(time_constant_spec("tau_s"), p.tau_s);
  }

  static ContinuousEgruParams zeros(Index units, Index inputs, Scalar threshold = Scalar(0.5)) {
    ContinuousEgruParams p;
    p.set_zero(units, inputs, threshold);
    p.c_init.setZero(units);
    p.set_time_constants(10, 10, 5);
    return p;
  }

  // Seeded random weights (EgruWeights::set_random); without self-recurrence the diagonal of V
  // is then zeroed, the other weights are the same for either choice.
  static ContinuousEgruParams random(Index units, Index inputs, std::uint64_t seed,
                                     const RandomInit& init, bool self_recurrence = false) {
    ContinuousEgruParams p;
    p.set_random(units, inputs, seed, init);
    p.c_init.setZero(units);
    p.set_time_constants(10, 10, 5);
    p.self_recurrence = self_recurrence;
    if (!self_recurrence) p.clear_self_connections();
    return p;
  }

  // Every unit's tau_m, tau_o and tau_s [ms] set to the same values.
  void set_time_constants(Scalar m, Scalar o, Scalar s) {
    const Index n = this->units();
    tau_m.setConstant(n, m);
    tau_o.setConstant(n, o);
    tau_s.setConstant(n, s);
  }

  void clear_self_connections() {
    for (Matrix<Scalar>* v : {&this->V_u, &this->V_r, &this->V_z}) v->diagonal().setZero();
  }

  // Throws std::invalid_argument naming the first problem found.
  void validate(const std::string& layer = "continuous_egru layer") const {
    this->validate_weights(layer);
    const Index n = this->units();
    detail::check_shape(c_init, n, 1, layer, "c_init");
    for (Index i = 0; i < n; ++i) {
      if (!(c_init(i) < this->theta(i))) {
        std::ostringstream os;
        os << layer << ": initial state c_init[" << i << "] = " << c_init(i)
           << " must be below its threshold " << this->theta(i);
        throw std::invalid_argument(os.str());
      }
    }
    if (!self_recurrence) check_no_self_connections(layer);
    detail::check_time_scales(tau_m, this->units(), layer, "tau_m");
    detail::check_time_scales(tau_o, this->units(), layer, "tau_o");
    if (gate_kernel == GateKernel::kExp) {
      detail::check_time_scales(tau_s, this->units(), layer, "tau_s");
      detail::check_positive(ode_tolerance, layer, "ode_tolerance", false);
      detail::check_positive(crossing_tolerance, layer, "crossing_tolerance", false);
    }
    detail::check_time_scale(window_input, layer, "window_input", true);
    detail::check_time_scale(window_recurrent, layer, "window_recurrent", true);
  }

 private:
  static ParameterSpec time_constant_spec(const char* name) {
    ParameterSpec s{name, Constraint::kLog, Training::kTimeConstant};
    s.was_scalar = true;  // one value per layer before checkpoint format 4
    return s;
  }

  void check_no_self_connections(const std::string& layer) const {
    const char* names[3] = {"V_u", "V_r", "V_z"};
    const Matrix<Scalar>* v[3] = {&this->V_u, &this->V_r, &this->V_z};
    for (int g = 0; g < 3; ++g) {
      for (Index i = 0; i < v[g]->rows(); ++i) {
        if ((*v[g])(i, i) == Scalar(0)) continue;
        std::ostringstream os;
        os << layer << ": " << names[g] << "[" << i << ", " << i << "] = " << (*v[g])(i, i)
           << ", but without self-recurrence (the paper's Eq. S11, the default) a unit's own "
              "event does not reach its own pre-activations, so the diagonal of V must be 0; "
              "set \"self_recurrence\": true to use it";
        throw std::invalid_argument(os.str());
      }
    }
  }
};

}  // namespace egret
