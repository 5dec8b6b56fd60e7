// The exponential output trace of a layer's events (docs/model.md §1):
//   tau_o,n do_n/dt = -o_n,   o_n += y at each event of unit n   (tau_o,n: unit n's own),
// and its running integral I_n(t) = int_0^t o_n (for window readouts: the mean of o over
// [t_a, t_b] is (I(t_b) - I(t_a)) / (t_b - t_a), a continuous function of the event times).
// Kept lazily per unit (value and time of its last event, and its own tau_o): O(1) per event,
// O(N) per readout.
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
  OutputTrace(Index units, TimeConstantOf&& tau_o) : unit_(static_cast<std::size_t>(units)) {
    for (Index n = 0; n < units; ++n) unit_[static_cast<std::size_t>(n)].tau = tau_o(n);
  }

  // tau_o = +inf: the trace holds (o is the sum of the values, a held output's state). One
  // exponential per event, shared by the integral and the value.
  void add(Index unit, Scalar value, Scalar t) {
    UnitTrace& u = unit_[static_cast<std::size_t>(unit)];
    if (std::isinf(u.tau)) {
      u.integral = u.integral + u.o * (t - u.t);
      u.o = u.o + value;
    } else {
      const Scalar e = std::exp(-(t - u.t) / u.tau);
      u.integral = u.integral + u.tau * u.o * (Scalar(1) - e);
      u.o = u.o * e + value;
    }
    u.t = t;
  }

  Scalar integral_at(Index unit, Scalar t) const {
    const UnitTrace& u = unit_[static_cast<std::size_t>(unit)];
    if (std::isinf(u.tau)) return u.integral + u.o * (t - u.t);
    return u.integral + u.tau * u.o * (Scalar(1) - std::exp(-(t - u.t) / u.tau));
  }

  Scalar value_at(Index unit, Scalar t) const {
    const UnitTrace& u = unit_[static_cast<std::size_t>(unit)];
    return u.o * std::exp(-(t - u.t) / u.tau);
  }

  std::vector<Scalar> values_at(Scalar t) const {
    std::vector<Scalar> out(unit_.size());
    for (std::size_t n = 0; n < unit_.size(); ++n) out[n] = value_at(static_cast<Index>(n), t);
    return out;
  }

  Scalar tau_o(Index unit) const { return unit_[static_cast<std::size_t>(unit)].tau; }
  Index units() const { return static_cast<Index>(unit_.size()); }

 private:
  // A unit's trace in one place (an event reads and writes one cache line, not four).
  struct UnitTrace {
    Scalar o = 0, integral = 0, t = 0, tau = 1;
  };
  std::vector<UnitTrace> unit_;
};

}  // namespace egret
