// The exponential output trace of a layer's events (docs/model.md §1):
//   tau_o do_n/dt = -o_n,   o_n += y at each event of unit n,
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
  OutputTrace(Index units, Scalar tau_o)
      : tau_o_(tau_o), o_(units, 0), integral_(units, 0), t_(units, 0) {}

  // tau_o = +inf: the trace holds (o is the sum of the values, a held output's state).
  void add(Index unit, Scalar value, Scalar t) {
    integral_[unit] = integral_at(unit, t);
    o_[unit] = value_at(unit, t) + value;
    t_[unit] = t;
  }

  Scalar integral_at(Index unit, Scalar t) const {
    if (std::isinf(tau_o_)) return integral_[unit] + o_[unit] * (t - t_[unit]);
    return integral_[unit] + tau_o_ * o_[unit] * (Scalar(1) - std::exp(-(t - t_[unit]) / tau_o_));
  }

  Scalar value_at(Index unit, Scalar t) const {
    return o_[unit] * std::exp(-(t - t_[unit]) / tau_o_);
  }

  std::vector<Scalar> values_at(Scalar t) const {
    std::vector<Scalar> out(o_.size());
    for (std::size_t n = 0; n < o_.size(); ++n) out[n] = value_at(static_cast<Index>(n), t);
    return out;
  }

  Scalar tau_o() const { return tau_o_; }
  Index units() const { return static_cast<Index>(o_.size()); }

 private:
  Scalar tau_o_ = 1;
  std::vector<Scalar> o_;
  std::vector<Scalar> integral_;
  std::vector<Scalar> t_;
};

}  // namespace egret
