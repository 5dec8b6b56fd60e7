// The gate nonlinearities every EGRU cell shares: u = sigmoid(a_u), r = sigmoid(a_r),
// z = tanh(a_z), in a scalar form and an array form. Written with exp only, so Eigen vectorises
// the array form (it has SIMD exp for float and double, but not tanh for double):
// tanh(a) = 1 - 2 / (1 + exp(2a)).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>

namespace egret {

template <class Scalar>
struct EgruGates {
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;

  static Scalar sigmoid(Scalar a) { return Scalar(1) / (Scalar(1) + std::exp(-a)); }
  static Scalar update_gate(Scalar a_u) { return sigmoid(a_u); }
  static Scalar reset_gate(Scalar a_r) { return sigmoid(a_r); }
  static Scalar candidate(Scalar a_z) {
    return Scalar(1) - Scalar(2) / (Scalar(1) + std::exp(Scalar(2) * a_z));
  }

  // k rounded up to whole SIMD packets of Scalar: the sparse layer's gathered batches
  // (box_sparse_units.hpp, box_sparse_replay.hpp) run their array forms
  // over whole packets, so that Eigen does not finish them with scalar exp and divisions.
  static Eigen::Index whole_packets(Eigen::Index k) {
    constexpr Eigen::Index lanes = Eigen::internal::packet_traits<Scalar>::size;
    return (k + lanes - 1) / lanes * lanes;
  }

  // Derivatives in terms of the gate values: du/da_u = u (1 - u), dz/da_z = 1 - z^2.
  static Scalar sigmoid_derivative(Scalar s) { return s * (Scalar(1) - s); }
  static Scalar candidate_derivative(Scalar z) { return Scalar(1) - z * z; }

  // u = sigmoid(a_u), z = tanh(a_z) for all units (a_u, a_z: arrays or array expressions).
  // u, z: arrays or writable segments of arrays (the sparse layer refreshes a gathered few).
  // The exponents are clamped to [-kFlat, kFlat] where that leaves every result's bits as they
  // are: below -kFlat, exp(x) is under a quarter ulp of 1 and 1 + exp(x) rounds to 1; above kFlat
  // (z only), 2 / (1 + exp(x)) is too and z rounds to 1. Unclamped, exponents near -87 (float)
  // give subnormal exponentials, and z's quotient is subnormal for exponents near +88, each a
  // microcode assist on Intel CPUs; a busy input drives pre-activations to +-hundreds
  // (docs/speed.md, "Subnormal arithmetic"). u itself is subnormal for a_u near -88, and stays so.
  // NaN passes through the clamps (Eigen's max/min keep their first argument's NaN).
  template <class AU, class AZ, class OU, class OZ>
  static void gates(const AU& a_u, const AZ& a_z, OU&& u, OZ&& z) {
    u = (Scalar(1) + (-a_u).max(-kFlat).exp()).inverse();
    z = Scalar(1) -
        Scalar(2) * (Scalar(1) + (Scalar(2) * a_z).max(-kFlat).min(kFlat).exp()).inverse();
  }
  // 20 in float, 40 in double: exp(-kFlat) < eps / 8.
  static constexpr Scalar kFlat = std::numeric_limits<Scalar>::digits > 24 ? 40 : 20;
};

}  // namespace egret
