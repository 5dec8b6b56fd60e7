// The configuration keys of the rhythmic gate generator (models/rhythmic_gate/rhythmic_gate.hpp),
// shared by the selective-update families, and their reading into a family's RandomInit.
#pragma once

#include <stdexcept>
#include <vector>

#include "models/shared/parameter_checks.hpp"
#include "sim/cell_family.hpp"

namespace egret {

// The gate generator's keys, shared by the selective-update families.
inline std::vector<SettingKey> rhythmic_gate_keys() {
  return {
      whole_number_key({"gate.frequencies", 0, 0, 1e6, false,
                        "K shared frequencies (0: K = units, the paper's)"}),
      {"gate.period_min", 2, kMinTimeScaleMs, 1e9, false,
       "shortest initial period [ms] of the log grid"},
      {"gate.period_max", 200, kMinTimeScaleMs, 1e9, false,
       "longest initial period [ms] of the log grid"},
      {"gate.amplitude", 1, 0, 1e6, false, "g_alpha ~ U(-amplitude, amplitude)"},
      {"gate.bias", 0, -1e6, 1e6, false, "initial g_b (negative: fewer units open)"},
      {"surrogate.slope", 1, 0, 1e6, false,
       "beta of the gate's surrogate H'(a) ~ beta s (1 - s), s = sigmoid(beta a)", true},
  };
}

// Fills init.frequencies, period_min, period_max, amplitude and gate_bias from the settings.
template <class Init>
void read_rhythmic_gate_settings(const LayerRecipe& r, Init& init) {
  using S = decltype(init.period_min);
  const LayerSettings& s = r.settings;
  init.frequencies = static_cast<Index>(s.get("gate.frequencies"));  // a whole_number_key
  init.period_min = s.as<S>("gate.period_min");
  init.period_max = s.as<S>("gate.period_max");
  init.amplitude = s.as<S>("gate.amplitude");
  init.gate_bias = s.as<S>("gate.bias");
  if (!(init.period_min <= init.period_max))
    throw std::invalid_argument(r.name + ": gate.period_min must not exceed gate.period_max");
}

}  // namespace egret
