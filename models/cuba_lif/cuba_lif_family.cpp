// The registration of the spiking current-based layer (models/cuba_lif/cuba_cell.hpp).
#include "models/cuba_lif/cuba_lif_family.hpp"

#include "models/cuba_lif/cuba_keys.hpp"

namespace egret {

CellFamily cuba_lif_family() {
  CellFamily f;
  f.type = "cuba_lif";
  f.summary =
      "NIR's CubaLIF / LIF / IF on a tick schedule: exact per tick, reset to v_reset; forward "
      "only";
  f.keys = cuba_keys(true);
  f.make_double = &make_cuba_layer<double, true>;
  f.make_float = &make_cuba_layer<float, true>;
  f.nir.neuron = NirDescription::Neuron::kCuba;
  f.nir.spikes = true;
  return f;
}

}  // namespace egret
