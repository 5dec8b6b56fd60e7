// The rhythmic gate generator of the selective-update families (suRNN paper Eq. 6):
//   a_{t,i} = b_i + sum_k alpha_ik sin(omega_k t + phi_ik),   g_{t,i} = H(a_{t,i})
// with K frequencies omega shared by the layer and per-unit amplitudes, phases and biases, all
// trained. t is the tick's time in ms (omega in rad/ms). The schedule does not depend on the
// input, so it is known before a sequence runs. Backward: the sigmoid-derivative surrogate in
// place of H' (models/shared/surrogates.hpp), and the exact derivatives of a.
#pragma once

#include <cmath>
#include <cstdint>

#include "models/shared/parameter_checks.hpp"
#include "sim/layer_adjoint.hpp"
#include "sim/numeric_types.hpp"

namespace egret {

template <class Scalar>
struct RhythmicGate {
  Vector<Scalar> b;           // g_b (N)
  Matrix<Scalar> alpha, phi;  // g_alpha, g_phi (N x K)
  Vector<Scalar> omega;       // g_omega (K) [rad/ms]

  Index units() const { return b.size(); }
  Index frequencies() const { return omega.size(); }

  // a_t for every unit.
  void activation(Scalar t, Vector<Scalar>& a) const {
    a = b;
    for (Index k = 0; k < frequencies(); ++k)
      a.array() += alpha.col(k).array() * (omega[k] * t + phi.col(k).array()).sin();
  }

  // Adds dL/da_t (per unit) to the gradients of b (N x 1), alpha, phi (N x K), omega (K x 1).
  template <class DA>
  void add_gradient(Scalar t, const DA& da, Matrix<Scalar>& db, Matrix<Scalar>& dalpha,
                    Matrix<Scalar>& dphi, Matrix<Scalar>& domega) const {
    db.col(0) += da.matrix();
    for (Index k = 0; k < frequencies(); ++k) {
      const auto arg = (omega[k] * t + phi.col(k).array()).eval();
      dalpha.col(k).array() += da * arg.sin();
      const auto c = (da * alpha.col(k).array() * arg.cos()).eval();
      dphi.col(k).array() += c;
      domega(k, 0) += t * c.sum();
    }
  }

  // Frequencies on a logarithmic grid of periods [period_min, period_max] ms; phases uniform in
  // [0, 2 pi); amplitudes uniform in [-amplitude, amplitude]; biases `bias`.
  void set_random(Index units, Index k, Scalar period_min, Scalar period_max, Scalar amplitude,
                  Scalar bias, SeededUniform<Scalar>& uniform) {
    const Scalar two_pi = Scalar(2 * M_PI);
    omega.resize(k);
    for (Index j = 0; j < k; ++j) {
      const Scalar f = k > 1 ? static_cast<Scalar>(j) / static_cast<Scalar>(k - 1) : Scalar(0);
      omega[j] = two_pi / (period_min * std::pow(period_max / period_min, f));
    }
    alpha.resize(units, k);
    phi.resize(units, k);
    uniform.fill(alpha, amplitude);
    for (Index j = 0; j < k; ++j)
      for (Index i = 0; i < units; ++i) phi(i, j) = uniform(Scalar(0), two_pi);
    b.setConstant(units, bias);
  }

  void validate(const std::string& layer) const {
    const Index n = units(), k = frequencies();
    if (k < 1) throw std::invalid_argument(layer + ": the gate needs at least one frequency");
    detail::check_shape(b, n, 1, layer, "g_b");
    detail::check_shape(alpha, n, k, layer, "g_alpha");
    detail::check_shape(phi, n, k, layer, "g_phi");
    detail::check_shape(omega, k, 1, layer, "g_omega");
  }
};

// The gate's activation per tick at the cost of 2K sines instead of N K: with
// P = g_alpha * cos(g_phi) and Q = g_alpha * sin(g_phi) (element-wise, N x K),
//   a_t = g_b + P sin(g_omega t) + Q cos(g_omega t)
// equals RhythmicGate::activation up to rounding. A cell builds one from its (fixed) parameters.
template <class Scalar>
class GateSchedule {
 public:
  explicit GateSchedule(const RhythmicGate<Scalar>& gate)
      : b_(gate.b),
        P_((gate.alpha.array() * gate.phi.array().cos()).matrix()),
        Q_((gate.alpha.array() * gate.phi.array().sin()).matrix()),
        omega_(gate.omega) {}

  void activation(Scalar t, Vector<Scalar>& a) {
    sin_ = (omega_.array() * t).sin().matrix();
    cos_ = (omega_.array() * t).cos().matrix();
    a = b_;
    a.noalias() += P_ * sin_;
    a.noalias() += Q_ * cos_;
  }

 private:
  Vector<Scalar> b_;
  Matrix<Scalar> P_, Q_;
  Vector<Scalar> omega_, sin_, cos_;
};

}  // namespace egret
