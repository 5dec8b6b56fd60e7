// egret's current-based layers (models/cuba_lif, docs/model.md §13) in NIR, both ways
// (docs/nir.md, "cuba_lif, cuba_li"): they are NIR's neuron nodes on egret's tick schedule, so
// the mapping is one node per layer with its parameters, an Affine (W, b) into it and, when V is
// not zero, a Linear (V) from its output back to it:
//   cuba_lif: synapse and leak -> CubaLIF, leak only -> LIF, neither -> IF
//   cuba_li:  synapse and leak -> CubaLI,  leak only -> LI,  neither -> I
// Time constants are seconds in NIR and milliseconds in egret (io/nir/nir_units.hpp); IF's and
// I's r is 1/s in NIR (dv/dt = r I with t in s) and 1/ms in egret. A synapse without a leak has
// no NIR node and is refused.
#include <stdexcept>

#include "io/nir/nir_families.hpp"
#include "io/nir/nir_units.hpp"

namespace egret::nir {
// Named, not anonymous: egret_io is a unity build.
namespace cuba_mapping {

// NIR's node type for a layer with or without a synapse and a leak ("" when none).
std::string nir_type(bool spiking, bool synapse, bool leak) {
  if (synapse && leak) return spiking ? "CubaLIF" : "CubaLI";
  if (leak) return spiking ? "LIF" : "LI";
  if (!synapse) return spiking ? "IF" : "I";
  return "";
}

Eigen::VectorXd mapped(const Eigen::VectorXd& v, double (*f)(double)) {
  Eigen::VectorXd out(v.size());
  for (Eigen::Index i = 0; i < v.size(); ++i) out[i] = f(v[i]);
  return out;
}

}  // namespace cuba_mapping

std::string export_cuba_layer(const LayerValues& layer, LayerPlace& place) {
  const bool spiking = sends_spikes(layer);
  const bool synapse = layer.setting("synapse") != 0, leak = layer.setting("leak") != 0;
  const std::string type = cuba_mapping::nir_type(spiking, synapse, leak);
  if (type.empty())
    throw std::invalid_argument(place.prefix + " (" + layer.type +
                                "): NIR has no node for a synaptic current without a membrane "
                                "leak (CubaLIF and CubaLI leak); egret writes no approximation");
  Node neuron = typed_node(type);
  const auto col = [&](const char* name) { return layer.param(name).col(0).eval(); };
  const Eigen::VectorXd r = col("r");
  neuron.data["r"] = vector_array(leak ? r : cuba_mapping::mapped(r, nir_rate));
  if (leak) {
    neuron.data[synapse ? "tau_mem" : "tau"] =
        vector_array(cuba_mapping::mapped(col("tau_mem"), nir_seconds));
    neuron.data["v_leak"] = vector_array(col("v_leak"));
  }
  if (synapse) {
    neuron.data["tau_syn"] = vector_array(cuba_mapping::mapped(col("tau_syn"), nir_seconds));
    neuron.data["w_in"] = vector_array(col("w_in"));
  }
  if (spiking) {
    neuron.data["v_threshold"] = vector_array(col("v_threshold"));
    neuron.data["v_reset"] = vector_array(col("v_reset"));
    neuron.metadata[kMetaTauO] = number_text(layer.param("tau_o")(0, 0));
  }
  neuron.metadata[kMetaDt] = number_text(layer.setting("dt"));
  Node input = typed_node("Affine");
  input.data["weight"] = matrix_array(layer.param("W"));
  input.data["bias"] = vector_array(col("b"));
  Graph& g = place.graph;
  const std::string p = place.prefix;
  g.add(p + ".input", input);
  g.add(p + ".neuron", neuron);
  g.connect(place.source, p + ".input");
  g.connect(p + ".input", p + ".neuron");
  if (!all_positive_zero(layer.param("V"))) {
    Node recurrent = typed_node("Linear");
    recurrent.data["weight"] = matrix_array(layer.param("V"));
    g.add(p + ".recurrent", recurrent);
    g.connect(p + ".neuron", p + ".recurrent");
    g.connect(p + ".recurrent", p + ".neuron");
  }
  return p + ".neuron";
}

nlohmann::json import_cuba_layer(const ChainLayer& l, double dt) {
  const Node& node = *l.neuron;
  const std::string& t = node.type;
  const bool spiking = l.spiking();
  const bool synapse = t == "CubaLIF" || t == "CubaLI";
  const bool leak = t != "IF" && t != "I";
  const Eigen::Index n = l.units;
  const auto col = [&](const char* name) { return vector_of(node.at(name)); };
  nlohmann::json params = {
      {"W", json_of_matrix(summed_weights(l.feedforward, n, l.inputs, WeightParts::kAll))},
      {"V", json_of_matrix(summed_weights(l.recurrent, n, n, WeightParts::kAll))},
      {"b", json_of_vector(summed_bias(l))},
      {"r", json_of_vector(leak ? col("r") : cuba_mapping::mapped(col("r"), egret_rate))}};
  if (leak) {
    params["tau_mem"] =
        json_of_vector(cuba_mapping::mapped(col(synapse ? "tau_mem" : "tau"), egret_milliseconds));
    params["v_leak"] = json_of_vector(col("v_leak"));
  }
  if (synapse) {
    params["tau_syn"] = json_of_vector(cuba_mapping::mapped(col("tau_syn"), egret_milliseconds));
    params["w_in"] = json_of_vector(col("w_in"));
  }
  nlohmann::json layer = {{"type", spiking ? "cuba_lif" : "cuba_li"},
                          {"units", n},
                          {"dt", dt},
                          {"synapse", synapse},
                          {"leak", leak}};
  if (spiking) {
    params["v_threshold"] = json_of_vector(col("v_threshold"));
    params["v_reset"] = json_of_vector(col("v_reset"));
    if (node.metadata.count(kMetaTauO)) layer["tau_o"] = metadata_number(node, kMetaTauO);
  }
  layer["params"] = params;
  return layer;
}

}  // namespace egret::nir
