#include "io/nir/nir_import.hpp"

#include <cstdio>
#include <fstream>
#include <regex>
#include <stdexcept>

#include "io/config/network_config.hpp"
#include "io/nir/nir_families.hpp"
#include "io/nir/nir_flatten.hpp"
#include "io/nir/nir_node_types.hpp"
#include "io/nir/nir_reader.hpp"

namespace egret::nir {
// Named, not anonymous: egret_io is a unity build.
namespace nir_importing {

double layer_dt(const ChainLayer& l, const ImportOptions& options, const std::string& origin) {
  if (options.dt_ms > 0) return options.dt_ms;
  if (l.neuron->metadata.count(kMetaDt)) return metadata_number(*l.neuron, kMetaDt);
  throw std::invalid_argument(
      origin + ": node '" + l.neuron_name +
      "': NIR's nodes are continuous in time and this graph does not say egret's time step "
      "(no egret_dt_ms metadata): give the tick interval (egret import-nir --dt MS)");
}

nlohmann::json layer_config(const ChainLayer& l, const ImportOptions& options,
                            const std::string& origin) {
  if (l.extension) return import_extension_layer(l);
  const double dt = layer_dt(l, options, origin);
  return l.threshold ? import_lif_layer(l, dt) : import_cuba_layer(l, dt);
}

std::string precision_of(const File& file, const ImportOptions& options) {
  if (!options.precision.empty()) return options.precision;
  const auto it = file.graph.metadata.find(kMetaPrecision);
  return it != file.graph.metadata.end() ? it->second : "double";
}

// JSON with each list of numbers on one line (a matrix: one row per line).
void write_readable(const nlohmann::json& j, int indent, std::string& out) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  const auto numbers = [](const nlohmann::json& a) {
    if (!a.is_array()) return false;
    for (const auto& x : a)
      if (!x.is_number()) return false;
    return true;
  };
  if (j.is_object() && !j.empty()) {
    out += "{\n";
    std::size_t i = 0;
    for (const auto& [key, value] : j.items()) {
      out += pad + "  " + nlohmann::json(key).dump() + ": ";
      write_readable(value, indent + 2, out);
      out += ++i < j.size() ? ",\n" : "\n";
    }
    out += pad + "}";
  } else if (j.is_array() && !j.empty() && !numbers(j)) {
    out += "[\n";
    for (std::size_t i = 0; i < j.size(); ++i) {
      out += pad + "  ";
      write_readable(j[i], indent + 2, out);
      out += i + 1 < j.size() ? ",\n" : "\n";
    }
    out += pad + "]";
  } else {
    out += j.dump();
  }
}

// Which NIR node a layer's error is about: the network's errors name "layer K (family)".
std::string node_of_layer_error(const std::string& message, const Chain& chain) {
  static const std::regex layer_index("^layer ([0-9]+) ");
  std::smatch m;
  if (!std::regex_search(message, m, layer_index)) return "";
  const std::size_t k = std::stoul(m[1].str());
  if (k >= chain.layers.size()) return "";
  const ChainLayer& l = chain.layers[k];
  return "node '" + l.neuron_name + "' (" + l.neuron->type + ")";
}

// The configuration must build: a graph egret cannot run fails at import, not later.
void check_builds(const std::string& text, const std::string& origin, const Chain& chain) {
  try {
    const NetworkConfig cfg = parse_network_config(text, origin);
    with_precision(cfg.precision, [&](auto scalar) {
      (void)build_network<decltype(scalar)>(cfg);
      return 0;
    });
  } catch (const std::invalid_argument& e) {
    std::string message = e.what();
    if (message.rfind(origin + ": ", 0) == 0) message.erase(0, origin.size() + 2);
    const std::string node = node_of_layer_error(message, chain);
    throw std::invalid_argument(origin + ": " + (node.empty() ? "" : node + ": ") +
                                "egret cannot run the imported network: " + message);
  }
}

// Every node checked against its type, defaults filled in (the reader does this for files; a
// graph built in memory gets the same checks here).
Graph checked(Graph g) {
  for (auto& [name, node] : g.nodes) {
    if (node.graph)
      node.graph = std::make_shared<Graph>(checked(*node.graph));
    else
      check_node(node);
  }
  return g;
}

}  // namespace nir_importing

std::string import_config(const File& file, const std::string& origin,
                          const ImportOptions& options) {
  Graph flat = flattened(nir_importing::checked(file.graph));
  flat.path = origin + ":" + flat.path;
  const Chain chain = find_chain(flat);
  nlohmann::json config = {{"precision", nir_importing::precision_of(file, options)},
                           {"input_channels", chain.input_channels},
                           {"layers", nlohmann::json::array()}};
  for (const ChainLayer& l : chain.layers)
    config["layers"].push_back(nir_importing::layer_config(l, options, origin));
  import_readout(chain, config);
  std::string text;
  nir_importing::write_readable(config, 0, text);
  text += "\n";
  nir_importing::check_builds(text, origin, chain);
  return text;
}

void import_nir_file(const std::string& in, const std::string& out, const ImportOptions& options) {
  const std::string text = import_config(read_nir_file(in), in, options);
  const std::string tmp = out + ".tmp-egret";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw std::runtime_error(out + ": cannot write the configuration");
    }
  }
  if (std::rename(tmp.c_str(), out.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(out + ": cannot move the configuration into place");
  }
}

}  // namespace egret::nir
