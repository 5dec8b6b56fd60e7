// The registration of the continuous-time EGRU (box kernel): its configuration keys and factory.
#include "models/continuous_egru/continuous_egru_family.hpp"

#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "models/continuous_egru/continuous_egru_layer.hpp"
#include "models/continuous_egru/continuous_egru_layer_adjoint.hpp"
#include "models/egru/egru_settings.hpp"

namespace egret {

// The layer, forward and backward, for both scalar types (continuous_egru_layer.hpp declares them
// extern): compiled here once.
template class ContinuousEgruLayer<float>;
template class ContinuousEgruLayer<double>;
namespace {

template <class Scalar>
std::unique_ptr<Layer<Scalar>> make_continuous_egru(const LayerRecipe& r) {
  using P = ContinuousEgruParams<Scalar>;
  const bool self_recurrence = r.settings.flag("self_recurrence");
  P p = P::random(r.units, r.inputs, r.seed, egru_random_init<Scalar>(r.settings), self_recurrence);
  p.set_time_constants(r.settings.as<Scalar>("tau_m"), r.settings.as<Scalar>("tau_o"),
                       r.settings.as<Scalar>("tau_s"));
  p.window_input = r.settings.as<Scalar>("window_input");
  p.window_recurrent = r.settings.as<Scalar>("window_recurrent");
  p.gate_kernel = r.settings.choice("gate_kernel") == 1 ? GateKernel::kExp : GateKernel::kBox;
  p.ode_tolerance = r.settings.as<Scalar>("ode_tolerance");
  p.crossing_tolerance = r.settings.as<Scalar>("crossing_tolerance");
  // In (0, 1], by the keys' ranges: every sender keeps at least one connection.
  const double input_fraction = r.settings.get("connectivity.input");
  const double recurrent_fraction = r.settings.get("connectivity.recurrent");
  if (input_fraction < 1 || recurrent_fraction < 1) {
    p.keep_random_connections(static_cast<Scalar>(input_fraction),
                              static_cast<Scalar>(recurrent_fraction), r.seed, self_recurrence);
    p.sparse = true;
  }
  p.validate(r.name);
  return std::make_unique<ContinuousEgruLayer<Scalar>>(std::make_shared<const P>(std::move(p)));
}

}  // namespace

CellFamily continuous_egru_family() {
  const double inf = std::numeric_limits<double>::infinity();
  CellFamily f;
  f.type = "continuous_egru";
  f.summary =
      "continuous-time EGRU: box gate kernel (exact event times and gradients) or exp kernel "
      "(Odeint, root finding)";
  f.keys = {
      {"tau_m", 10, kMinTimeScaleMs, inf, false, "state time constant [ms]"},
      {"tau_o", 10, kMinTimeScaleMs, inf, false, "output-trace time constant [ms]"},
      {"window_input", inf, kMinTimeScaleMs, 1e12, true,
       "how long an input contribution is held [ms]"},
      {"window_recurrent", inf, kMinTimeScaleMs, 1e12, true,
       "how long an event's contribution is held [ms]"},
      {"gate_kernel", 0, 0, 1, false,
       "how the gate pre-activations move between events: \"box\" (held; closed form) or "
       "\"exp\" (relax toward the biases with tau_s; c integrated by Odeint)",
       false, false, std::numeric_limits<double>::quiet_NaN(),
       std::vector<std::string>{std::string("box"), std::string("exp")}},
      {"tau_s", 5, kMinTimeScaleMs, inf, false, "gate time constant of the exp kernel [ms]"},
      {"ode_tolerance", 1e-12, 1e-15, 1e-3, false,
       "exp kernel: relative and absolute error allowed per integration step of c"},
      {"crossing_tolerance", 1e-12, 1e-15, 1, false,
       "exp kernel: width to which a crossing time is bracketed [ms]"},
      {"self_recurrence", 0, 0, 1, false,
       "whether a unit's own event jumps its own pre-activations (the diagonal of V); false: "
       "the paper's Eq. S11",
       false, true, 1},
      {"connectivity.input", 1, 0, 1, false,
       "share of the units each input channel connects to; < 1 (with connectivity.recurrent): "
       "a sparse layer, events cost their connections",
       true},
      {"connectivity.recurrent", 1, 0, 1, false,
       "share of the units each unit connects to (the three gates share the connections)", true},
  };
  for (auto& k : egru_weight_keys()) f.keys.push_back(k);
  f.make_double = &make_continuous_egru<double>;
  f.make_float = &make_continuous_egru<float>;
  f.nir.lacks =
      "NIR has no gated unit and no graded event: the continuous EGRU's state relaxes toward a "
      "tanh gate at a rate set by a sigmoid gate of its inputs, and it sends events of value "
      "c (not unit spikes)";
  return f;
}

}  // namespace egret
