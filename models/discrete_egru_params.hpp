// Parameters of one discrete-time EGRU layer (paper convention, DESIGN section 3).
#pragma once

#include "models/egru_weights.hpp"

namespace egret {

template <class Scalar>
struct DiscreteEgruParams : EgruWeights<Scalar> {
  Scalar dt = 1;      // tick interval [ms]: ticks at t_k = k dt, k = 1, 2, ...
  Scalar tau_o = 10;  // output-trace time constant [ms]

  using RandomInit = typename EgruWeights<Scalar>::RandomInit;

  static DiscreteEgruParams zeros(Index units, Index inputs, Scalar threshold = Scalar(0.5)) {
    DiscreteEgruParams p;
    p.set_zero(units, inputs, threshold);
    return p;
  }
  static DiscreteEgruParams random(Index units, Index inputs, std::uint64_t seed,
                                   const RandomInit& init) {
    DiscreteEgruParams p;
    p.set_random(units, inputs, seed, init);
    return p;
  }

  void validate(const std::string& layer = "discrete_egru layer") const {
    this->validate_weights(layer);
    detail::check_time_scale(dt, layer, "dt", false);
    detail::check_time_scale(tau_o, layer, "tau_o", false);
  }
};

}  // namespace egret
