// The registration of the selective-update GRU layer (models/sugru/sugru_cell.hpp): its
// configuration keys and factory.
#pragma once

#include "sim/cell_family.hpp"

namespace egret {

// The family's registration (models/sugru/sugru_family.cpp): type, configuration keys, factory.
CellFamily sugru_family();

}  // namespace egret
