#include "io/nir/nir_network_values.hpp"

#include <fstream>
#include <stdexcept>

#include "io/hdf5/checkpoint_network.hpp"

namespace egret::nir {
// Named, not anonymous: egret_io is a unity build.
namespace network_values {

template <class Scalar>
NetworkValues values_of(const NetworkConfig& cfg, const Network<Scalar>& net) {
  NetworkValues v;
  v.input_channels = cfg.input_channels;
  v.precision = cfg.precision;
  for (std::size_t i = 0; i < cfg.layers.size(); ++i) {
    const LayerConfig& lc = cfg.layers[i];
    const Layer<Scalar>& layer = net.layer(static_cast<Index>(i));
    LayerValues l;
    l.type = lc.type;
    l.settings = find_cell_family(lc.type, "layer " + std::to_string(i)).settings(lc.settings, "");
    l.units = layer.units();
    l.inputs = layer.inputs();
    for (const auto& e : layer.parameters())
      l.params[e.spec.name] = e.value.template cast<double>();
    v.layers.push_back(std::move(l));
  }
  if (const auto* ro = net.readout()) {
    v.W_o = ro->W_o.template cast<double>();
    v.b_o = ro->b_o.template cast<double>();
  }
  return v;
}

// HDF5's signature at the start of the file (egret's checkpoints have no user block).
bool is_hdf5(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[8] = {0};
  in.read(head, 8);
  return in.gcount() == 8 && std::string(head, 8) == std::string("\x89HDF\r\n\x1a\n", 8);
}

}  // namespace network_values

const Eigen::MatrixXd& LayerValues::param(const std::string& name) const {
  const auto it = params.find(name);
  if (it == params.end())
    throw std::logic_error("a " + type + " layer has no parameter '" + name + "'");
  return it->second;
}

template <class Scalar>
NetworkValues values_of_network(const NetworkConfig& cfg, const Network<Scalar>& net) {
  return network_values::values_of(cfg, net);
}
template NetworkValues values_of_network(const NetworkConfig&, const Network<double>&);
template NetworkValues values_of_network(const NetworkConfig&, const Network<float>&);

NetworkValues values_of_config(const NetworkConfig& cfg) {
  return with_precision(cfg.precision, [&](auto scalar) {
    using Scalar = decltype(scalar);
    return network_values::values_of(cfg, build_network<Scalar>(cfg));
  });
}

NetworkValues values_of_file(const std::string& path) {
  if (!network_values::is_hdf5(path))  // a network or a training configuration
    return values_of_config(parse_network_config(read_text_file(path, "configuration file"), path,
                                                 checkpoint_training_sections()));
  const Checkpoint c = read_checkpoint(path);
  const NetworkConfig cfg = checkpoint_network_config(path, c);
  return with_precision(cfg.precision, [&](auto scalar) {
    using Scalar = decltype(scalar);
    return network_values::values_of(cfg, network_from_checkpoint<Scalar>(path, c, cfg));
  });
}

}  // namespace egret::nir
