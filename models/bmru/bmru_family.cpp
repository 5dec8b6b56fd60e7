// The registration of the BMRU layer (models/bmru/bmru_cell.hpp): its configuration keys and
// factory.
#include "models/bmru/bmru_family.hpp"

#include <limits>
#include <memory>

#include "models/bmru/bmru_cell.hpp"
#include "models/tick/tick_layer.hpp"

namespace egret {
namespace {

template <class Scalar>
std::unique_ptr<Layer<Scalar>> make_bmru(const LayerRecipe& r) {
  using P = BmruParams<Scalar>;
  const LayerSettings& s = r.settings;
  typename P::RandomInit init;
  init.weight_scale = s.as<Scalar>("init.weight_scale");
  init.beta_scale = s.as<Scalar>("init.beta_scale");
  init.bias_beta = s.as<Scalar>("init.bias_beta");
  init.bias_spread = s.as<Scalar>("init.bias_spread");
  init.alpha = s.as<Scalar>("init.alpha");
  P p = P::random(r.units, r.inputs, r.seed, init);
  p.dt = s.as<Scalar>("dt");
  p.alpha_s = s.as<Scalar>("surrogate.alpha");
  p.validate(r.name);
  return std::make_unique<TickLayer<Scalar, BmruCell>>(std::make_shared<const P>(std::move(p)));
}

}  // namespace

CellFamily bmru_family() {
  const double inf = std::numeric_limits<double>::infinity();
  CellFamily f;
  f.type = "bmru";
  f.summary = "bistable memory recurrent unit (BMRU paper); delta events; arctan surrogate";
  f.keys = {
      {"dt", 1, kMinTimeScaleMs, inf, false, "tick interval [ms]; ticks at k dt, k = 1, 2, ..."},
      {"surrogate.alpha", 1, 0, 1e6, false,
       "alpha_s of H' ~ 1 / (1 + (alpha_s pi u)^2); S' ~ twice that", true},
      {"init.weight_scale", 1, 0, 1e6, false, "W_x ~ U(-s/sqrt(D), s/sqrt(D))"},
      {"init.beta_scale", 1, 0, 1e6, false, "W_beta ~ U(-s/sqrt(D), s/sqrt(D))"},
      {"init.bias_beta", 0.5, -1e6, 1e6, false, "mean of b_beta (the bistable width at x = 0)"},
      {"init.bias_spread", 0.1, 0, 1e6, false, "b_x ~ U(-spread, spread), b_beta ~ mean + same"},
      {"init.alpha", 1, -1e6, 1e6, false, "initial alpha (|h| after a switch) of every unit"},
  };
  f.make_double = &make_bmru<double>;
  f.make_float = &make_bmru<float>;
  f.nir.lacks =
      "NIR has no bistable unit: BMRU's state switches to +-alpha when |W_x x + b_x| exceeds "
      "an input-dependent threshold |W_beta x + b_beta|, and it sends changes of a real value";
  return f;
}

}  // namespace egret
