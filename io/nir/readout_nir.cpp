// egret's readout (docs/model.md §1, Output trace and readout: W_o o + b_o on the last layer's
// output trace o) in NIR, both ways (docs/nir.md, "readout"):
//  * after a spiking layer the trace is NIR's LI (tau = tau_o, r = 1 / (1 - exp(-dt / tau_o)),
//    v_leak = 0; one per unit) fed by the spikes, then Affine(W_o, b_o) and the Output node:
//    with the spikes held over each tick this LI is egret's trace at the ticks;
//  * after a graded layer (cuba_li: the trace holds v) or an extension node, Affine(W_o, b_o)
//    alone.
// Import takes such an LI back as the trace (the layer below gets its tau_o) when it is exactly
// what egret writes at the layer's dt; any other LI stays a cuba_li layer.
#include <stdexcept>

#include "io/nir/nir_families.hpp"
#include "io/nir/nir_units.hpp"

namespace egret::nir {
// Named, not anonymous: egret_io is a unity build.
namespace readout_mapping {

// The trace LI egret writes after layer `below` at its dt: its tau_o [ms], or 0 when `last` is
// not that LI.
double trace_time_constant(const Chain& chain, const nlohmann::json& below) {
  if (chain.layers.size() < 2) return 0;
  const ChainLayer& last = chain.layers.back();
  const ChainLayer& spiking = chain.layers[chain.layers.size() - 2];
  if (!spiking.spiking() || last.neuron->type != "LI" || last.threshold ||
      !last.recurrent.empty() || last.feedforward.size() != 1 ||
      !last.feedforward.front().type.empty())
    return 0;
  const Eigen::VectorXd tau = vector_of(last.neuron->at("tau"));
  const Eigen::VectorXd r = vector_of(last.neuron->at("r"));
  const Eigen::VectorXd v_leak = vector_of(last.neuron->at("v_leak"));
  const double tau_ms = egret_milliseconds(tau[0]);
  const double dt = below.at("dt").get<double>();
  for (Eigen::Index i = 0; i < tau.size(); ++i)
    if (tau[i] != tau[0] || v_leak[i] != 0 || r[i] != unit_gain_resistance(tau_ms, dt)) return 0;
  return tau_ms;
}

}  // namespace readout_mapping

std::string export_readout(const NetworkValues& net, LayerPlace& place) {
  Graph& g = place.graph;
  if (!net.W_o) {
    g.add("output", shape_node("Output", place.source_size));
    g.connect(place.source, "output");
    return "output";
  }
  const LayerValues& last = net.layers.back();
  std::string source = place.source;
  if (sends_spikes(last) && nir_lacks(last).empty()) {
    const double tau_o = last.param("tau_o")(0, 0);
    Node trace = typed_node("LI");
    trace.data["tau"] = constant_array(last.units, nir_seconds(tau_o));
    trace.data["r"] = constant_array(last.units, unit_gain_resistance(tau_o, last.setting("dt")));
    trace.data["v_leak"] = constant_array(last.units, 0.0);
    trace.metadata[kMetaDt] = number_text(last.setting("dt"));
    g.add("readout.trace", trace);
    g.connect(source, "readout.trace");
    source = "readout.trace";
  }
  Node affine = typed_node("Affine");
  affine.data["weight"] = matrix_array(*net.W_o);
  affine.data["bias"] = vector_array(net.b_o);
  g.add("readout", affine);
  g.add("output", shape_node("Output", net.W_o->rows()));
  g.connect(source, "readout");
  g.connect("readout", "output");
  return "output";
}

void import_readout(const Chain& chain, nlohmann::json& config) {
  if (!chain.readout) return;
  const ChainLayer& last = chain.layers.back();
  nlohmann::json& layers = config["layers"];
  if (last.spiking() && !last.extension)
    throw std::invalid_argument(
        "node '" + chain.readout->node + "' (" + chain.readout->type +
        "): a readout of spikes: egret's readout reads a layer's output trace, which NIR writes "
        "as an LI between the spikes and the Affine (docs/nir.md)");
  if (!last.extension && layers.size() >= 2) {
    const double tau_o = readout_mapping::trace_time_constant(chain, layers[layers.size() - 2]);
    if (tau_o > 0) {
      layers.erase(layers.size() - 1);
      layers.back()["tau_o"] = tau_o;
    }
  }
  const Contribution& ro = *chain.readout;
  config["readout_classes"] = ro.weight.rows();
  config["readout"] = {{"W_o", json_of_matrix(ro.weight)}, {"b_o", json_of_vector(ro.bias)}};
}

}  // namespace egret::nir
