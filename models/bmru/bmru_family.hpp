// The registration of the BMRU layer (models/bmru/bmru_cell.hpp): its configuration keys and
// factory.
#pragma once

#include "sim/cell_family.hpp"

namespace egret {

// The family's registration (models/bmru/bmru_family.cpp): type, configuration keys, factory.
CellFamily bmru_family();

}  // namespace egret
