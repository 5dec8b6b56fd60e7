// The registration of the selective-update spiking layer (models/su_snn/su_snn_cell.hpp): its
// configuration keys and factory.
#pragma once

#include "sim/cell_family.hpp"

namespace egret {

// The family's registration (models/su_snn/su_snn_family.cpp): type, configuration keys, factory.
CellFamily su_snn_family();

}  // namespace egret
