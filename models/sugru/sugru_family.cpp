// The registration of the selective-update GRU layer (models/sugru/sugru_cell.hpp): its
// configuration keys and factory.
#include "models/sugru/sugru_family.hpp"

#include <limits>
#include <memory>

#include "models/rhythmic_gate/rhythmic_gate_settings.hpp"
#include "models/sugru/sugru_cell.hpp"
#include "models/tick/tick_layer.hpp"

namespace egret {
namespace {

template <class Scalar>
std::unique_ptr<Layer<Scalar>> make_sugru(const LayerRecipe& r) {
  using P = SugruParams<Scalar>;
  const LayerSettings& s = r.settings;
  typename P::RandomInit init;
  init.weight_scale = s.as<Scalar>("init.weight_scale");
  init.recurrent_scale = s.as<Scalar>("init.recurrent_scale");
  init.bias_z = s.as<Scalar>("init.bias_z");
  read_rhythmic_gate_settings(r, init);
  P p = P::random(r.units, r.inputs, r.seed, init);
  p.dt = s.as<Scalar>("dt");
  p.slope = s.as<Scalar>("surrogate.slope");
  p.validate(r.name);
  return std::make_unique<TickLayer<Scalar, SugruCell>>(std::make_shared<const P>(std::move(p)));
}

}  // namespace

CellFamily sugru_family() {
  const double inf = std::numeric_limits<double>::infinity();
  CellFamily f;
  f.type = "sugru";
  f.summary = "selective-update GRU (suRNN paper): rhythmic binary gates, GRU step, delta events";
  f.keys = {
      {"dt", 1, kMinTimeScaleMs, inf, false, "tick interval [ms]; ticks at k dt, k = 1, 2, ..."},
      {"init.weight_scale", 1, 0, 1e6, false, "W_X ~ U(-s/sqrt(D), s/sqrt(D))"},
      {"init.recurrent_scale", 1, 0, 1e6, false, "V_X ~ U(-s/sqrt(N), s/sqrt(N))"},
      {"init.bias_z", 0, -1e6, 1e6, false, "initial b_z (positive: the GRU keeps more of h)"},
  };
  for (auto& k : rhythmic_gate_keys()) f.keys.push_back(k);
  f.make_double = &make_sugru<double>;
  f.make_float = &make_sugru<float>;
  f.nir.lacks =
      "NIR has no gate that opens units on a time schedule (the rhythmic gate) and no GRU "
      "gates";
  return f;
}

}  // namespace egret
