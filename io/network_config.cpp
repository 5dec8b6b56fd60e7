#include "io/network_config.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "io/json_fields.hpp"

namespace egret {
namespace {

using nlohmann::json;

using json_fields::fail;

Index get_count(const json& obj, const char* key, Index fallback, const std::string& origin,
                const std::string& where) {
  return static_cast<Index>(json_fields::integer(obj, key, fallback, 0, origin, where));
}

std::vector<ParamOverride> get_overrides(const json& obj, const std::string& origin,
                                         const std::string& where) {
  std::vector<ParamOverride> out;
  if (!obj.is_object()) fail(origin, where, "expected an object of parameter values");
  for (const auto& [name, v] : obj.items()) {
    ParamOverride o;
    o.name = name;
    const std::string w = where + "." + name;
    auto number = [&](const json& x) {
      if (!x.is_number() || !std::isfinite(x.get<double>()))
        fail(origin, w, "expected finite numbers, got " + x.dump());
      return x.get<double>();
    };
    if (v.is_number()) {
      o.shape = ParamOverride::Shape::kScalar;
      o.rows = {{number(v)}};
    } else if (v.is_array() && !v.empty() && v[0].is_array()) {
      o.shape = ParamOverride::Shape::kMatrix;
      for (const auto& row : v) {
        if (!row.is_array()) fail(origin, w, "expected a list of rows");
        std::vector<double> r;
        for (const auto& x : row) r.push_back(number(x));
        o.rows.push_back(r);
      }
    } else if (v.is_array() && !v.empty()) {
      o.shape = ParamOverride::Shape::kVector;
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

// A positive time scale [ms] (tau_m, tau_o, windows, dt) or threshold must not be below its
// physical floor: the event rate would have no useful bound. (Values <= 0 are impossible
// rather than unphysical; build_network refuses them, naming the layer.)
void check_floor(double v, double floor, const char* unit, const std::string& origin,
                 const std::string& key) {
  if (v > 0 && v < floor) {
    std::ostringstream os;
    os << v << unit << " is below the documented minimum " << floor << unit
       << " (the event rate would have no useful bound)";
    fail(origin, key, os.str());
  }
}

void check_layer_floors(const LayerConfig& lc, const std::string& origin,
                        const std::string& where) {
  const bool continuous = lc.type == "continuous_egru";
  check_floor(lc.tau_o, kMinTimeScaleMs, " ms", origin, where + ".tau_o");
  check_floor(lc.threshold, kMinThreshold, "", origin, where + ".threshold");
  if (continuous) {
    check_floor(lc.tau_m, kMinTimeScaleMs, " ms", origin, where + ".tau_m");
    check_floor(lc.window_input, kMinTimeScaleMs, " ms", origin, where + ".window_input");
    check_floor(lc.window_recurrent, kMinTimeScaleMs, " ms", origin, where + ".window_recurrent");
  } else {
    check_floor(lc.dt, kMinTimeScaleMs, " ms", origin, where + ".dt");
  }
}

}  // namespace

NetworkConfig parse_network_config(const std::string& text, const std::string& origin,
                                   const std::vector<std::string>& other_sections) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::invalid_argument(origin + ": not valid JSON: " + e.what());
  }
  if (!root.is_object()) fail(origin, "top level", "expected a JSON object");
  std::set<std::string> known = {"seed",    "input_channels", "layers", "readout_classes",
                                 "readout", "simulation"};
  known.insert(other_sections.begin(), other_sections.end());
  json_fields::check_keys(root, known, origin, "top level");
  NetworkConfig cfg;
  cfg.seed = static_cast<std::uint64_t>(get_count(root, "seed", 1, origin, "top level"));
  cfg.input_channels = get_count(root, "input_channels", 0, origin, "top level");
  if (cfg.input_channels <= 0) fail(origin, "input_channels", "must be a positive integer");
  cfg.readout_classes = get_count(root, "readout_classes", 0, origin, "top level");
  if (!root.contains("layers") || !root["layers"].is_array() || root["layers"].empty())
    fail(origin, "layers", "expected a non-empty array of layer objects");
  const json& layers = root["layers"];
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string where = "layers[" + std::to_string(i) + "]";
    const json& l = layers[i];
    if (!l.is_object()) fail(origin, where, "expected an object");
    json_fields::check_keys(l,
                            {"type", "units", "tau_m", "tau_o", "window_input", "window_recurrent",
                             "dt", "threshold", "init", "params"},
                            origin, where);
    LayerConfig lc;
    if (!l.contains("type") || !l["type"].is_string())
      fail(origin, where + ".type", "expected \"continuous_egru\" or \"discrete_egru\"");
    lc.type = l["type"].get<std::string>();
    if (lc.type != "continuous_egru" && lc.type != "discrete_egru")
      fail(origin, where + ".type",
           "unknown layer type '" + lc.type + "' (known: continuous_egru, discrete_egru)");
    lc.units = get_count(l, "units", 0, origin, where);
    if (lc.units <= 0) fail(origin, where + ".units", "must be a positive integer");
    lc.tau_m = json_fields::number(l, "tau_m", lc.tau_m, origin, where);
    lc.tau_o = json_fields::number(l, "tau_o", lc.tau_o, origin, where);
    lc.window_input = json_fields::number(l, "window_input", lc.window_input, origin, where, true);
    lc.window_recurrent =
        json_fields::number(l, "window_recurrent", lc.window_recurrent, origin, where, true);
    lc.dt = json_fields::number(l, "dt", lc.dt, origin, where);
    lc.threshold = json_fields::number(l, "threshold", lc.threshold, origin, where);
    if (l.contains("init")) {
      const json& in = l["init"];
      const std::string w = where + ".init";
      if (!in.is_object()) fail(origin, w, "expected an object");
      json_fields::check_keys(in, {"weight_scale", "bias_u", "bias_r", "bias_z", "bias_spread"},
                              origin, w);
      lc.weight_scale = json_fields::number(in, "weight_scale", lc.weight_scale, origin, w);
      lc.bias_u = json_fields::number(in, "bias_u", lc.bias_u, origin, w);
      lc.bias_r = json_fields::number(in, "bias_r", lc.bias_r, origin, w);
      lc.bias_z = json_fields::number(in, "bias_z", lc.bias_z, origin, w);
      lc.bias_spread = json_fields::number(in, "bias_spread", lc.bias_spread, origin, w);
    }
    if (l.contains("params")) lc.params = get_overrides(l["params"], origin, where + ".params");
    check_layer_floors(lc, origin, where);
    cfg.layers.push_back(lc);
  }
  if (root.contains("readout")) {
    if (cfg.readout_classes <= 0)
      fail(origin, "readout", "parameter values given but readout_classes is 0");
    cfg.readout_params = get_overrides(root["readout"], origin, "readout");
  }
  if (root.contains("simulation")) {
    const json& s = root["simulation"];
    if (!s.is_object()) fail(origin, "simulation", "expected an object");
    json_fields::check_keys(s, {"end_time", "readout_times", "snapshot_times", "max_events"},
                            origin, "simulation");
    cfg.max_events = static_cast<std::uint64_t>(json_fields::integer(
        s, "max_events", static_cast<long long>(cfg.max_events), 1, origin, "simulation"));
    cfg.end_time = json_fields::number(s, "end_time", cfg.end_time, origin, "simulation");
    cfg.readout_times = json_fields::numbers(s, "readout_times", origin, "simulation");
    cfg.snapshot_times = json_fields::numbers(s, "snapshot_times", origin, "simulation");
  }
  if (!std::isfinite(cfg.end_time) || cfg.end_time < 0)
    fail(origin, "simulation.end_time", "must be finite and >= 0");
  return cfg;
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
