// The network a checkpoint holds: its configuration's network with the checkpoint's trained
// values (egret.Network.load_checkpoint, `egret simulate --checkpoint`, `egret classify`).
#pragma once

#include <string>
#include <vector>

#include "io/config/network_config.hpp"
#include "io/hdf5/checkpoint.hpp"
#include "sim/precision_cast.hpp"
#include "train/parameters.hpp"

namespace egret {

// A checkpoint's configuration may be a training configuration: these sections are the
// training's, not the network's.
inline const std::vector<std::string>& checkpoint_training_sections() {
  static const std::vector<std::string> s = {"task", "training", "output"};
  return s;
}

// The network of `cfg` (the checkpoint's configuration, parsed) with the checkpoint's values:
// the flat training values with or without the time constants, whichever count matches (format
// 3 files: one time constant per layer), then the natural values of the constrained parameters
// so that a saved network reloads bit for bit.
template <class Scalar>
Network<Scalar> network_from_checkpoint(const std::string& path, const Checkpoint& c,
                                        const NetworkConfig& cfg) {
  const Network<Scalar> initial = build_network<Scalar>(cfg);
  const ParameterVector<Scalar> without_tau(initial, false), with_tau(initial, true);
  // Before format 4 a per-unit time constant was one value per layer (docs/formats.md).
  const bool format3 = c.format_version < 4;
  const auto size_of = [&](const ParameterVector<Scalar>& v) {
    return format3 ? v.format3_size() : v.size();
  };
  ParameterVector<Scalar> pv;
  if (c.values.size() == size_of(with_tau))
    pv = with_tau;
  else if (c.values.size() == size_of(without_tau))
    pv = without_tau;
  else
    throw std::invalid_argument(path + ": " + std::to_string(c.values.size()) +
                                " trainable values, the configuration's network has " +
                                std::to_string(size_of(without_tau)) + " (or " +
                                std::to_string(size_of(with_tau)) + " with time constants)");
  const std::string where = path + ": /training/values";
  pv.values() =
      cast_values<Scalar>(format3 ? pv.from_format3(c.values, false, where) : c.values, where);
  return with_exact_constrained_parameters(pv.network(), c, path);
}

// The checkpoint's configuration as a network configuration (errors name the file).
inline NetworkConfig checkpoint_network_config(const std::string& path, const Checkpoint& c) {
  try {
    return parse_network_config(c.config_text, path + " (configuration)",
                                checkpoint_training_sections());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path +
                                ": the checkpoint's configuration is not a network or "
                                "training configuration: " +
                                e.what());
  }
}

}  // namespace egret
