// Network and run configuration files (JSON). Parsing is strict: unknown keys, wrong types and
// impossible values are errors naming the key, so a typo never falls back to a default silently.
// A layer's keys are those its cell family registers (models/cell_families.hpp; docs/model.md
// lists them with their defaults), plus "type", "units" and "params".
//
// The layout (examples/two_layer.json is a complete file):
//   "seed": base seed (layer i is initialised with seed + i), "input_channels",
//   "precision": "float" (the default: speed) or "double" (verification; what every exactness
//                test uses), the scalar of simulation and training,
//   "layers": [{"type": <family>, "units": N, <the family's keys>, "params": {<name>: values}}],
//   "readout_classes" (> 0: a linear readout W_o o + b_o on the last layer), "readout",
//   "simulation": {"end_time", "readout_times", "snapshot_times",
//                  "max_events" (the event budget of one run, sim/engine.hpp),
//                  "dense_step" (ms: the step at which continuous layers' counts are compared
//                  with a dense clocked equivalent, docs/metrics.md; default 1),
//                  "tape_checkpoint_every" (K: with a tape for the backward pass, keep a
//                  layer's state every K of its steps and recompute the rest; 0, the default:
//                  each family chooses; docs/adjoint.md),
//                  "net_input_windows" (true, the default: layer 0's held inputs as the changes
//                  of each channel's window sum, sim/sim_options.hpp; false: every input and
//                  release one by one, as before 2026-12-03)}
//
// Time constants, windows and dt below kMinTimeScaleMs, and thresholds below kMinThreshold, are
// refused (the families register these floors as their keys' minimums): they give event rates
// with no useful bound.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/cell_families.hpp"
#include "sim/engine.hpp"
#include "sim/network.hpp"

namespace egret {

struct LayerConfig {
  std::string type;  // a registered cell family
  Index units = 0;
  std::map<std::string, double> settings;  // the family's keys that the file sets
  std::vector<ParameterValue> params;      // applied after the random initialisation
};

// The scalar of a run. Float is the default for speed; double is for verification (event times
// in float resolve about 6e-8 of the run's length: 0.1 us at 1.5 s, 6 us at 100 s).
enum class Precision { kFloat, kDouble };
const char* precision_name(Precision p);
Precision parse_precision(const std::string& name, const std::string& where);

// Calls f(Scalar{}) with Scalar the precision's type: one instantiation per scalar, chosen once.
template <class F>
decltype(auto) with_precision(Precision p, F&& f) {
  if (p == Precision::kDouble) return f(double{});
  return f(float{});
}

struct NetworkConfig {
  std::string origin;  // the file it was read from (errors building the network name it)
  std::uint64_t seed = 1;
  Precision precision = Precision::kFloat;
  Index input_channels = 0;
  std::vector<LayerConfig> layers;
  Index readout_classes = 0;
  std::vector<ParameterValue> readout_params;  // W_o, b_o
  double end_time = 1000;
  std::vector<double> readout_times;
  std::vector<double> snapshot_times;
  std::uint64_t max_events = kDefaultEventBudget;
  double dense_step = 1;
  std::int64_t tape_checkpoint_every = 0;
  bool net_input_windows = true;
  RunSettings run_settings() const {
    return {max_events, dense_step, tape_checkpoint_every, net_input_windows};
  }
};

// `origin` names the source (a file path) in error messages. Top-level keys listed in
// `other_sections` are left to the caller (e.g. a training configuration's "task").
NetworkConfig parse_network_config(const std::string& json_text, const std::string& origin,
                                   const std::vector<std::string>& other_sections = {});
NetworkConfig load_network_config(const std::string& path);
// One layer object, as in "layers" (for built-in networks kept as configuration text).
LayerConfig parse_layer_config(const std::string& json_text, const std::string& origin);
std::string read_text_file(const std::string& path, const char* what);
// The configuration with, in every layer that does not set it, each key's legacy value
// (SettingKey::legacy_value): what a configuration saved before the key existed meant.
std::string with_legacy_settings(const std::string& json_text, const std::string& origin);

// One layer of the configuration, with seeded random parameters and its "params" applied.
template <class Scalar>
std::unique_ptr<Layer<Scalar>> build_layer(const NetworkConfig& cfg, std::size_t i, Index inputs) {
  const LayerConfig& lc = cfg.layers[i];
  LayerRecipe r;
  r.name = "layer " + std::to_string(i) + " (" + lc.type + ")";
  const CellFamily& family = find_cell_family(lc.type, r.name);
  r.units = lc.units;
  r.inputs = inputs;
  r.seed = cfg.seed + i;
  r.settings = family.settings(lc.settings, r.name);
  auto layer = family.make<Scalar>(r);
  if (!lc.params.empty()) layer = with_parameter_values(*layer, lc.params, r.name);
  return layer;
}

// The readout of the configuration: seeded random W_o, zero b_o, then its "readout" values.
template <class Scalar>
Readout<Scalar> build_readout(const NetworkConfig& cfg, Index inputs) {
  Readout<Scalar> ro;
  ro.W_o.resize(cfg.readout_classes, inputs);
  ro.b_o.setZero(cfg.readout_classes);
  std::mt19937_64 rng(cfg.seed + cfg.layers.size());
  const double s = 1.0 / std::sqrt(static_cast<double>(inputs));
  for (Index j = 0; j < ro.W_o.cols(); ++j)
    for (Index i = 0; i < ro.W_o.rows(); ++i)
      ro.W_o(i, j) =
          static_cast<Scalar>((static_cast<double>(rng() >> 11) * 0x1.0p-53 * 2 - 1) * s);
  for (const auto& o : cfg.readout_params) {  // the configuration's "readout" values
    if (o.name == "W_o")
      apply_parameter_value(ro.W_o, o, "readout");
    else if (o.name == "b_o")
      apply_parameter_value(ro.b_o, o, "readout");
    else
      throw std::invalid_argument("readout: unknown parameter '" + o.name + "' (known: W_o, b_o)");
  }
  return ro;
}

// Builds the network the configuration describes, with seeded random parameters. What the
// parser cannot check alone (keys that bound each other, "params" and "readout" values) is
// refused here, with the file named.
template <class Scalar>
Network<Scalar> build_network(const NetworkConfig& cfg) {
  try {
    Network<Scalar> net;
    Index inputs = cfg.input_channels;
    for (std::size_t i = 0; i < cfg.layers.size(); ++i) {
      net.add_layer(build_layer<Scalar>(cfg, i, inputs));
      inputs = cfg.layers[i].units;
    }
    if (cfg.readout_classes > 0) net.set_readout(build_readout<Scalar>(cfg, inputs));
    return net;
  } catch (const std::invalid_argument& e) {
    if (cfg.origin.empty()) throw;
    throw std::invalid_argument(cfg.origin + ": " + e.what());
  }
}

template <class Scalar>
SimOptions<Scalar> sim_options(const NetworkConfig& cfg) {
  SimOptions<Scalar> o;
  o.end_time = static_cast<Scalar>(cfg.end_time);
  for (double t : cfg.readout_times) o.readout_times.push_back(static_cast<Scalar>(t));
  for (double t : cfg.snapshot_times) o.snapshot_times.push_back(static_cast<Scalar>(t));
  cfg.run_settings().apply_to(o);
  return o;
}

}  // namespace egret
