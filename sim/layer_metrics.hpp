// The per-layer metrics egret reports (docs/metrics.md), named as NeuroBench names them where it
// has a name, computed from a layer's exact counts (sim/recorder.hpp LayerCounts) summed over
// one or more samples. Counts are reported per sample, as NeuroBench reports them; the integer
// totals stay available in LayerCounts (and per sample in trace files).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/recorder.hpp"

namespace egret {

using MetricTable = std::vector<std::pair<std::string, double>>;

// The metric names in the order they are reported.
inline const std::vector<std::string>& layer_metric_names() {
  static const std::vector<std::string> names = {
      "Effective_MACs",        "Effective_ACs",     "Dense",
      "ActivationSparsity",    "MembraneUpdates",   "synaptic_macs",
      "synaptic_acs",          "gate_products",     "unit_steps",
      "events_per_unit_per_s", "weight_bytes_read", "state_bytes_read",
      "state_bytes_written",   "dense_step_ms"};
  return names;
}

// `c`: one layer's counts summed over `samples` samples that simulated `simulated_ms` in all;
// `scalar_bytes`: the size of one weight or state value in the run (8 for double, 4 for float).
inline MetricTable layer_metrics(const LayerCounts& c, std::uint64_t samples, double simulated_ms,
                                 std::uint64_t scalar_bytes) {
  const double s = samples > 0 ? static_cast<double>(samples) : 1.0;
  const auto per_sample = [s](std::uint64_t v) { return static_cast<double>(v) / s; };
  const OperationCounts& o = c.operations;
  const std::uint64_t unit_steps = c.steps * static_cast<std::uint64_t>(c.units);
  const double sparsity = unit_steps > 0 ? 1.0 - static_cast<double>(c.active_unit_steps) /
                                                     static_cast<double>(unit_steps)
                                         : std::nan("");
  const double rate =
      c.units > 0 && simulated_ms > 0
          ? static_cast<double>(c.events) / (static_cast<double>(c.units) * simulated_ms * 1e-3)
          : 0.0;
  const std::uint64_t state_bytes =
      o.membrane_updates * c.dense.state_words_per_unit * scalar_bytes;
  return {{"Effective_MACs", per_sample(o.effective_macs())},
          {"Effective_ACs", per_sample(o.effective_acs())},
          {"Dense", per_sample(c.dense.operations_per_step * c.steps)},
          {"ActivationSparsity", sparsity},
          {"MembraneUpdates", per_sample(o.membrane_updates)},
          {"synaptic_macs", per_sample(o.synaptic_macs)},
          {"synaptic_acs", per_sample(o.synaptic_acs)},
          {"gate_products", per_sample(o.gate_products)},
          {"unit_steps", per_sample(unit_steps)},
          {"events_per_unit_per_s", rate},
          {"weight_bytes_read", per_sample((o.synaptic_macs + o.synaptic_acs) * scalar_bytes)},
          {"state_bytes_read", per_sample(state_bytes)},
          {"state_bytes_written", per_sample(state_bytes)},
          {"dense_step_ms", c.step_ms}};
}

inline double metric(const MetricTable& t, const std::string& name) {
  for (const auto& [n, v] : t)
    if (n == name) return v;
  return std::nan("");
}

// A dense GRU of N units over D inputs, per step: 3 N (D + N) weight products and the 3 N
// element-wise gate products NeuroBench counts (r (W_hn h), (1 - z) n, z h); biases excluded.
inline std::uint64_t dense_gru_operations_per_step(std::uint64_t units, std::uint64_t inputs) {
  return 3 * units * (inputs + units) + 3 * units;
}

// Steps of `step_ms` that cover `duration_ms` (at least one).
inline std::uint64_t steps_covering(double duration_ms, double step_ms) {
  const double k = std::ceil(duration_ms / step_ms);
  return k >= 1 ? static_cast<std::uint64_t>(k) : 1;
}

}  // namespace egret
