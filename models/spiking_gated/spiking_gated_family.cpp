// The registration of the spiking-gated linear recurrent layer
// (models/spiking_gated/spiking_gated_cell.hpp): its configuration keys and factory.
#include "models/spiking_gated/spiking_gated_family.hpp"

#include <limits>
#include <memory>

#include "models/spiking_gated/spiking_gated_cell.hpp"
#include "models/tick/tick_layer.hpp"

namespace egret {
namespace {

template <class Scalar>
std::unique_ptr<Layer<Scalar>> make_spiking_gated(const LayerRecipe& r) {
  using P = SpikingGatedParams<Scalar>;
  const LayerSettings& s = r.settings;
  typename P::RandomInit init;
  init.weight_scale = s.as<Scalar>("init.weight_scale");
  init.forget_scale = s.as<Scalar>("init.forget_scale");
  init.gate_scale = s.as<Scalar>("init.gate_scale");
  init.bias_forget = s.as<Scalar>("init.bias_forget");
  init.bias_gate = s.as<Scalar>("init.bias_gate");
  init.bias_spread = s.as<Scalar>("init.bias_spread");
  init.leak = s.as<Scalar>("init.leak");
  P p = P::random(r.units, r.inputs, r.seed, s.as<Scalar>("dt"), init);
  p.theta = s.as<Scalar>("threshold");
  p.noise_width = s.as<Scalar>("threshold_noise");
  p.alpha_s = s.as<Scalar>("surrogate.alpha");
  p.validate(r.name);
  return std::make_unique<TickLayer<Scalar, SpikingGatedCell>>(
      std::make_shared<const P>(std::move(p)));
}

}  // namespace

CellFamily spiking_gated_family() {
  const double inf = std::numeric_limits<double>::infinity();
  CellFamily f;
  f.type = "spiking_gated";
  f.summary =
      "spiking-gated linear recurrent cell (spiking-gate paper): a PSN input gate with a "
      "stochastic "
      "threshold over an SRU-style linear recurrence; delta events; arctan surrogate";
  f.keys = {
      {"dt", 1, kMinTimeScaleMs, inf, false, "tick interval [ms]; ticks at k dt, k = 1, 2, ..."},
      {"threshold", 0, -1e6, 1e6, false, "theta: the gate fires when m > theta + X (Eq. 8)"},
      {"threshold_noise", 1, 0, 1e6, false,
       "w: X ~ U(0, w) per unit and tick in runs that record a tape (training), w/2 otherwise"},
      {"surrogate.alpha", 1, 0, 1e6, false, "alpha_s of H' ~ 1 / (1 + (alpha_s pi v)^2)", true},
      {"init.weight_scale", 1, 0, 1e6, false, "W_x ~ U(-s/sqrt(D), s/sqrt(D))"},
      {"init.forget_scale", 1, 0, 1e6, false, "W_c ~ U(-s/sqrt(D), s/sqrt(D))"},
      {"init.gate_scale", 1, 0, 1e6, false, "W_i ~ U(-s/sqrt(D), s/sqrt(D))"},
      {"init.bias_forget", 2, -1e6, 1e6, false, "b_c (c = 0.87 at x = 0 for the default 2)"},
      {"init.bias_gate", 0, -1e6, 1e6, false, "mean of b_i, the gate's resting current"},
      {"init.bias_spread", 0, 0, 1e6, false, "b_i ~ mean + U(-spread, spread)"},
      {"init.leak", 0.1, 1e-6, 1 - 1e-6, false,
       "initial leak 1 - exp(-dt inv_tau_m) of every gate (the paper's 1/tau_m), in (0, 1)"},
  };
  f.make_double = &make_spiking_gated<double>;
  f.make_float = &make_spiking_gated<float>;
  f.nir.lacks =
      "NIR has no multiplicative gate: the spiking-gated cell multiplies its linear recurrence "
      "by spikes";
  return f;
}

}  // namespace egret
