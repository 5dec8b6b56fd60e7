// The registration of the graded current-based layer (models/cuba_lif/cuba_cell.hpp): the
// units send their membrane potential as changes (a held output).
#include "models/cuba_li/cuba_li_family.hpp"

#include "models/cuba_lif/cuba_keys.hpp"

namespace egret {

CellFamily cuba_li_family() {
  CellFamily f;
  f.type = "cuba_li";
  f.summary =
      "NIR's CubaLI / LI / Integrator on a tick schedule: exact per tick, sends v (delta "
      "events); forward only";
  f.keys = cuba_keys(false);
  f.make_double = &make_cuba_layer<double, false>;
  f.make_float = &make_cuba_layer<float, false>;
  f.nir.neuron = NirDescription::Neuron::kCuba;
  return f;
}

}  // namespace egret
