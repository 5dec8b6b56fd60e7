// Network and run configuration files (JSON). Parsing is strict: unknown keys, wrong types and
// impossible values are errors naming the key, so a typo never falls back to a default silently.
//
// {
//   "seed": 1,                       // base seed; layer i is initialised with seed + i
//   "input_channels": 16,
//   "layers": [
//     {"type": "continuous_egru", "units": 64, "tau_m": 10, "tau_o": 10,
//      "window_input": 5, "window_recurrent": "inf", "threshold": 0.3,
//      "init": {"weight_scale": 1, "bias_u": 0, "bias_r": 0, "bias_z": 0.8, "bias_spread": 0.2}},
//     {"type": "discrete_egru", "units": 32, "dt": 1, "tau_o": 10, "threshold": 0.3}
//   ],
//   "readout_classes": 0,            // > 0: a linear readout W_o o + b_o on the last layer
//   "simulation": {"end_time": 1000, "readout_times": [1000], "snapshot_times": [],
//                  "max_events": 100000000}  // the event budget of one run (sim/engine.hpp)
// }
//
// Time constants, windows and dt below kMinTimeScaleMs, and thresholds below kMinThreshold, are
// refused (models/egru_weights.hpp): they give event rates with no useful bound.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "models/continuous_egru_layer.hpp"
#include "models/discrete_egru_layer.hpp"
#include "sim/engine.hpp"
#include "sim/network.hpp"

namespace egret {

// An explicit value for one parameter: a number (fills it), a list (a vector), or a list of rows
// (a matrix). Shapes are checked when the network is built.
struct ParamOverride {
  std::string name;                       // U_u, ..., V_z, b_u, b_r, b_z, theta, c_init, W_o, b_o
  std::vector<std::vector<double>> rows;  // a number is 1x1, a vector is 1 row
  enum class Shape { kScalar, kVector, kMatrix } shape = Shape::kScalar;
};

struct LayerConfig {
  std::string type;  // "continuous_egru" or "discrete_egru"
  Index units = 0;
  double tau_m = 10;                                                  // continuous only [ms]
  double tau_o = 10;                                                  // [ms]
  double window_input = std::numeric_limits<double>::infinity();      // continuous only [ms]
  double window_recurrent = std::numeric_limits<double>::infinity();  // continuous only [ms]
  double dt = 1;                                                      // discrete only [ms]
  double threshold = 0.3;
  double weight_scale = 1;
  double bias_u = 0, bias_r = 0, bias_z = 0.8, bias_spread = 0.2;
  std::vector<ParamOverride> params;  // applied after the random initialisation
};

struct NetworkConfig {
  std::uint64_t seed = 1;
  Index input_channels = 0;
  std::vector<LayerConfig> layers;
  Index readout_classes = 0;
  std::vector<ParamOverride> readout_params;  // W_o, b_o
  double end_time = 1000;
  std::vector<double> readout_times;
  std::vector<double> snapshot_times;
  std::uint64_t max_events = kDefaultEventBudget;
};

// `origin` names the source (a file path) in error messages. Top-level keys listed in
// `other_sections` are left to the caller (e.g. a training configuration's "task").
NetworkConfig parse_network_config(const std::string& json_text, const std::string& origin,
                                   const std::vector<std::string>& other_sections = {});
NetworkConfig load_network_config(const std::string& path);
std::string read_text_file(const std::string& path, const char* what);

namespace detail {
template <class M>
void apply_override(M& target, const ParamOverride& o, const std::string& where) {
  using S = typename M::Scalar;
  const Index rows = target.rows(), cols = target.cols();
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument(where + ": " + o.name + ": " + what + " (expected " +
                                std::to_string(rows) + "x" + std::to_string(cols) + ")");
  };
  if (o.shape == ParamOverride::Shape::kScalar) {
    target.setConstant(static_cast<S>(o.rows[0][0]));
  } else if (o.shape == ParamOverride::Shape::kVector) {
    if (cols != 1 || static_cast<Index>(o.rows[0].size()) != rows)
      fail("a list of " + std::to_string(o.rows[0].size()) + " values does not fit");
    for (Index i = 0; i < rows; ++i)
      target(i, 0) = static_cast<S>(o.rows[0][static_cast<std::size_t>(i)]);
  } else {
    if (static_cast<Index>(o.rows.size()) != rows) fail(std::to_string(o.rows.size()) + " rows");
    for (Index i = 0; i < rows; ++i) {
      const auto& r = o.rows[static_cast<std::size_t>(i)];
      if (static_cast<Index>(r.size()) != cols)
        fail("row " + std::to_string(i) + " has " + std::to_string(r.size()) + " values");
      for (Index j = 0; j < cols; ++j)
        target(i, j) = static_cast<S>(r[static_cast<std::size_t>(j)]);
    }
  }
}

// Applies a layer's "params" values by name: the weights, and c_init for continuous layers.
template <class W>
void apply_weight_overrides(W& p, const std::vector<ParamOverride>& overrides,
                            const std::string& where) {
  for (const auto& o : overrides) {
    bool applied = false;
    for_each_weight(p, [&](const char* name, auto& m) {
      if (o.name == name) {
        apply_override(m, o, where);
        applied = true;
      }
    });
    if constexpr (std::is_same_v<W, ContinuousEgruParams<typename W::Scalar>>) {
      if (!applied && o.name == "c_init") {
        apply_override(p.c_init, o, where);
        applied = true;
      }
    }
    if (!applied) throw std::invalid_argument(where + ": unknown parameter '" + o.name + "'");
  }
}
}  // namespace detail

