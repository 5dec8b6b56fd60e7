#include "io/config/network_config.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "io/config/json_fields.hpp"
#include "models/cell_families.hpp"

namespace egret {
namespace {

using nlohmann::json;

using json_fields::fail;

Index get_count(const json& obj, const char* key, Index fallback, const std::string& origin,
                const std::string& where, Index min = 0) {
  return static_cast<Index>(json_fields::integer(obj, key, fallback, min, origin, where));
}

// A count the file must give, at least 1 ("units", "input_channels").
Index required_count(const json& obj, const char* key, const std::string& origin,
                     const std::string& where) {
  if (!obj.contains(key))
    fail(origin, json_fields::key_path(where, key), "missing (expected an integer >= 1)");
  return get_count(obj, key, 0, origin, where, 1);
}

std::vector<ParameterValue> get_overrides(const json& obj, const std::string& origin,
                                          const std::string& where) {
  std::vector<ParameterValue> out;
  if (!obj.is_object()) fail(origin, where, "expected an object of parameter values");
  for (const auto& [name, v] : obj.items()) {
    ParameterValue o;
    o.name = name;
    const std::string w = where + "." + name;
    auto number = [&](const json& x) {
      if (!x.is_number() || !std::isfinite(x.get<double>()))
        fail(origin, w, "expected finite numbers, got " + x.dump());
      return x.get<double>();
    };
    if (v.is_number()) {
      o.shape = ParameterValue::Shape::kScalar;
      o.rows = {{number(v)}};
    } else if (v.is_array() && !v.empty() && v[0].is_array()) {
      o.shape = ParameterValue::Shape::kMatrix;
      for (const auto& row : v) {
        if (!row.is_array()) fail(origin, w, "expected a list of rows");
        std::vector<double> r;
        for (const auto& x : row) r.push_back(number(x));
        o.rows.push_back(r);
      }
    } else if (v.is_array() && !v.empty()) {
      o.shape = ParameterValue::Shape::kVector;
      std::vector<double> r;
      for (const auto& x : v) r.push_back(number(x));
      o.rows = {r};
    } else {
      fail(origin, w, "expected a number, a list or a list of rows");
    }
    out.push_back(o);
  }
  return out;
}

// The family's keys in `obj` (an object nested as "prefix.key"), strictly: a key the family does
// not register is an error listing the ones it does.
void read_layer_settings(const json& obj, const CellFamily& family, const std::string& prefix,
                         const std::string& origin, const std::string& where,
                         std::map<std::string, double>& out) {
  for (const auto& [key, v] : obj.items()) {
    if (prefix.empty() && (key == "type" || key == "units" || key == "params")) continue;
    const std::string name = prefix + key;
    if (v.is_object()) {
      read_layer_settings(v, family, name + ".", origin, where + "." + key, out);
      continue;
    }
    const SettingKey* k = family.key(name);
    if (!k)
      fail(origin, where,
           "unknown key '" + name + "' for a " + family.type + " layer (known: type, units, " +
               "params, " + family.key_names() + ")");
    if (!k->choices.empty()) {
      const auto& c = k->choices;
      const auto it = v.is_string() ? std::find(c.begin(), c.end(), v.get<std::string>()) : c.end();
      if (it == c.end()) {
        std::string names;
        for (const auto& n : c) names += (names.empty() ? "\"" : ", \"") + n + "\"";
        fail(origin, where + "." + key, "expected one of " + names + ", got " + v.dump());
      }
      out[name] = static_cast<double>(it - c.begin());
      continue;
    }
    if (k->boolean) {
      if (!v.is_boolean()) fail(origin, where + "." + key, "expected true or false");
      out[name] = v.get<bool>() ? 1 : 0;
      continue;
    }
    out[name] = json_fields::number(obj, key.c_str(), 0, origin, where, k->allow_infinity);
  }
}

LayerConfig layer_config(const json& l, const std::string& origin, const std::string& where) {
  if (!l.is_object()) fail(origin, where, "expected an object");
  LayerConfig lc;
  if (!l.contains("type") || !l["type"].is_string())
    fail(origin, where + ".type", "expected a string naming a cell family");
  lc.type = l["type"].get<std::string>();
  const CellFamily& family = find_cell_family(lc.type, origin + ": " + where + ".type");
  lc.units = required_count(l, "units", origin, where);
  read_layer_settings(l, family, "", origin, where, lc.settings);
  family.settings(lc.settings, origin + ": " + where);  // bounds, before anything runs
  if (l.contains("params")) lc.params = get_overrides(l["params"], origin, where + ".params");
  return lc;
}

}  // namespace

LayerConfig parse_layer_config(const std::string& text, const std::string& origin) {
  json l;
  try {
    l = json::parse(text);
  } catch (const json::exception& e) {  // parse errors and out-of-range numbers (1e999)
    throw std::invalid_argument(origin + ": not valid JSON: " + e.what());
  }
  return layer_config(l, origin, "layer");
}

NetworkConfig parse_network_config(const std::string& text, const std::string& origin,
                                   const std::vector<std::string>& other_sections) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {  // parse errors and out-of-range numbers (1e999)
    throw std::invalid_argument(origin + ": not valid JSON: " + e.what());
  }
  if (!root.is_object()) fail(origin, "top level", "expected a JSON object");
  std::set<std::string> known = {"seed",    "input_channels", "layers",   "readout_classes",
                                 "readout", "simulation",     "precision"};
  known.insert(other_sections.begin(), other_sections.end());
  json_fields::check_keys(root, known, origin, "top level");
  NetworkConfig cfg;
  cfg.origin = origin;
  cfg.seed = static_cast<std::uint64_t>(get_count(root, "seed", 1, origin, "top level"));
  if (root.contains("precision")) {
    if (!root["precision"].is_string())
      fail(origin, "precision",
           "expected \"float\" or \"double\", got " + root["precision"].dump());
    cfg.precision = parse_precision(root["precision"].get<std::string>(), origin + ": precision");
  }
  cfg.input_channels = required_count(root, "input_channels", origin, "top level");
  cfg.readout_classes = get_count(root, "readout_classes", 0, origin, "top level");
  if (!root.contains("layers") || !root["layers"].is_array() || root["layers"].empty())
    fail(origin, "layers", "expected a non-empty array of layer objects");
  const json& layers = root["layers"];
  for (std::size_t i = 0; i < layers.size(); ++i)
    cfg.layers.push_back(layer_config(layers[i], origin, "layers[" + std::to_string(i) + "]"));
  if (root.contains("readout")) {
    if (cfg.readout_classes <= 0)
      fail(origin, "readout", "parameter values given but readout_classes is 0");
    cfg.readout_params = get_overrides(root["readout"], origin, "readout");
  }
  if (root.contains("simulation")) {
    const json& s = root["simulation"];
    if (!s.is_object()) fail(origin, "simulation", "expected an object");
    json_fields::check_keys(s,
                            {"end_time", "readout_times", "snapshot_times", "max_events",
                             "dense_step", "tape_checkpoint_every", "net_input_windows"},
                            origin, "simulation");
    cfg.dense_step = json_fields::number(s, "dense_step", cfg.dense_step, origin, "simulation");
    if (!(cfg.dense_step > 0))
      fail(origin, "simulation.dense_step", "must be > 0 [ms] (the step of the dense comparison)");
    cfg.max_events = static_cast<std::uint64_t>(json_fields::integer(
        s, "max_events", static_cast<long long>(cfg.max_events), 1, origin, "simulation"));
    cfg.tape_checkpoint_every =
        json_fields::integer(s, "tape_checkpoint_every", 0, 0, origin, "simulation");
    if (s.contains("net_input_windows")) {
      if (!s["net_input_windows"].is_boolean())
        fail(origin, "simulation.net_input_windows", "expected true or false");
      cfg.net_input_windows = s["net_input_windows"].get<bool>();
    }
    cfg.end_time = json_fields::number(s, "end_time", cfg.end_time, origin, "simulation");
    cfg.readout_times = json_fields::numbers(s, "readout_times", origin, "simulation");
    cfg.snapshot_times = json_fields::numbers(s, "snapshot_times", origin, "simulation");
  }
  if (!std::isfinite(cfg.end_time) || cfg.end_time < 0)
    fail(origin, "simulation.end_time", "must be finite and >= 0");
  return cfg;
}

