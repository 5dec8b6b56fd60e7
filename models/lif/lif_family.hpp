// The registration of the LIF layer with soft reset (models/lif/lif_cell.hpp): its configuration
// keys and factory.
#pragma once

#include <limits>
#include <vector>

#include "models/shared/parameter_checks.hpp"
#include "sim/cell_family.hpp"

namespace egret {

// The LIF keys' initialisation settings into init (weight_scale, recurrent_scale, bias,
// bias_spread, threshold), shared with the families built on LIF integration (su-SNN).
template <class Init>
void read_lif_init(const LayerSettings& s, Init& init) {
  using S = decltype(init.threshold);
  init.weight_scale = s.as<S>("init.weight_scale");
  init.recurrent_scale = s.as<S>("init.recurrent_scale");
  init.bias = s.as<S>("init.bias");
  init.bias_spread = s.as<S>("init.bias_spread");
  init.threshold = s.as<S>("threshold");
}

// The LIF keys' run settings into p (dt, tau_mem broadcast to every unit, tau_o, alpha_s).
template <class P>
void read_lif_settings(const LayerSettings& s, P& p) {
  using S = typename P::Scalar;
  p.dt = s.as<S>("dt");
  p.tau_mem.setConstant(p.units(), s.as<S>("tau_mem"));
  p.tau_o = s.as<S>("tau_o");
  p.alpha_s = s.as<S>("surrogate.alpha");
}

// The LIF layer's configuration keys, shared with the families built on LIF integration.
inline std::vector<SettingKey> lif_keys() {
  const double inf = std::numeric_limits<double>::infinity();
  return {
      {"dt", 1, kMinTimeScaleMs, inf, false, "tick interval [ms]; ticks at k dt, k = 1, 2, ..."},
      {"tau_mem", 20, kMinTimeScaleMs, inf, false,
       "membrane time constant [ms] of every unit: alpha = exp(-dt / tau_mem)"},
      {"tau_o", 10, kMinTimeScaleMs, inf, false, "output-trace time constant [ms]"},
      {"threshold", 1, kMinThreshold, 1e6, false, "initial threshold theta of every unit"},
      {"surrogate.alpha", 1, 0, 1e6, false, "alpha_s of the surrogate 1 / (1 + (alpha_s pi u)^2)",
       true},
      {"init.weight_scale", 1, 0, 1e6, false, "W ~ U(-s/sqrt(D), s/sqrt(D))"},
      {"init.recurrent_scale", 1, 0, 1e6, false, "V ~ U(-s/sqrt(N), s/sqrt(N))"},
      {"init.bias", 0, -1e6, 1e6, false, "mean of b"},
      {"init.bias_spread", 0, 0, 1e6, false, "b ~ mean + U(-spread, spread)"},
  };
}

// The family's registration (models/lif/lif_family.cpp): type, configuration keys, factory.
CellFamily lif_family();

}  // namespace egret
