// The registration of the selective-update spiking layer (models/su_snn/su_snn_cell.hpp): its
// configuration keys and factory.
#include "models/su_snn/su_snn_family.hpp"

#include <memory>

#include "models/lif/lif_family.hpp"
#include "models/rhythmic_gate/rhythmic_gate_settings.hpp"
#include "models/su_snn/su_snn_cell.hpp"
#include "models/tick/tick_layer.hpp"

namespace egret {
namespace {

template <class Scalar>
std::unique_ptr<Layer<Scalar>> make_su_snn(const LayerRecipe& r) {
  using P = SuSnnParams<Scalar>;
  typename P::RandomInit init;
  read_lif_init(r.settings, init);
  read_rhythmic_gate_settings(r, init);
  P p = P::random(r.units, r.inputs, r.seed, init);
  read_lif_settings(r.settings, p);
  p.slope = r.settings.as<Scalar>("surrogate.slope");
  p.validate(r.name);
  return std::make_unique<TickLayer<Scalar, SuSnnCell>>(std::make_shared<const P>(std::move(p)));
}

// LIF's keys and the rhythmic gate's.

}  // namespace

CellFamily su_snn_family() {
  CellFamily f;
  f.type = "su_snn";
  f.summary = "selective-update spiking layer (suRNN paper): rhythmic gates over LIF integration";
  f.keys = lif_keys();
  for (auto& k : rhythmic_gate_keys()) f.keys.push_back(k);
  f.make_double = &make_su_snn<double>;
  f.make_float = &make_su_snn<float>;
  return f;
}

}  // namespace egret
