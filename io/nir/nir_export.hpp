// Export of an egret network to a NIR graph (`egret export-nir`, `egret.export_nir`;
// docs/nir.md): each layer by its family's mapping (io/nir/nir_families.hpp), from the Input
// node (one channel per input) to the Output node, with the readout. A family NIR cannot
// express exactly is refused with what NIR lacks, unless `extension` asks for an egret
// extension node; nothing is approximated.
#pragma once

#include <string>

#include "io/nir/nir_graph.hpp"
#include "io/nir/nir_network_values.hpp"

namespace egret::nir {

struct ExportOptions {
  bool extension = false;  // write egret extension nodes for families NIR cannot express
};

Graph export_graph(const NetworkValues& net, const ExportOptions& options);

// A network configuration or checkpoint file (in) to a .nir file (out).
void export_nir_file(const std::string& in, const std::string& out, const ExportOptions& options);

}  // namespace egret::nir
