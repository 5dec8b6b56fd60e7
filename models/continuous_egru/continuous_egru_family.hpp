// The registration of the continuous-time EGRU (box kernel): its configuration keys and factory.
#pragma once

#include "sim/cell_family.hpp"

namespace egret {

// The family's registration (models/continuous_egru/continuous_egru_family.cpp): type,
// configuration keys, factory.
CellFamily continuous_egru_family();

}  // namespace egret
