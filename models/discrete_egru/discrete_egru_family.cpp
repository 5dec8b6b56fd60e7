// The registration of the discrete-time EGRU (paper convention): its configuration keys and
// factory.
#include "models/discrete_egru/discrete_egru_family.hpp"

#include <limits>
#include <memory>

#include "models/discrete_egru/discrete_egru_layer.hpp"
#include "models/egru/egru_settings.hpp"

namespace egret {
namespace {

template <class Scalar>
std::unique_ptr<Layer<Scalar>> make_discrete_egru(const LayerRecipe& r) {
  using P = DiscreteEgruParams<Scalar>;
  P p = P::random(r.units, r.inputs, r.seed, egru_random_init<Scalar>(r.settings));
  p.dt = r.settings.as<Scalar>("dt");
  p.tau_o.setConstant(r.units, r.settings.as<Scalar>("tau_o"));
  p.dampening = r.settings.as<Scalar>("pseudo_derivative.dampening");
  p.half_width = r.settings.as<Scalar>("pseudo_derivative.half_width");
  p.validate(r.name);
  return std::make_unique<DiscreteEgruLayer<Scalar>>(std::make_shared<const P>(std::move(p)));
}

}  // namespace

CellFamily discrete_egru_family() {
  const double inf = std::numeric_limits<double>::infinity();
  CellFamily f;
  f.type = "discrete_egru";
  f.summary = "discrete-time EGRU on a tick schedule; BPTT with a pseudo-derivative";
  f.keys = {
      {"dt", 1, kMinTimeScaleMs, inf, false, "tick interval [ms]; ticks at k dt, k = 1, 2, ..."},
      {"tau_o", 10, kMinTimeScaleMs, inf, false, "output-trace time constant [ms]"},
      {"pseudo_derivative.dampening", 0.3, 0, 1e6, false,
       "gamma of H'(v) = gamma max(0, 1 - |v| / eps)", true},
      {"pseudo_derivative.half_width", 0.5, 0, 1e6, false,
       "eps of H'(v) = gamma max(0, 1 - |v| / eps)", true},
  };
  for (auto& k : egru_weight_keys()) f.keys.push_back(k);
  f.make_double = &make_discrete_egru<double>;
  f.make_float = &make_discrete_egru<float>;
  f.nir.lacks =
      "NIR has no GRU gates (sigmoid and tanh of the inputs multiplying the state) and no "
      "graded event (the EGRU sends its state's value)";
  return f;
}

}  // namespace egret
