// Every cell family egret knows: adding one is one line in models/cell_families.cpp
// (docs/cell_families.md). Declared here and defined there, so that code which builds networks
// from configurations does not compile every family itself: each family's layers (both scalar
// types) are compiled once, in that file.
#pragma once

#include <string>
#include <vector>

#include "sim/cell_family.hpp"

namespace egret {

const std::vector<CellFamily>& cell_families();

// The family registered as `type`; an unknown type is an error listing the known ones.
const CellFamily& find_cell_family(const std::string& type, const std::string& where);

}  // namespace egret
