// Every cell family egret knows: adding one is one line in models/cell_families.cpp
// (docs/cell_families.md). Each family's registration and layers (both scalar types) are compiled
// once, in its models/<family>_family.cpp, so code that builds networks from configurations does
// not compile every family itself.
#pragma once

#include <string>
#include <vector>

#include "sim/cell_family.hpp"

namespace egret {

const std::vector<CellFamily>& cell_families();

// The family registered as `type`; an unknown type is an error listing the known ones.
const CellFamily& find_cell_family(const std::string& type, const std::string& where);

}  // namespace egret
