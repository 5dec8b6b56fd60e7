// The configuration keys and factory of the current-based families (models/cuba_lif/
// cuba_cell.hpp), shared by cuba_lif (spiking) and cuba_li (graded).
#pragma once

#include <limits>
#include <memory>
#include <vector>

#include "models/cuba_lif/cuba_cell.hpp"
#include "models/shared/parameter_checks.hpp"
#include "models/tick/tick_layer.hpp"
#include "sim/cell_family.hpp"

namespace egret {

inline std::vector<SettingKey> cuba_keys(bool spiking) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<SettingKey> keys = {
      {"dt", 1, kMinTimeScaleMs, inf, false, "tick interval [ms]; ticks at k dt, k = 1, 2, ..."},
      boolean_key({"synapse", 1, 0, 1, false,
                   "whether the units have a synaptic current: tau_syn dI/dt = -I + w_in S "
                   "(false: I = S)"}),
      boolean_key({"leak", 1, 0, 1, false,
                   "whether the membrane leaks: tau_mem dv/dt = v_leak - v + r I (false: dv/dt = "
                   "r I)"}),
      {"tau_syn", 5, kMinTimeScaleMs, inf, false,
       "initial synaptic time constant [ms] of every unit"},
      {"tau_mem", 20, kMinTimeScaleMs, inf, false,
       "initial membrane time constant [ms] of every unit"},
      {"init.weight_scale", 1, 0, 1e6, false, "W ~ U(-s/sqrt(D), s/sqrt(D))"},
      {"init.recurrent_scale", 1, 0, 1e6, false, "V ~ U(-s/sqrt(N), s/sqrt(N))"},
  };
  if (spiking) {
    keys.push_back({"threshold", 1, -1e6, 1e6, false, "initial v_threshold of every unit"});
    keys.push_back({"tau_o", 10, kMinTimeScaleMs, inf, false, "output-trace time constant [ms]"});
  }
  return keys;
}

template <class Scalar, bool Spiking>
std::unique_ptr<Layer<Scalar>> make_cuba_layer(const LayerRecipe& r) {
  using P = CubaParams<Scalar, Spiking>;
  const LayerSettings& s = r.settings;
  typename P::RandomInit init;
  init.weight_scale = s.as<Scalar>("init.weight_scale");
  init.recurrent_scale = s.as<Scalar>("init.recurrent_scale");
  init.tau_syn = s.as<Scalar>("tau_syn");
  init.tau_mem = s.as<Scalar>("tau_mem");
  if constexpr (Spiking) init.threshold = s.as<Scalar>("threshold");
  P p = P::random(r.units, r.inputs, r.seed, init, s.flag("synapse"), s.flag("leak"));
  p.dt = s.as<Scalar>("dt");
  if constexpr (Spiking) p.tau_o = s.as<Scalar>("tau_o");
  p.validate(r.name);
  auto params = std::make_shared<const P>(std::move(p));
  if constexpr (Spiking)
    return std::make_unique<TickLayer<Scalar, CubaLifCell>>(std::move(params));
  else
    return std::make_unique<TickLayer<Scalar, CubaLiCell>>(std::move(params));
}

}  // namespace egret
