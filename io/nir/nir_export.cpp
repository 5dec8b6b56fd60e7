#include "io/nir/nir_export.hpp"

#include <stdexcept>

#include "io/nir/nir_families.hpp"
#include "io/nir/nir_writer.hpp"

namespace egret::nir {

Graph export_graph(const NetworkValues& net, const ExportOptions& options) {
  Graph g;
  g.path = "/node";
  g.add("input", shape_node("Input", net.input_channels));
  g.metadata[kMetaPrecision] = precision_name(net.precision);
  LayerPlace place{g, "input", net.input_channels, ""};
  for (std::size_t i = 0; i < net.layers.size(); ++i) {
    const LayerValues& layer = net.layers[i];
    place.prefix = "layer" + std::to_string(i);
    const std::string lacks = nir_lacks(layer);
    if (!lacks.empty() && !options.extension)
      throw std::invalid_argument(
          "layer " + std::to_string(i) + " (" + layer.type +
          "): NIR cannot express it exactly: " + lacks +
          ". egret writes no approximation; --extension writes the layer as an egret extension "
          "node (docs/nir.md)");
    if (!lacks.empty())
      place.source = export_extension_layer(layer, place);
    else if (nir_description(layer.type)->neuron == NirDescription::Neuron::kLif)
      place.source = export_lif_layer(layer, place);
    else
      place.source = export_cuba_layer(layer, place);
    place.source_size = layer.units;
  }
  export_readout(net, place);
  return g;
}

void export_nir_file(const std::string& in, const std::string& out, const ExportOptions& options) {
  write_nir_file(out, export_graph(values_of_file(in), options));
}

}  // namespace egret::nir
