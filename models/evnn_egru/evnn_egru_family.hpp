// The registration of the EGRU in EvNN's convention (docs/model.md, "EvNN convention"): its
// configuration keys and factory.
#pragma once

#include "sim/cell_family.hpp"

namespace egret {

// The family's registration (models/evnn_egru/evnn_egru_family.cpp): type, configuration keys,
// factory.
CellFamily evnn_egru_family();

}  // namespace egret
