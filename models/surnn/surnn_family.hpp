// The registration of the selective-update RNN layer (models/surnn/surnn_cell.hpp): its
// configuration keys and factory.
#pragma once

#include "sim/cell_family.hpp"

namespace egret {

// The family's registration (models/surnn/surnn_family.cpp): type, configuration keys, factory.
CellFamily surnn_family();

}  // namespace egret
