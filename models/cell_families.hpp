// Every cell family egret knows. The built-in ones are listed once, in models/cell_families.cmake:
// the build compiles each family's registration and layers (both scalar types) once, in its
// models/<family>/<family>_family.cpp, and generates the registry's list from the same lines
// (docs/cell_families.md). A family defined outside models/ (a plug-in, or a test's) is added at
// run time with register_cell_family.
#pragma once

#include <deque>
#include <string>

#include "sim/cell_family.hpp"

namespace egret {

// The registered families: the built-in ones in the order of models/cell_families.cmake, then
// those added with register_cell_family. References to its elements stay valid.
const std::deque<CellFamily>& cell_families();

// The family registered as `type`; an unknown type is an error listing the known ones.
const CellFamily& find_cell_family(const std::string& type, const std::string& where);

// Adds a family at run time (before networks of that type are built); a type that is already
// registered is an error naming it. Safe to call from any thread.
void register_cell_family(CellFamily family);

}  // namespace egret
