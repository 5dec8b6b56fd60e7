// The registration of the test-only toy family (toy_cell.hpp): its keys and factory.
#include "toy_family.hpp"

#include <limits>
#include <memory>

#include "models/tick/tick_layer.hpp"
#include "toy_cell.hpp"

namespace egret {
namespace {

template <class Scalar>
std::unique_ptr<Layer<Scalar>> make_toy(const LayerRecipe& r) {
  using P = ToyParams<Scalar>;
  P p = P::random(r.units, r.inputs, r.seed, r.settings.as<Scalar>("init.weight_scale"));
  p.dt = r.settings.as<Scalar>("dt");
  p.tau = r.settings.as<Scalar>("tau");
  p.tau_o = r.settings.as<Scalar>("tau_o");
  p.validate(r.name);
  return std::make_unique<TickLayer<Scalar, ToyCell>>(std::make_shared<const P>(std::move(p)));
}

}  // namespace

CellFamily toy_family() {
  const double inf = std::numeric_limits<double>::infinity();
  CellFamily f;
  f.type = "toy_integrator";
  f.summary = "test-only leaky integrator with graded events (docs/cell_families.md)";
  f.keys = {
      {"dt", 1, kMinTimeScaleMs, inf, false, "tick interval [ms]"},
      {"tau", 5, kMinTimeScaleMs, inf, false, "integration time constant [ms]"},
      {"tau_o", 5, kMinTimeScaleMs, inf, false, "output-trace time constant [ms]"},
      {"init.weight_scale", 1, 0, 1e6, false, "W ~ U(-s/sqrt(D), s/sqrt(D))"},
  };
  f.make_double = &make_toy<double>;
  f.make_float = &make_toy<float>;
  return f;
}

}  // namespace egret
