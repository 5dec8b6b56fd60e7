// The families NIR cannot express exactly, and what NIR lacks for each (docs/nir.md, the
// mapping table). An export refuses them with this reason; `--extension` writes them as egret
// extension nodes instead (io/nir/extension_nir.cpp). su-SNN exports as LIF when its gates never
// close (every unit's g_b above the sum of its |g_alpha|: the gate's argument stays positive at
// every time); otherwise it is refused.
#include <map>

#include "io/nir/nir_families.hpp"

namespace egret::nir {
// Named, not anonymous: egret_io is a unity build.
namespace refused_families {

// Why the gate of an su-SNN layer may close, or empty when it never does.
std::string closing_gate(const LayerValues& layer) {
  const Eigen::MatrixXd& b = layer.param("g_b");
  const Eigen::MatrixXd& alpha = layer.param("g_alpha");
  for (Eigen::Index n = 0; n < layer.units; ++n)
    if (!(b(n, 0) > alpha.row(n).cwiseAbs().sum()))
      return "unit " + std::to_string(n) + "'s gate can close (g_b = " + std::to_string(b(n, 0)) +
             " is not above the sum of its |g_alpha|, " +
             std::to_string(alpha.row(n).cwiseAbs().sum()) + ")";
  return "";
}

}  // namespace refused_families

std::string nir_lacks(const LayerValues& layer) {
  static const std::map<std::string, std::string> lacks = {
      {"continuous_egru",
       "NIR has no gated unit and no graded event: the continuous EGRU's state relaxes toward a "
       "tanh gate at a rate set by a sigmoid gate of its inputs, and it sends events of value "
       "c (not unit spikes)"},
      {"discrete_egru",
       "NIR has no GRU gates (sigmoid and tanh of the inputs multiplying the state) and no "
       "graded event (the EGRU sends its state's value)"},
      {"evnn_egru", "NIR has no GRU gates and no graded event (EvNN's EGRU sends its value y)"},
      {"bmru",
       "NIR has no bistable unit: BMRU's state switches to +-alpha when |W_x x + b_x| exceeds "
       "an input-dependent threshold |W_beta x + b_beta|, and it sends changes of a real value"},
      {"surnn",
       "NIR has no gate that opens units on a time schedule (suRNN's rhythmic gate) and no tanh "
       "recurrence"},
      {"sugru",
       "NIR has no gate that opens units on a time schedule (the rhythmic gate) and no GRU "
       "gates"},
      {"ds_gru",
       "NIR has no input-dependent routing (the DS-GRU's top-k masks of its hidden and input "
       "channels) and no GRU gates"},
      {"spiking_gated",
       "NIR has no multiplicative gate: the spiking-gated cell multiplies its linear recurrence "
       "by spikes"},
  };
  if (layer.type == "lif" || layer.type == "cuba_lif" || layer.type == "cuba_li") return "";
  if (layer.type == "su_snn") {
    const std::string why = refused_families::closing_gate(layer);
    if (why.empty()) return "";
    return "NIR has no gate that stops a neuron's integration on a time schedule (su-SNN's "
           "rhythmic gate): " +
           why + "; an su-SNN whose gates never close exports as LIF";
  }
  const auto it = lacks.find(layer.type);
  return it != lacks.end() ? it->second
                           : "egret has no NIR mapping for the family '" + layer.type + "'";
}

}  // namespace egret::nir
