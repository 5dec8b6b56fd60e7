// The registration of the test-only toy family (toy_cell.hpp): type "toy_integrator", its
// configuration keys and factory. Registered at run time by its test, with
// egret::register_cell_family(egret::toy_family()).
#pragma once

#include "sim/cell_family.hpp"

namespace egret {

CellFamily toy_family();

}  // namespace egret
