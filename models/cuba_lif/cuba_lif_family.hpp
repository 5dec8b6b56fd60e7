// The registration of the spiking current-based layer (NIR's CubaLIF, LIF and IF;
// models/cuba_lif/cuba_cell.hpp): its configuration keys and factory.
#pragma once

#include "sim/cell_family.hpp"

namespace egret {

CellFamily cuba_lif_family();

}  // namespace egret
