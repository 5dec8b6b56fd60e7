// The mapping of each egret family to and from NIR's nodes, one file per family (docs/nir.md
// has the table and the equations):
// Which mapping a family's layers take, and what NIR lacks for those it cannot express, is the
// family's registration (CellFamily::nir, sim/cell_family.hpp); these files walk it:
//   lif_nir.cpp        NirDescription::kLif (lif; su_snn whose gates never close)  <->
//                      LI + Threshold + soft reset; NIR's LIF chain imports as lif
//   cuba_nir.cpp       kCuba (cuba_lif, cuba_li)  <->  CubaLIF, LIF, IF / CubaLI, LI, I
//   readout_nir.cpp    egret's readout  <->  an LI (the output trace) and an Affine
//   refused_nir.cpp    what NIR lacks for a layer (its family's description)
//   extension_nir.cpp  any family as an egret extension node (export --extension)
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "io/nir/nir_build.hpp"
#include "io/nir/nir_chain.hpp"
#include "io/nir/nir_network_values.hpp"

namespace egret::nir {

// Exporters add the layer's nodes and edges from place.source and return its output node.
std::string export_lif_layer(const LayerValues& layer, LayerPlace& place);
std::string export_cuba_layer(const LayerValues& layer, LayerPlace& place);
std::string export_extension_layer(const LayerValues& layer, LayerPlace& place);
// The readout: from the last layer's output node to the Output node (the node it returns).
std::string export_readout(const NetworkValues& net, LayerPlace& place);

// Importers return the layer's configuration object (its "type", "units", keys and "params").
nlohmann::json import_lif_layer(const ChainLayer& layer, double dt_ms);
nlohmann::json import_cuba_layer(const ChainLayer& layer, double dt_ms);
nlohmann::json import_extension_layer(const ChainLayer& layer);
// Sets "readout_classes" and "readout" of `config` and, when the last layer is egret's output
// trace written as an LI, removes it and gives its time constant to the layer below.
void import_readout(const Chain& chain, nlohmann::json& config);

// The NIR description of the family registered as `type` (CellFamily::nir), or null.
const NirDescription* nir_description(const std::string& type);
// Why NIR cannot express `layer` exactly, or empty when it can (refused_nir.cpp).
std::string nir_lacks(const LayerValues& layer);
// Whether `layer` sends unit spikes (its family's registration says so).
inline bool sends_spikes(const LayerValues& layer) {
  const NirDescription* nir = nir_description(layer.type);
  return nir && nir->spikes;
}

// Metadata egret writes (NIR: no backend may rely on metadata; egret reads only its own, for
// what the graph does not determine: the time step, the output trace of a layer without a
// readout, the training surrogate, the precision).
inline constexpr const char* kMetaDt = "egret_dt_ms";
inline constexpr const char* kMetaTauO = "egret_tau_o_ms";
inline constexpr const char* kMetaSurrogate = "egret_surrogate_alpha";
inline constexpr const char* kMetaPrecision = "egret_precision";

}  // namespace egret::nir
