// The registry of cell families (models/cell_families.hpp): one line per family; each
// family's registration is compiled in its own models/<family>_family.cpp.
#include "models/cell_families.hpp"

#include <stdexcept>

#include "models/bmru_family.hpp"
#include "models/continuous_egru_family.hpp"
#include "models/discrete_egru_family.hpp"
#include "models/ds_gru_family.hpp"
#include "models/evnn_egru_family.hpp"
#include "models/lif_family.hpp"
#include "models/spiking_gated_family.hpp"
#include "models/su_snn_family.hpp"
#include "models/sugru_family.hpp"
#include "models/surnn_family.hpp"

namespace egret {

const std::vector<CellFamily>& cell_families() {
  static const std::vector<CellFamily> families = {
      continuous_egru_family(),  // models/continuous_egru_*
      discrete_egru_family(),    // models/discrete_egru_*
      evnn_egru_family(),        // models/evnn_egru_*
      lif_family(),              // models/lif_*
      bmru_family(),             // models/bmru_*
      surnn_family(),            // models/surnn_*
      sugru_family(),            // models/sugru_*
      su_snn_family(),           // models/su_snn_*
      ds_gru_family(),           // models/ds_gru_*
      spiking_gated_family(),    // models/spiking_gated_*
  };
  return families;
}

const CellFamily& find_cell_family(const std::string& type, const std::string& where) {
  std::string known;
  for (const auto& f : cell_families()) {
    if (f.type == type) return f;
    known += (known.empty() ? "" : ", ") + f.type;
  }
  throw std::invalid_argument(where + ": unknown layer type '" + type + "' (known: " + known + ")");
}

}  // namespace egret
