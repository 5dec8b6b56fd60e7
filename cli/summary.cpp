// The per-layer table of events and counts (cli/summary.hpp).
#include "cli/summary.hpp"

namespace egret::cli {

void print_layer_metrics(const std::vector<std::string>& types,
                         const std::vector<egret::MetricTable>& tables) {
  std::printf("%-6s %-14s %8s %12s %10s %13s %13s %13s %13s %8s\n", "layer", "type", "events/u/s",
              "activ.sparse", "Membrane", "Eff. MACs", "Eff. ACs", "Dense", "Dense/Eff.",
              "step ms");
  for (std::size_t l = 0; l < tables.size(); ++l) {
    const auto& t = tables[l];
    const double effective = egret::metric(t, "Effective_MACs") + egret::metric(t, "Effective_ACs");
    const double dense = egret::metric(t, "Dense");
    std::printf("%-6zu %-14s %8.2f %12.4f %10.4g %13.4g %13.4g %13.4g %13.3g %8.3g\n", l,
                types[l].c_str(), egret::metric(t, "events_per_unit_per_s"),
                egret::metric(t, "ActivationSparsity"), egret::metric(t, "MembraneUpdates"),
                egret::metric(t, "Effective_MACs"), egret::metric(t, "Effective_ACs"), dense,
                effective > 0 ? dense / effective : 0.0, egret::metric(t, "dense_step_ms"));
  }
  std::printf(
      "(counts per sample; activ.sparse: NeuroBench's ActivationSparsity, 1 - active / all (unit, "
      "step) pairs, and Dense: the same layer run densely, both at the layer's step: its tick, or "
      "\"dense_step\" for continuous layers; docs/metrics.md)\n");
}

}  // namespace egret::cli
