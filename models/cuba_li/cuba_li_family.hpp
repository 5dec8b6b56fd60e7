// The registration of the graded current-based layer (NIR's CubaLI, LI and Integrator;
// models/cuba_lif/cuba_cell.hpp): its configuration keys and factory.
#pragma once

#include "sim/cell_family.hpp"

namespace egret {

CellFamily cuba_li_family();

}  // namespace egret
