// Every cell family egret knows: adding one is one line here (docs/cell_families.md).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "models/bmru_family.hpp"
#include "models/continuous_egru_family.hpp"
#include "models/discrete_egru_family.hpp"
#include "models/lif_family.hpp"
#include "models/surnn_family.hpp"
#include "sim/cell_family.hpp"

namespace egret {

inline const std::vector<CellFamily>& cell_families() {
  static const std::vector<CellFamily> families = {
      continuous_egru_family(), discrete_egru_family(), lif_family(), bmru_family(), surnn_family(),
  };
  return families;
}

// The family registered as `type`; an unknown type is an error listing the known ones.
inline const CellFamily& find_cell_family(const std::string& type, const std::string& where) {
  std::string known;
  for (const auto& f : cell_families()) {
    if (f.type == type) return f;
    known += (known.empty() ? "" : ", ") + f.type;
  }
  throw std::invalid_argument(where + ": unknown layer type '" + type + "' (known: " + known + ")");
}

}  // namespace egret
