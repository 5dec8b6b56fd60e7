# The cell families egret builds and registers, one line each, in the order the registry lists
# them (docs/cell_families.md). Each names a folder models/<name>/ whose <name>_family.cpp
# defines `CellFamily <name>_family()`, declared in its <name>_family.hpp. This one list is both
# what the build compiles and what the registry holds (CMakeLists.txt generates the registry's
# list from it), so adding a family is its folder plus one line here.
set(EGRET_CELL_FAMILIES
  continuous_egru
  discrete_egru
  evnn_egru
  lif
  bmru
  surnn
  sugru
  su_snn
  ds_gru
  spiking_gated
  cuba_lif
  cuba_li
)
