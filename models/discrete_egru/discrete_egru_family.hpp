// The registration of the discrete-time EGRU (paper convention): its configuration keys and
// factory.
#pragma once

#include "sim/cell_family.hpp"

namespace egret {

// The family's registration (models/discrete_egru/discrete_egru_family.cpp): type, configuration
// keys, factory.
CellFamily discrete_egru_family();

}  // namespace egret
