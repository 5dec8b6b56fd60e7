// The registration of the selective-update RNN layer (models/surnn/surnn_cell.hpp): its
// configuration keys and factory.
#include "models/surnn/surnn_family.hpp"

#include <limits>
#include <memory>

#include "models/rhythmic_gate/rhythmic_gate_settings.hpp"
#include "models/surnn/surnn_cell.hpp"
#include "models/tick/tick_layer.hpp"

namespace egret {
namespace {

template <class Scalar>
std::unique_ptr<Layer<Scalar>> make_surnn(const LayerRecipe& r) {
  using P = SurnnParams<Scalar>;
  const LayerSettings& s = r.settings;
  typename P::RandomInit init;
  init.weight_scale = s.as<Scalar>("init.weight_scale");
  init.recurrent_scale = s.as<Scalar>("init.recurrent_scale");
  read_rhythmic_gate_settings(r, init);
  P p = P::random(r.units, r.inputs, r.seed, init);
  p.dt = s.as<Scalar>("dt");
  p.slope = s.as<Scalar>("surrogate.slope");
  p.validate(r.name);
  return std::make_unique<TickLayer<Scalar, SurnnCell>>(std::make_shared<const P>(std::move(p)));
}

}  // namespace

CellFamily surnn_family() {
  const double inf = std::numeric_limits<double>::infinity();
  CellFamily f;
  f.type = "surnn";
  f.summary = "selective-update RNN (suRNN paper): rhythmic binary gates, tanh RNN, delta events";
  f.keys = {
      {"dt", 1, kMinTimeScaleMs, inf, false, "tick interval [ms]; ticks at k dt, k = 1, 2, ..."},
      {"init.weight_scale", 1, 0, 1e6, false, "W ~ U(-s/sqrt(D), s/sqrt(D))"},
      {"init.recurrent_scale", 1, 0, 1e6, false, "V ~ U(-s/sqrt(N), s/sqrt(N))"},
  };
  for (auto& k : rhythmic_gate_keys()) f.keys.push_back(k);
  f.make_double = &make_surnn<double>;
  f.make_float = &make_surnn<float>;
  f.nir.lacks =
      "NIR has no gate that opens units on a time schedule (suRNN's rhythmic gate) and no tanh "
      "recurrence";
  return f;
}

}  // namespace egret