// Builds the network the configuration describes, with seeded random parameters.
template <class Scalar>
Network<Scalar> build_network(const NetworkConfig& cfg) {
  Network<Scalar> net;
  Index inputs = cfg.input_channels;
  for (std::size_t i = 0; i < cfg.layers.size(); ++i) {
    const LayerConfig& lc = cfg.layers[i];
    typename EgruWeights<Scalar>::RandomInit init;
    init.weight_scale = static_cast<Scalar>(lc.weight_scale);
    init.bias_u = static_cast<Scalar>(lc.bias_u);
    init.bias_r = static_cast<Scalar>(lc.bias_r);
    init.bias_z = static_cast<Scalar>(lc.bias_z);
    init.bias_spread = static_cast<Scalar>(lc.bias_spread);
    init.threshold = static_cast<Scalar>(lc.threshold);
    const std::uint64_t seed = cfg.seed + i;
    const std::string name = "layer " + std::to_string(i) + " (" + lc.type + ")";
    if (lc.type == "continuous_egru") {
      auto p = ContinuousEgruParams<Scalar>::random(lc.units, inputs, seed, init);
      p.tau_m = static_cast<Scalar>(lc.tau_m);
      p.tau_o = static_cast<Scalar>(lc.tau_o);
      p.window_input = static_cast<Scalar>(lc.window_input);
      p.window_recurrent = static_cast<Scalar>(lc.window_recurrent);
      detail::apply_weight_overrides(p, lc.params, name);
      p.validate(name);
      net.add_layer(std::make_unique<ContinuousEgruLayer<Scalar>>(
          std::make_shared<const ContinuousEgruParams<Scalar>>(std::move(p))));
    } else if (lc.type == "discrete_egru") {
      auto p = DiscreteEgruParams<Scalar>::random(lc.units, inputs, seed, init);
      p.dt = static_cast<Scalar>(lc.dt);
      p.tau_o = static_cast<Scalar>(lc.tau_o);
      detail::apply_weight_overrides(p, lc.params, name);
      p.validate(name);
      net.add_layer(std::make_unique<DiscreteEgruLayer<Scalar>>(
          std::make_shared<const DiscreteEgruParams<Scalar>>(std::move(p))));
    } else {
      throw std::invalid_argument(name + ": unknown layer type '" + lc.type +
                                  "' (known: continuous_egru, discrete_egru)");
    }
    inputs = lc.units;
  }
  if (cfg.readout_classes > 0) {
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
        detail::apply_override(ro.W_o, o, "readout");
      else if (o.name == "b_o")
        detail::apply_override(ro.b_o, o, "readout");
      else
        throw std::invalid_argument("readout: unknown parameter '" + o.name +
                                    "' (known: W_o, b_o)");
    }
    net.set_readout(std::move(ro));
  }
  return net;
}

template <class Scalar>
SimOptions<Scalar> sim_options(const NetworkConfig& cfg) {
  SimOptions<Scalar> o;
  o.end_time = static_cast<Scalar>(cfg.end_time);
  for (double t : cfg.readout_times) o.readout_times.push_back(static_cast<Scalar>(t));
  for (double t : cfg.snapshot_times) o.snapshot_times.push_back(static_cast<Scalar>(t));
  o.max_events = cfg.max_events;
  return o;
}

}  // namespace egret
