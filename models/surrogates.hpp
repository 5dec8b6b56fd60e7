// Surrogate derivatives of the Heaviside step H(u) used by the surrogate-gradient families: the
// forward pass uses H itself, the backward pass this function in place of H'(u).
#pragma once

#include <cmath>

namespace egret {

// The arctan surrogate 1 / (1 + (alpha_s pi u)^2) (seed 002 section 4.1, seed 004 Eq. 12); 1 at
// u = 0, never exactly zero, so every (unit, tick) pair passes an adjoint.
template <class Scalar>
Scalar arctan_surrogate(Scalar u, Scalar alpha_s) {
  const Scalar a = alpha_s * static_cast<Scalar>(M_PI) * u;
  return Scalar(1) / (Scalar(1) + a * a);
}

}  // namespace egret
