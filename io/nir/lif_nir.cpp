// egret's LIF layer (models/lif, docs/model.md §5) in NIR, both ways (docs/nir.md, "lif"):
//   v_k = alpha v_{k-1} + W x_k + V s_{k-1} + b - theta s_{k-1},  s_k = H(v_k - theta)
// is exactly, with the input held over each tick, NIR's LI (tau = tau_mem, r = 1 / (1 - alpha),
// v_leak = 0) fed by Affine(W, b), followed by Threshold(theta), with two edges from the
// Threshold back to the LI: Linear(V) and Scale(-theta) (the soft reset; NIR's LIF resets to
// v_reset instead, which is not egret's LIF). An su-SNN layer whose gates never close is a LIF
// layer (docs/model.md §9) and exports the same way.
//
// Import of an LI followed by a Threshold, any r and v_leak, with g = (1 - alpha) r (exactly 1
// when r is the value above, as egret writes it):
//   W_egret = g W,  b_egret = g b + (1 - alpha) v_leak,  V_egret = g (V + diag c) + diag theta
// where c sums the recurrent Scale nodes and V the other recurrent weights (diag theta undoes
// egret's own soft reset when the graph has none).
#include <stdexcept>

#include "io/nir/nir_families.hpp"
#include "io/nir/nir_units.hpp"

namespace egret::nir {

std::string export_lif_layer(const LayerValues& layer, LayerPlace& place) {
  Graph& g = place.graph;
  const std::string p = place.prefix;
  const double dt = layer.setting("dt");
  const Eigen::VectorXd tau = layer.param("tau_mem").col(0);
  const Eigen::VectorXd theta = layer.param("theta").col(0);
  Node input = typed_node("Affine");
  input.data["weight"] = matrix_array(layer.param("W"));
  input.data["bias"] = vector_array(layer.param("b").col(0));
  Node membrane = typed_node("LI");
  Eigen::VectorXd tau_s(layer.units), r(layer.units);
  for (Eigen::Index n = 0; n < layer.units; ++n) {
    tau_s[n] = nir_seconds(tau[n]);
    r[n] = unit_gain_resistance(tau[n], dt);
  }
  membrane.data["tau"] = vector_array(tau_s);
  membrane.data["r"] = vector_array(r);
  membrane.data["v_leak"] = constant_array(layer.units, 0.0);
  membrane.metadata[kMetaDt] = number_text(dt);
  membrane.metadata[kMetaTauO] = number_text(layer.param("tau_o")(0, 0));
  membrane.metadata[kMetaSurrogate] = number_text(layer.setting("surrogate.alpha"));
  Node spikes = typed_node("Threshold");
  spikes.data["threshold"] = vector_array(theta);
  Node reset = typed_node("Scale");
  reset.data["scale"] = vector_array(-theta);
  g.add(p + ".input", input);
  g.add(p + ".membrane", membrane);
  g.add(p + ".spikes", spikes);
  g.add(p + ".reset", reset);
  g.connect(place.source, p + ".input");
  g.connect(p + ".input", p + ".membrane");
  g.connect(p + ".membrane", p + ".spikes");
  g.connect(p + ".spikes", p + ".reset");
  g.connect(p + ".reset", p + ".membrane");
  if (!all_positive_zero(layer.param("V"))) {
    Node recurrent = typed_node("Linear");
    recurrent.data["weight"] = matrix_array(layer.param("V"));
    g.add(p + ".recurrent", recurrent);
    g.connect(p + ".spikes", p + ".recurrent");
    g.connect(p + ".recurrent", p + ".membrane");
  }
  return p + ".spikes";
}

nlohmann::json import_lif_layer(const ChainLayer& l, double dt) {
  const Node& li = *l.neuron;
  const Eigen::VectorXd tau_s = vector_of(li.at("tau")), r = vector_of(li.at("r"));
  const Eigen::VectorXd v_leak = vector_of(li.at("v_leak"));
  const Eigen::VectorXd theta = vector_of(l.threshold->at("threshold"));
  const Eigen::Index n = l.units;
  Eigen::VectorXd tau_ms(n), gain(n), rise(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    tau_ms[i] = egret_milliseconds(tau_s[i]);
    rise[i] = 1.0 - tick_decay(tau_ms[i], dt);
    gain[i] = r[i] == unit_gain_resistance(tau_ms[i], dt) ? 1.0 : rise[i] * r[i];
  }
  const Eigen::MatrixXd W =
      gain.asDiagonal() * summed_weights(l.feedforward, n, l.inputs, WeightParts::kAll);
  Eigen::VectorXd b = summed_bias(l);
  for (Eigen::Index i = 0; i < n; ++i) {
    b[i] *= gain[i];
    if (v_leak[i] != 0) b[i] += rise[i] * v_leak[i];
  }
  Eigen::MatrixXd V = gain.asDiagonal() * summed_weights(l.recurrent, n, n, WeightParts::kOthers);
  const Eigen::MatrixXd c = summed_weights(l.recurrent, n, n, WeightParts::kScales);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double d = gain[i] * c(i, i) + theta[i];
    if (d != 0) V(i, i) += d;
  }
  nlohmann::json layer = {{"type", "lif"}, {"units", n}, {"dt", dt}};
  if (li.metadata.count(kMetaTauO)) layer["tau_o"] = metadata_number(li, kMetaTauO);
  if (li.metadata.count(kMetaSurrogate))
    layer["surrogate"] = {{"alpha", metadata_number(li, kMetaSurrogate)}};
  layer["params"] = {{"W", json_of_matrix(W)},
                     {"V", json_of_matrix(V)},
                     {"b", json_of_vector(b)},
                     {"theta", json_of_vector(theta)},
                     {"tau_mem", json_of_vector(tau_ms)}};
  return layer;
}

}  // namespace egret::nir