std::string with_legacy_settings(const std::string& text, const std::string& origin) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    throw std::invalid_argument(origin + ": not valid JSON: " + e.what());
  }
  if (!root.is_object() || !root.contains("layers") || !root["layers"].is_array()) return text;
  for (json& layer : root["layers"]) {
    if (!layer.is_object() || !layer.contains("type") || !layer["type"].is_string()) continue;
    const CellFamily& family = find_cell_family(layer["type"].get<std::string>(), origin);
    for (const SettingKey& k : family.keys) {
      if (std::isnan(k.legacy_value)) continue;
      json* obj = &layer;  // "a.b" lives in the object "a"
      std::string name = k.name;
      for (auto dot = name.find('.'); dot != std::string::npos; dot = name.find('.')) {
        json& inner = (*obj)[name.substr(0, dot)];
        if (inner.is_null()) inner = json::object();
        obj = &inner;
        name = name.substr(dot + 1);
      }
      if (!obj->is_object() || obj->contains(name)) continue;
      (*obj)[name] = k.boolean ? json(k.legacy_value != 0)
                     : k.choices.empty()
                         ? json(k.legacy_value)
                         : json(k.choices.at(static_cast<std::size_t>(k.legacy_value)));
    }
  }
  return root.dump(2);
}

const char* precision_name(Precision p) {
  return p == Precision::kDouble ? "double" : "float";
}

Precision parse_precision(const std::string& name, const std::string& where) {
  if (name == "float") return Precision::kFloat;
  if (name == "double") return Precision::kDouble;
  throw std::invalid_argument(where + ": expected \"float\" or \"double\", got \"" + name + "\"");
}

std::string read_text_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open " + what);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

NetworkConfig load_network_config(const std::string& path) {
  return parse_network_config(read_text_file(path, "configuration file"), path);
}

}  // namespace egret
