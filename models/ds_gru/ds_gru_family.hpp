// The registration of the dynamic-sparse GRU layer (models/ds_gru/ds_gru_cell.hpp): its
// configuration keys, the budgets they resolve to, and the factory.
#pragma once

#include "sim/cell_family.hpp"

namespace egret {

// The family's registration (models/ds_gru/ds_gru_family.cpp): type, configuration keys, factory.
CellFamily ds_gru_family();

}  // namespace egret
