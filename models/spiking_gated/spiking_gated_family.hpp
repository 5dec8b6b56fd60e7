// The registration of the spiking-gated linear recurrent layer
// (models/spiking_gated/spiking_gated_cell.hpp): its configuration keys and factory.
#pragma once

#include "sim/cell_family.hpp"

namespace egret {

// The family's registration (models/spiking_gated/spiking_gated_family.cpp): type, configuration
// keys, factory.
CellFamily spiking_gated_family();

}  // namespace egret
