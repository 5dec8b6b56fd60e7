// The registration of the LIF layer with soft reset (models/lif/lif_cell.hpp): its configuration
// keys and factory.
#include "models/lif/lif_family.hpp"

#include <limits>
#include <memory>
#include <vector>

#include "models/lif/lif_cell.hpp"
#include "models/tick/tick_layer.hpp"

namespace egret {
namespace {
template <class Scalar>
std::unique_ptr<Layer<Scalar>> make_lif(const LayerRecipe& r) {
  using P = LifParams<Scalar>;
  typename P::RandomInit init;
  read_lif_init(r.settings, init);
  P p = P::random(r.units, r.inputs, r.seed, init);
  read_lif_settings(r.settings, p);
  p.validate(r.name);
  return std::make_unique<TickLayer<Scalar, LifCell>>(std::make_shared<const P>(std::move(p)));
}

}  // namespace

CellFamily lif_family() {
  CellFamily f;
  f.type = "lif";
  f.summary = "LIF with soft reset on a tick schedule; binary spikes; arctan surrogate";
  f.keys = lif_keys();
  f.make_double = &make_lif<double>;
  f.make_float = &make_lif<float>;
  f.nir.neuron = NirDescription::Neuron::kLif;
  f.nir.spikes = true;
  return f;
}

}  // namespace egret
