// The registration of the selective-update RNN layer (models/surnn_cell.hpp): its configuration
// keys and factory.
#pragma once

#include <limits>
#include <memory>

#include "models/surnn_cell.hpp"
#include "models/tick_layer.hpp"
#include "sim/cell_family.hpp"

namespace egret {

// The gate generator's keys, shared by the selective-update families.
inline std::vector<SettingKey> rhythmic_gate_keys() {
  return {
      {"gate.frequencies", 0, 0, 1e6, false, "K shared frequencies (0: K = units, the paper's)"},
      {"gate.period_min", 2, 0, 1e9, false, "shortest initial period [ms] of the log grid",
       kMinTimeScaleMs},
      {"gate.period_max", 200, 0, 1e9, false, "longest initial period [ms] of the log grid",
       kMinTimeScaleMs},
      {"gate.amplitude", 1, 0, 1e6, false, "g_alpha ~ U(-amplitude, amplitude)"},
      {"gate.bias", 0, -1e6, 1e6, false, "initial g_b (negative: fewer units open)"},
      {"surrogate.slope", 1, 0, 1e6, false,
       "beta of the gate's surrogate H'(a) ~ beta s (1 - s), s = sigmoid(beta a)"},
  };
}

template <class Scalar>
std::unique_ptr<Layer<Scalar>> make_surnn(const LayerRecipe& r) {
  using P = SurnnParams<Scalar>;
  const LayerSettings& s = r.settings;
  typename P::RandomInit init;
  init.weight_scale = s.as<Scalar>("init.weight_scale");
  init.recurrent_scale = s.as<Scalar>("init.recurrent_scale");
  init.frequencies = static_cast<Index>(s.get("gate.frequencies"));
  if (static_cast<double>(init.frequencies) != s.get("gate.frequencies"))
    throw std::invalid_argument(r.name + ".gate.frequencies: must be a whole number");
  init.period_min = s.as<Scalar>("gate.period_min");
  init.period_max = s.as<Scalar>("gate.period_max");
  init.amplitude = s.as<Scalar>("gate.amplitude");
  init.gate_bias = s.as<Scalar>("gate.bias");
  if (!(init.period_min <= init.period_max))
    throw std::invalid_argument(r.name + ": gate.period_min must not exceed gate.period_max");
  P p = P::random(r.units, r.inputs, r.seed, init);
  p.dt = s.as<Scalar>("dt");
  p.slope = s.as<Scalar>("surrogate.slope");
  p.validate(r.name);
  return std::make_unique<TickLayer<Scalar, SurnnCell>>(std::make_shared<const P>(std::move(p)));
}

inline CellFamily surnn_family() {
  const double inf = std::numeric_limits<double>::infinity();
  CellFamily f;
  f.type = "surnn";
  f.summary = "selective-update RNN (seed 000): rhythmic binary gates, tanh RNN, delta events";
  f.keys = {
      {"dt", 1, 0, inf, false, "tick interval [ms]; ticks at k dt, k = 1, 2, ...", kMinTimeScaleMs},
      {"init.weight_scale", 1, 0, 1e6, false, "W ~ U(-s/sqrt(D), s/sqrt(D))"},
      {"init.recurrent_scale", 1, 0, 1e6, false, "V ~ U(-s/sqrt(N), s/sqrt(N))"},
  };
  for (auto& k : rhythmic_gate_keys()) f.keys.push_back(k);
  f.make_double = &make_surnn<double>;
  f.make_float = &make_surnn<float>;
  return f;
}

}  // namespace egret
