// The registration of the dynamic-sparse GRU layer (models/ds_gru/ds_gru_cell.hpp): its
// configuration keys, the budgets they resolve to, and the factory.
#include "models/ds_gru/ds_gru_family.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "models/ds_gru/ds_gru_cell.hpp"
#include "models/tick/tick_layer.hpp"

namespace egret {
namespace {

namespace ds_gru_settings {

// A count (its key is a whole_number_key: checked with the configuration).
Index whole_setting(const LayerRecipe& r, const std::string& key) {
  return static_cast<Index>(r.settings.get(key));
}

// Channels kept per tick: router.<side>_k if positive (at most `channels`), else
// ceil((1 - sparsity) channels), the seed's k = ceil(rho H) with keep ratio rho = 1 - s. The
// 1e-9 keeps a product such as 0.3 * 10 = 3.0000000000000004 from rounding up to 4.
Index ds_gru_budget(const LayerRecipe& r, const std::string& side, Index channels,
                    const char* what) {
  const std::string k_key = "router." + side + "_k", s_key = "router." + side + "_sparsity";
  const Index k = whole_setting(r, k_key);
  if (k > channels) {
    std::ostringstream os;
    os << r.name << "." << k_key << ": " << k << " exceeds the layer's " << channels << " " << what
       << " (a top-k keeps at most all of them)";
    throw std::invalid_argument(os.str());
  }
  if (k > 0) return k;
  const double sparsity = r.settings.get(s_key);
  if (!(sparsity < 1))
    throw std::invalid_argument(r.name + "." + s_key +
                                ": 1 would keep no channel; it must be below 1");
  const double kept = std::ceil((1 - sparsity) * static_cast<double>(channels) - 1e-9);
  return std::max<Index>(1, static_cast<Index>(kept));
}

}  // namespace ds_gru_settings

template <class Scalar>
std::unique_ptr<Layer<Scalar>> make_ds_gru(const LayerRecipe& r) {
  using P = DsGruParams<Scalar>;
  const LayerSettings& s = r.settings;
  typename P::RandomInit init;
  init.weight_scale = s.as<Scalar>("init.weight_scale");
  init.recurrent_scale = s.as<Scalar>("init.recurrent_scale");
  init.bias_z = s.as<Scalar>("init.bias_z");
  init.router_scale = s.as<Scalar>("init.router_scale");
  init.router_rank = ds_gru_settings::whole_setting(r, "router.rank");
  init.hidden_k = ds_gru_settings::ds_gru_budget(r, "hidden", r.units, "units");
  init.input_k = ds_gru_settings::ds_gru_budget(r, "input", r.inputs, "input channels");
  P p = P::random(r.units, r.inputs, r.seed, init);
  p.dt = s.as<Scalar>("dt");
  p.straight_through = ds_gru_settings::whole_setting(r, "router.straight_through") == 1;
  p.validate(r.name);
  return std::make_unique<TickLayer<Scalar, DsGruCell>>(std::make_shared<const P>(std::move(p)));
}

}  // namespace

CellFamily ds_gru_family() {
  const double inf = std::numeric_limits<double>::infinity();
  CellFamily f;
  f.type = "ds_gru";
  f.summary =
      "dynamic-sparse GRU (DS-RNN paper): a router keeps top-k inputs and units; delta events";
  f.keys = {
      {"dt", 1, kMinTimeScaleMs, inf, false, "tick interval [ms]; ticks at k dt, k = 1, 2, ..."},
      {"router.hidden_sparsity", 0.5, 0, 1, false,
       "share of units dropped per tick: hidden_k = ceil((1 - s) units)"},
      {"router.input_sparsity", 0.5, 0, 1, false,
       "share of input channels dropped per tick: input_k = ceil((1 - s) inputs)"},
      whole_number_key({"router.hidden_k", 0, 0, 1e9, false,
                        "units kept per tick (0: from router.hidden_sparsity)"}),
      whole_number_key({"router.input_k", 0, 0, 1e9, false,
                        "input channels kept per tick (0: from router.input_sparsity)"}),
      whole_number_key(
          {"router.rank", 4, 1, 1e6, false, "R, the size of the router's context c = W_proj x"}),
      whole_number_key(
          {"router.straight_through", 1, 0, 1, false,
           "1: top-k is the identity backward (every channel's sigmoid); 0: kept channels only"}),
      {"init.weight_scale", 1, 0, 1e6, false, "W_X ~ U(-s/sqrt(D), s/sqrt(D))"},
      {"init.recurrent_scale", 1, 0, 1e6, false, "U_X ~ U(-s/sqrt(N), s/sqrt(N))"},
      {"init.bias_z", 0, -1e6, 1e6, false, "initial b_z (negative: h_k keeps more of h~)"},
      {"init.router_scale", 1, 0, 1e6, false,
       "W_proj ~ U(-s/sqrt(D), s/sqrt(D)); W_ah, b_ah, W_ax, b_ax ~ U(-s/sqrt(R), s/sqrt(R))"},
  };
  f.make_double = &make_ds_gru<double>;
  f.make_float = &make_ds_gru<float>;
  f.nir.lacks =
      "NIR has no input-dependent routing (the DS-GRU's top-k masks of its hidden and input "
      "channels) and no GRU gates";
  return f;
}

}  // namespace egret
