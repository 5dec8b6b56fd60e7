// The registration of the selective-update spiking layer (models/su_snn_cell.hpp): its
// configuration keys and factory.
#pragma once

#include <limits>
#include <memory>

#include "models/rhythmic_gate_settings.hpp"
#include "models/su_snn_cell.hpp"
#include "models/tick_layer.hpp"
#include "sim/cell_family.hpp"

namespace egret {

template <class Scalar>
std::unique_ptr<Layer<Scalar>> make_su_snn(const LayerRecipe& r) {
  using P = SuSnnParams<Scalar>;
  const LayerSettings& s = r.settings;
  typename P::RandomInit init;
  init.weight_scale = s.as<Scalar>("init.weight_scale");
  init.recurrent_scale = s.as<Scalar>("init.recurrent_scale");
  init.bias = s.as<Scalar>("init.bias");
  init.bias_spread = s.as<Scalar>("init.bias_spread");
  init.threshold = s.as<Scalar>("threshold");
  read_rhythmic_gate_settings(r, init);
  P p = P::random(r.units, r.inputs, r.seed, init);
  p.dt = s.as<Scalar>("dt");
  p.tau_mem = s.as<Scalar>("tau_mem");
  p.tau_o = s.as<Scalar>("tau_o");
  p.alpha_s = s.as<Scalar>("surrogate.alpha");
  p.slope = s.as<Scalar>("surrogate.slope");
  p.validate(r.name);
  return std::make_unique<TickLayer<Scalar, SuSnnCell>>(std::make_shared<const P>(std::move(p)));
}

inline CellFamily su_snn_family() {
  const double inf = std::numeric_limits<double>::infinity();
  CellFamily f;
  f.type = "su_snn";
  f.summary = "selective-update spiking layer (seed 000): rhythmic gates over LIF integration";
  f.keys = {
      {"dt", 1, 0, inf, false, "tick interval [ms]; ticks at k dt, k = 1, 2, ...", kMinTimeScaleMs},
      {"tau_mem", 20, 0, inf, false, "membrane time constant [ms]: alpha = exp(-dt / tau_mem)",
       kMinTimeScaleMs},
      {"tau_o", 10, 0, inf, false, "output-trace time constant [ms]", kMinTimeScaleMs},
      {"threshold", 1, 0, 1e6, false, "initial threshold theta of every unit (> 0)", kMinThreshold},
      {"surrogate.alpha", 1, 0, 1e6, false,
       "alpha_s of the spike surrogate 1/(1+(alpha_s pi u)^2)"},
      {"init.weight_scale", 1, 0, 1e6, false, "W ~ U(-s/sqrt(D), s/sqrt(D))"},
      {"init.recurrent_scale", 1, 0, 1e6, false, "V ~ U(-s/sqrt(N), s/sqrt(N))"},
      {"init.bias", 0, -1e6, 1e6, false, "mean of b"},
      {"init.bias_spread", 0, 0, 1e6, false, "b ~ mean + U(-spread, spread)"},
  };
  for (auto& k : rhythmic_gate_keys()) f.keys.push_back(k);
  f.make_double = &make_su_snn<double>;
  f.make_float = &make_su_snn<float>;
  return f;
}

}  // namespace egret
