// The registration of the EGRU in EvNN's convention: its configuration keys (EvNN's constructor
// arguments where they apply to one layer on the engine) and factory.
#include "models/evnn_egru/evnn_egru_family.hpp"

#include <cmath>
#include <limits>
#include <memory>

#include "models/evnn_egru/evnn_egru_cell.hpp"
#include "models/tick/tick_layer.hpp"

namespace egret {
namespace {

template <class Scalar>
std::unique_ptr<Layer<Scalar>> make_evnn_egru(const LayerRecipe& r) {
  using P = EvnnEgruParams<Scalar>;
  P p = P::random(r.units, r.inputs, r.seed, r.settings.as<Scalar>("weight_initialization_gain"),
                  r.settings.as<Scalar>("thr_mean"));
  p.dt = r.settings.as<Scalar>("dt");
  const double tau_o = r.settings.as<double>("tau_o");
  // 0 (the default): the trace decays by 0.9 per tick, as EvNN's.
  p.tau_o =
      static_cast<Scalar>(tau_o > 0 ? tau_o : static_cast<double>(p.dt) / std::log(10.0 / 9.0));
  p.dampening = r.settings.as<Scalar>("dampening_factor");
  p.support = r.settings.as<Scalar>("pseudo_derivative_support");
  p.validate(r.name);
  return std::make_unique<TickLayer<Scalar, EvnnEgruCell>>(std::make_shared<const P>(std::move(p)));
}

}  // namespace

CellFamily evnn_egru_family() {
  const double inf = std::numeric_limits<double>::infinity();
  CellFamily f;
  f.type = "evnn_egru";
  f.summary =
      "discrete-time EGRU in EvNN's convention (evnn_pytorch.EGRU); BPTT with its "
      "pseudo-derivative";
  f.keys = {
      {"dt", 1, kMinTimeScaleMs, inf, false, "tick interval [ms]; ticks at k dt, k = 1, 2, ..."},
      zero_means_derived(
          {"tau_o", 0, kMinTimeScaleMs, inf, false,
           "output-trace time constant [ms]; 0: dt / ln(10/9), a decay of 0.9 per tick as EvNN's "
           "trace"}),
      {"dampening_factor", 0.7, 0, 1e6, false, "gamma of H'(v) = gamma max(0, 1 - eps |v|)"},
      {"pseudo_derivative_support", 1, 0, 1e6, false, "eps of H'(v) = gamma max(0, 1 - eps |v|)",
       true},
      {"thr_mean", 0.3, 1e-6, 1 - 1e-6, false, "initial thresholds ~ Beta(3 m / (1 - m), 3)"},
      {"weight_initialization_gain", 1, 0, 1e6, false, "gain of the Xavier-normal kernels"},
  };
  f.make_double = &make_evnn_egru<double>;
  f.make_float = &make_evnn_egru<float>;
  f.nir.lacks = "NIR has no GRU gates and no graded event (EvNN's EGRU sends its value y)";
  return f;
}

}  // namespace egret
