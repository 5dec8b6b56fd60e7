// The exponential output trace of a layer's events (docs/model.md §1):
//   tau_o,n do_n/dt = -o_n,   o_n += y at each event of unit n   (tau_o,n: unit n's own),
// and its running integral I_n(t) = int_0^t o_n (for window readouts: the mean of o over
// [t_a, t_b] is (I(t_b) - I(t_a)) / (t_b - t_a), a continuous function of the event times).
// Kept lazily per unit (value and time of its last event): O(1) per event, O(N) per readout.
#pragma once

#include <cmath>
#include <vector>

#include "events/event.hpp"

namespace egret {

template <class Scalar>
class OutputTrace {
 public:
  OutputTrace() = default;
  template <class TimeConstantOf>  // Scalar(Index unit)
  OutputTrace(Index units, TimeConstantOf&& tau_o)
      : tau_o_(static_cast<std::size_t>(units)), o_(units, 0), integral_(units, 0), t_(units, 0) {
    for (Index n = 0; n < units; ++n) tau_o_[static_cast<std::size_t>(n)] = tau_o(n);
  }

  // tau_o = +inf: the trace holds (o is the sum of the values, a held output's state).
  void add(Index unit, Scalar value, Scalar t) {
    integral_[unit] = integral_at(unit, t);
    o_[unit] = value_at(unit, t) + value;
    t_[unit] = t;
  }

  Scalar integral_at(Index unit, Scalar t) const {
    const Scalar tau = tau_o_[unit];
    if (std::isinf(tau)) return integral_[unit] + o_[unit] * (t - t_[unit]);
    return integral_[unit] + tau * o_[unit] * (Scalar(1) - std::exp(-(t - t_[unit]) / tau));
  }

  Scalar value_at(Index unit, Scalar t) const {
    return o_[unit] * std::exp(-(t - t_[unit]) / tau_o_[unit]);
  }

  std::vector<Scalar> values_at(Scalar t) const {
    std::vector<Scalar> out(o_.size());
    for (std::size_t n = 0; n < o_.size(); ++n) out[n] = value_at(static_cast<Index>(n), t);
    return out;
  }

  Scalar tau_o(Index unit) const { return tau_o_[unit]; }
  Index units() const { return static_cast<Index>(o_.size()); }

 private:
  std::vector<Scalar> tau_o_;
  std::vector<Scalar> o_;
  std::vector<Scalar> integral_;
  std::vector<Scalar> t_;
};

}  // namespace egret
