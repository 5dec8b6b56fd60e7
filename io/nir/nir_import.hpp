// Import of a NIR graph as an egret network configuration (`egret import-nir`,
// `egret.import_nir`; docs/nir.md): nested graphs resolved (io/nir/nir_flatten.hpp), the chain
// of layers found (io/nir/nir_chain.hpp), each layer by its family's mapping
// (io/nir/nir_families.hpp), and the result checked by building the network, so that a graph
// egret cannot run fails here, naming the node, and not later.
#pragma once

#include <string>

#include "io/nir/nir_graph.hpp"

namespace egret::nir {

struct ImportOptions {
  // The tick interval [ms] of every layer. 0: each layer's egret_dt_ms metadata (a graph egret
  // wrote); a graph without it needs one (NIR's nodes are continuous in time).
  double dt_ms = 0;
  // "float" or "double"; empty: the graph's egret_precision metadata, else "double".
  std::string precision;
};

// The configuration (JSON text) of the network that runs `file`; `origin` names it in errors.
std::string import_config(const File& file, const std::string& origin,
                          const ImportOptions& options);

// A .nir file (in) to a network configuration file (out, written whole or not at all).
void import_nir_file(const std::string& in, const std::string& out, const ImportOptions& options);

}  // namespace egret::nir
