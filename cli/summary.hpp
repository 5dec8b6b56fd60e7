// What several commands print: the per-layer table of events and counts, a run's summary.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "sim/batch_runner.hpp"
#include "sim/layer_metrics.hpp"
#include "sim/network.hpp"

namespace egret::cli {

// One row per layer: events, rate and the NeuroBench-named counts per sample
// (sim/layer_metrics.hpp), with the step of each layer's dense comparison.
void print_layer_metrics(const std::vector<std::string>& types,
                         const std::vector<egret::MetricTable>& tables);

template <class Scalar>
void print_summary(const egret::Network<Scalar>& net,
                   const std::vector<egret::SimResult<Scalar>>& results, double wall_s) {
  const std::size_t n_layers = static_cast<std::size_t>(net.size());
  std::uint64_t processed = 0, emitted = 0, inputs = 0;
  std::vector<egret::LayerCounts> totals(n_layers);
  double sim_ms = 0;
  for (const auto& r : results) {
    processed += r.events_processed;
    inputs += r.layers[0].inputs_received;
    sim_ms += r.end_time;
    for (std::size_t l = 0; l < n_layers; ++l) {
      totals[l] += r.layers[l];
      emitted += r.layers[l].events;
    }
  }
  std::printf(
      "samples: %zu, simulated time: %.1f ms in all, external input events: %llu, precision: "
      "%s\n",
      results.size(), sim_ms, static_cast<unsigned long long>(inputs),
      sizeof(Scalar) == sizeof(float) ? "float" : "double");
  std::vector<std::string> types;
  std::vector<egret::MetricTable> tables;
  for (std::size_t l = 0; l < n_layers; ++l) {
    types.push_back(net.layer(static_cast<Index>(l)).type_name());
    tables.push_back(egret::layer_metrics(totals[l], results.size(), sim_ms, sizeof(Scalar)));
  }
  print_layer_metrics(types, tables);
  std::printf(
      "emitted events: %llu, events processed (inputs, releases, crossings, ticks, "
      "readouts): %llu\n",
      static_cast<unsigned long long>(emitted), static_cast<unsigned long long>(processed));
  std::printf("wall time: %.3f s, events processed/s: %.0f, emitted events/s: %.0f\n", wall_s,
              wall_s > 0 ? static_cast<double>(processed) / wall_s : 0.0,
              wall_s > 0 ? static_cast<double>(emitted) / wall_s : 0.0);
}

inline bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace egret::cli
