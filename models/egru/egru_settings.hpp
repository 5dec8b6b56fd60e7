// The configuration keys every EGRU family shares (threshold and the random initialisation of
// models/egru/egru_weights.hpp), and the initialisation they describe.
#pragma once

#include <vector>

#include "models/egru/egru_weights.hpp"
#include "sim/cell_family.hpp"

namespace egret {

inline std::vector<SettingKey> egru_weight_keys() {
  return {
      {"threshold", 0.3, kMinThreshold, 1e6, false, "initial threshold theta of every unit"},
      {"init.weight_scale", 1, 0, 1e6, false,
       "U ~ U(-s/sqrt(D), s/sqrt(D)), V ~ U(-s/sqrt(N), s/sqrt(N))"},
      {"init.bias_u", 0, -1e6, 1e6, false, "mean of b_u"},
      {"init.bias_r", 0, -1e6, 1e6, false, "mean of b_r"},
      {"init.bias_z", -0.2, -1e6, 1e6, false,
       "mean of b_z (below 0: no unit charges to its threshold without input)"},
      {"init.bias_spread", 0.2, 0, 1e6, false, "biases ~ mean + U(-spread, spread)"},
  };
}

template <class Scalar>
typename EgruWeights<Scalar>::RandomInit egru_random_init(const LayerSettings& s) {
  typename EgruWeights<Scalar>::RandomInit init;
  init.weight_scale = s.as<Scalar>("init.weight_scale");
  init.bias_u = s.as<Scalar>("init.bias_u");
  init.bias_r = s.as<Scalar>("init.bias_r");
  init.bias_z = s.as<Scalar>("init.bias_z");
  init.bias_spread = s.as<Scalar>("init.bias_spread");
  init.threshold = s.as<Scalar>("threshold");
  return init;
}

}  // namespace egret
