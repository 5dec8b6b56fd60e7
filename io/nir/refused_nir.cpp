// What NIR lacks to express a layer exactly, from its family's registration (CellFamily::nir,
// docs/nir.md, the mapping table). An export refuses such a layer with this reason; `--extension`
// writes it as an egret extension node instead (io/nir/extension_nir.cpp).
#include "io/nir/nir_families.hpp"
#include "models/cell_families.hpp"

namespace egret::nir {

const NirDescription* nir_description(const std::string& type) {
  for (const CellFamily& f : cell_families())
    if (f.type == type) return &f.nir;
  return nullptr;
}

std::string nir_lacks(const LayerValues& layer) {
  const NirDescription* nir = nir_description(layer.type);
  const std::string none = "egret has no NIR mapping for the family '" + layer.type + "'";
  if (!nir) return none;
  if (nir->neuron == NirDescription::Neuron::kNone) return nir->lacks.empty() ? none : nir->lacks;
  return nir->lacks_for ? nir->lacks_for(layer.params) : "";
}

}  // namespace egret::nir
