// Units between NIR and egret (docs/nir.md, Units): NIR's time constants are in seconds and
// an integrator's r in 1/s; egret's times are in milliseconds everywhere. The conversions an
// export writes come back bit for bit on import when they can: division by 1000 is one-to-one
// on doubles, so the millisecond value whose division gave a stored second value is found
// exactly; multiplication by 1000 is not, so a rate comes back as the nearest value that
// multiplies to the stored one.
#pragma once

#include <cmath>
#include <limits>

namespace egret::nir {

inline double nir_seconds(double ms) {
  return ms / 1000;
}

// The c with c / 1000 == s among the doubles next to s * 1000, else s * 1000.
inline double egret_milliseconds(double s) {
  const double c = s * 1000;
  double lo = c, hi = c;
  for (int i = 0; i < 3; ++i) {
    if (lo / 1000 == s) return lo;
    if (hi / 1000 == s) return hi;
    lo = std::nextafter(lo, -std::numeric_limits<double>::infinity());
    hi = std::nextafter(hi, std::numeric_limits<double>::infinity());
  }
  return c;
}

inline double nir_rate(double per_ms) {
  return per_ms * 1000;
}

// The c with c * 1000 == per_s among the doubles next to per_s / 1000, else per_s / 1000.
inline double egret_rate(double per_s) {
  const double c = per_s / 1000;
  double lo = c, hi = c;
  for (int i = 0; i < 3; ++i) {
    if (lo * 1000 == per_s) return lo;
    if (hi * 1000 == per_s) return hi;
    lo = std::nextafter(lo, -std::numeric_limits<double>::infinity());
    hi = std::nextafter(hi, std::numeric_limits<double>::infinity());
  }
  return c;
}

// The decay of a leaky integrator over one tick, exp(-dt / tau), as egret computes it in double.
inline double tick_decay(double tau_ms, double dt_ms) {
  return std::exp(-dt_ms / tau_ms);
}

// The r with which NIR's LI (tau dv/dt = v_leak - v + r I) integrates an input held over one
// tick to exactly that input at the tick's end: r (1 - exp(-dt / tau)) = 1. egret writes its
// LIF layers and output traces with it (docs/nir.md), and an import that finds this exact value
// takes the factor as exactly 1.
inline double unit_gain_resistance(double tau_ms, double dt_ms) {
  return 1.0 / (1.0 - tick_decay(tau_ms, dt_ms));
}

}  // namespace egret::nir
