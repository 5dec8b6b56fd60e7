// A network's configuration and values as the NIR exporter and importer see them: per layer its
// family, settings (every key, defaults filled in) and named parameters in double (exact for
// float networks too), and the readout. Built from a network configuration (its seeded
// initialisation and "params") or from a checkpoint (its trained values).
#pragma once

#include <Eigen/Core>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/config/network_config.hpp"

namespace egret::nir {

struct LayerValues {
  std::string type;
  LayerSettings settings;
  std::map<std::string, Eigen::MatrixXd> params;  // by the family's parameter names
  Eigen::Index units = 0, inputs = 0;
  const Eigen::MatrixXd& param(const std::string& name) const;
  double setting(const std::string& key) const { return settings.get(key); }
};

struct NetworkValues {
  Eigen::Index input_channels = 0;
  Precision precision = Precision::kFloat;
  std::vector<LayerValues> layers;
  std::optional<Eigen::MatrixXd> W_o;  // the readout, when the network has one
  Eigen::VectorXd b_o;
};

NetworkValues values_of_config(const NetworkConfig& cfg);
// A built network (e.g. trained from Python) with the configuration it was built from.
template <class Scalar>
NetworkValues values_of_network(const NetworkConfig& cfg, const Network<Scalar>& net);
// A network configuration file or an egret checkpoint (told apart by content).
NetworkValues values_of_file(const std::string& path);

}  // namespace egret::nir
