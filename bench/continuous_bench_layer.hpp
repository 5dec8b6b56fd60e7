// The continuous EGRU layer the benchmarks share: N units on D inputs, seeded random weights
// (scale 1.5, b_z around 0.5), threshold 0.3, tau_m = tau_o = 10 ms, input and recurrent
// contributions held 5 ms. With 64 Poisson inputs at 50 Hz it fires a few times per unit per
// second, an activity-sparse regime.
#pragma once

#include "models/continuous_egru/continuous_egru_params.hpp"

namespace egret::bench {

template <class Scalar>
ContinuousEgruParams<Scalar> continuous_bench_params(Index units, Index inputs) {
  using P = ContinuousEgruParams<Scalar>;
  typename P::RandomInit init;
  init.weight_scale = Scalar(1.5);
  init.bias_z = Scalar(0.5);
  init.bias_spread = Scalar(0.3);
  init.threshold = Scalar(0.3);
  P p = P::random(units, inputs, 42, init);
  p.tau_m.setConstant(10);
  p.tau_o.setConstant(10);
  p.window_input = 5;
  p.window_recurrent = 5;
  return p;
}

}  // namespace egret::bench
