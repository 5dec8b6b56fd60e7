// Any egret layer as an egret extension node (`egret export-nir --extension`; docs/nir.md,
// Extension nodes): for the families whose equations NIR cannot express. The node's type is
// "egret.<family>"; it holds every named parameter of the layer as a float64 dataset (vectors
// [N], matrices [rows, cols], a per-layer number as a scalar), "units" (the layer's units) and
// "settings" (a JSON object of the family's configuration keys, as a configuration file writes
// them). It is one whole layer, input weights included: it receives the layer below on a plain
// edge and sends what the layer sends (docs/model.md gives each family's events); an Affine
// after it is egret's readout of its output trace. NIR's own readers refuse the unknown type
// by name; every other node of the file stays standard NIR.
#include <cmath>
#include <stdexcept>

#include "io/nir/nir_families.hpp"
#include "models/cell_families.hpp"

namespace egret::nir {
// Named, not anonymous: egret_io is a unity build.
namespace extension_mapping {

// The settings as a configuration's layer object writes them: "a.b" inside "a", booleans and
// choices by name, infinity as "inf".
nlohmann::json settings_json(const LayerValues& layer) {
  nlohmann::json out = nlohmann::json::object();
  for (const SettingKey& k : find_cell_family(layer.type, "export").keys) {
    nlohmann::json* obj = &out;
    std::string name = k.name;
    for (auto dot = name.find('.'); dot != std::string::npos; dot = name.find('.')) {
      nlohmann::json& inner = (*obj)[name.substr(0, dot)];
      if (inner.is_null()) inner = nlohmann::json::object();
      obj = &inner;
      name = name.substr(dot + 1);
    }
    const double v = layer.setting(k.name);
    (*obj)[name] = k.boolean            ? nlohmann::json(v != 0)
                   : !k.choices.empty() ? nlohmann::json(k.choices.at(static_cast<std::size_t>(v)))
                   : std::isinf(v)      ? nlohmann::json("inf")
                                        : nlohmann::json(v);
  }
  return out;
}

Array parameter_array(const Eigen::MatrixXd& m) {
  if (m.rows() == 1 && m.cols() == 1) return {{}, {m(0, 0)}};
  if (m.cols() == 1) return vector_array(m.col(0));
  return matrix_array(m);
}

nlohmann::json parameter_json(const Array& a) {
  if (a.shape.empty()) return a.values.at(0);
  if (a.shape.size() == 1) return a.values;
  if (a.shape.size() != 2) throw std::invalid_argument("a parameter of more than 2 dimensions");
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < a.shape[0]; ++i)
    rows.push_back(
        std::vector<double>(a.values.begin() + static_cast<std::ptrdiff_t>(i * a.shape[1]),
                            a.values.begin() + static_cast<std::ptrdiff_t>((i + 1) * a.shape[1])));
  return rows;
}

}  // namespace extension_mapping

std::string export_extension_layer(const LayerValues& layer, LayerPlace& place) {
  Node node = typed_node("egret." + layer.type);
  for (const auto& [name, m] : layer.params)
    node.data[name] = extension_mapping::parameter_array(m);
  node.data["units"] = {{}, {static_cast<double>(layer.units)}};
  node.text["settings"] = extension_mapping::settings_json(layer).dump();
  const std::string name = place.prefix + ".egret";
  place.graph.add(name, node);
  place.graph.connect(place.source, name);
  return name;
}

nlohmann::json import_extension_layer(const ChainLayer& l) {
  const Node& node = *l.neuron;
  const std::string family = node.type.substr(std::string("egret.").size());
  nlohmann::json layer;
  if (node.text.count("settings")) {
    try {
      layer = nlohmann::json::parse(node.text.at("settings"));
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(node.path + ": 'settings' is not JSON: " + e.what());
    }
    if (!layer.is_object())
      throw std::invalid_argument(node.path + ": 'settings' is not a JSON object");
  } else {
    layer = nlohmann::json::object();
  }
  for (const char* key : {"type", "units", "params"})
    if (layer.contains(key))
      throw std::invalid_argument(node.path + ": 'settings' may not set '" + key + "'");
  layer["type"] = family;
  layer["units"] = l.units;
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, a] : node.data)
    if (name != "units") {
      try {
        params[name] = extension_mapping::parameter_json(a);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(node.path + ": '" + name + "': " + e.what());
      }
    }
  layer["params"] = params;
  return layer;
}

}  // namespace egret::nir
