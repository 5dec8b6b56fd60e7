// Surrogate derivatives of the Heaviside step H(u) used by the surrogate-gradient families: the
// forward pass uses H itself, the backward pass this function in place of H'(u).
#pragma once

#include <cmath>

namespace egret {

// The arctan surrogate 1 / (1 + (alpha_s pi u)^2) (spiking-gate paper section 4.1, BMRU paper Eq.
// 12); 1 at u = 0, never exactly zero, so every (unit, tick) pair passes an adjoint.
template <class Scalar>
Scalar arctan_surrogate(Scalar u, Scalar alpha_s) {
  const Scalar a = alpha_s * static_cast<Scalar>(M_PI) * u;
  return Scalar(1) / (Scalar(1) + a * a);
}

}  // namespace egret

namespace egret {

// The sigmoid-derivative surrogate of suRNN paper (its straight-through gate): beta s (1 - s) with
// s = sigmoid(beta u); 1/4 beta at u = 0, never exactly zero.
template <class Scalar>
Scalar sigmoid_surrogate(Scalar u, Scalar beta) {
  const Scalar s = Scalar(1) / (Scalar(1) + std::exp(-beta * u));
  return beta * s * (Scalar(1) - s);
}

}  // namespace egret

namespace egret {

// S(v): -1, 0 or 1 (S(0) = 0), as torch.sign; BMRU's output sign and the derivative of |v|.
template <class Scalar>
Scalar sign_of(Scalar v) {
  return Scalar((v > 0) - (v < 0));
}

}  // namespace egret
