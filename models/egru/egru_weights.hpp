// The weights every EGRU variant shares (docs/model.md §1 and §4): per gate X in {u, r, z}
// input weights U_X (N x D), recurrent weights V_X (N x N), bias b_X (N), and thresholds theta
// (N, > 0); their validation and a seeded random initialisation.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/shared/parameter_checks.hpp"
#include "sim/numeric_types.hpp"
#include "sim/parameters.hpp"

namespace egret {

template <class ScalarT>
struct EgruWeights {
  using Scalar = ScalarT;
  Matrix<Scalar> U_u, U_r, U_z;
  Matrix<Scalar> V_u, V_r, V_z;
  Vector<Scalar> b_u, b_r, b_z;
  Vector<Scalar> theta;  // thresholds, > 0

  Index units() const { return theta.size(); }
  Index inputs() const { return U_u.cols(); }

  // Zero weights and biases, the given threshold.
  void set_zero(Index units, Index inputs, Scalar threshold) {
    for (auto* m : {&U_u, &U_r, &U_z}) m->setZero(units, inputs);
    for (auto* m : {&V_u, &V_r, &V_z}) m->setZero(units, units);
    for (auto* v : {&b_u, &b_r, &b_z}) v->setZero(units);
    theta.setConstant(units, threshold);
  }

  // Seeded uniform initialisation: U_X ~ U(-s/sqrt(D), s/sqrt(D)), V_X ~ U(-s/sqrt(N), ..),
  // biases ~ b_mean_X + U(-b_spread, b_spread). Deterministic per seed on every platform
  // (std::mt19937_64 plus our own uniform mapping; std distributions are not portable).
  struct RandomInit {
    Scalar weight_scale = 1;
    Scalar bias_u = 0, bias_r = 0, bias_z = Scalar(-0.2);  // z < 0: silent without input
    Scalar bias_spread = Scalar(0.2);
    Scalar threshold = Scalar(0.3);
  };
  void set_random(Index units, Index inputs, std::uint64_t seed, const RandomInit& init) {
    set_zero(units, inputs, init.threshold);
    SeededUniform<Scalar> uniform(seed);
    const Scalar su = init.weight_scale / std::sqrt(static_cast<Scalar>(inputs));
    const Scalar sv = init.weight_scale / std::sqrt(static_cast<Scalar>(units));
    for (auto* m : {&U_u, &U_r, &U_z})
      for (Index j = 0; j < m->cols(); ++j)
        for (Index i = 0; i < m->rows(); ++i) (*m)(i, j) = uniform(-su, su);
    for (auto* m : {&V_u, &V_r, &V_z})
      for (Index j = 0; j < m->cols(); ++j)
        for (Index i = 0; i < m->rows(); ++i) (*m)(i, j) = uniform(-sv, sv);
    const Scalar means[3] = {init.bias_u, init.bias_r, init.bias_z};
    Vector<Scalar>* biases[3] = {&b_u, &b_r, &b_z};
    for (int g = 0; g < 3; ++g)
      for (Index i = 0; i < units; ++i)
        (*biases[g])(i) = means[g] + uniform(-init.bias_spread, init.bias_spread);
  }

  // Sparse connectivity with a fixed fan-out: each input channel keeps
  // max(1, round(input_fraction * N)) of its N receivers, each unit
  // max(1, round(recurrent_fraction * N)), drawn without replacement from their own seeded stream
  // (the weights kept are those of the dense initialisation). The three gates share the
  // connections; the others' weights become zero. A fraction of 1 keeps every connection.
  // With `self_connections` false a unit never counts itself among its receivers (the diagonal
  // of V is then no connection; models/continuous_egru/continuous_egru_params.hpp self_recurrence),
  // and keeps at most N - 1.
  void keep_random_connections(Scalar input_fraction, Scalar recurrent_fraction, std::uint64_t seed,
                               bool self_connections = true) {
    SeededUniform<double> uniform(seed ^ 0x5bd1e995c0ffee11ULL);
    keep_random_rows(U_u, U_r, U_z, input_fraction, uniform, false);
    keep_random_rows(V_u, V_r, V_z, recurrent_fraction, uniform, !self_connections);
  }

  // Magnitude pruning with a fixed fan-out: each sender keeps the max(1, round(fraction * N))
  // receivers of largest |w_u| + |w_r| + |w_z| (ties to the smaller index); the others' weights
  // become zero. Applied to pruned weights again with the same fractions, it changes nothing.
  void keep_largest_connections(Scalar input_fraction, Scalar recurrent_fraction) {
    keep_largest_rows(U_u, U_r, U_z, input_fraction);
    keep_largest_rows(V_u, V_r, V_z, recurrent_fraction);
  }

  // Throws std::invalid_argument naming the first problem found.
  void validate_weights(const std::string& layer) const {
    const Index n = theta.size();
    const Index d = U_u.cols();
    if (n <= 0) throw std::invalid_argument(layer + ": number of units must be positive");
    if (d <= 0) throw std::invalid_argument(layer + ": number of inputs must be positive");
    detail::check_shape(U_u, n, d, layer, "U_u");
    detail::check_shape(U_r, n, d, layer, "U_r");
    detail::check_shape(U_z, n, d, layer, "U_z");
    detail::check_shape(V_u, n, n, layer, "V_u");
    detail::check_shape(V_r, n, n, layer, "V_r");
    detail::check_shape(V_z, n, n, layer, "V_z");
    detail::check_shape(b_u, n, 1, layer, "b_u");
    detail::check_shape(b_r, n, 1, layer, "b_r");
    detail::check_shape(b_z, n, 1, layer, "b_z");
    detail::check_shape(theta, n, 1, layer, "theta");
    detail::check_thresholds(theta, layer, "theta");
  }

 private:
  static Index kept_rows(Scalar fraction, Index n) {
    return std::clamp<Index>(
        static_cast<Index>(std::llround(static_cast<double>(fraction) * static_cast<double>(n))), 1,
        n);
  }
  // Each column k keeps the rows order[0 .. keep) that rank(k, order) puts first (order holds
  // 0 .. n - 1 on entry); the other rows' weights become zero in all three gates.
  template <class Rank>
  static void keep_rows(Matrix<Scalar>& w_u, Matrix<Scalar>& w_r, Matrix<Scalar>& w_z,
                        Scalar fraction, Rank&& rank) {
    if (!(fraction < Scalar(1))) return;
    const Index n = w_u.rows(), keep = kept_rows(fraction, n);
    std::vector<Index> order(static_cast<std::size_t>(n));
    for (Index k = 0; k < w_u.cols(); ++k) {
      for (Index i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
      rank(k, keep, order);
      for (Index i = keep; i < n; ++i) {
        const Index m = order[static_cast<std::size_t>(i)];
        w_u(m, k) = w_r(m, k) = w_z(m, k) = Scalar(0);
      }
    }
  }
  // Largest |w_u| + |w_r| + |w_z| first, ties to the smaller index.
  static void keep_largest_rows(Matrix<Scalar>& w_u, Matrix<Scalar>& w_r, Matrix<Scalar>& w_z,
                                Scalar fraction) {
    keep_rows(w_u, w_r, w_z, fraction, [&](Index k, Index, std::vector<Index>& order) {
      auto size = [&](Index m) {
        return std::abs(w_u(m, k)) + std::abs(w_r(m, k)) + std::abs(w_z(m, k));
      };
      std::stable_sort(order.begin(), order.end(),
                       [&](Index a, Index b) { return size(a) > size(b); });
    });
  }
  // A seeded random choice: a partial Fisher-Yates shuffle puts the kept rows first. With
  // `skip_own_row`, column k's row k is moved out of the draw (to the end, never kept).
  static void keep_random_rows(Matrix<Scalar>& w_u, Matrix<Scalar>& w_r, Matrix<Scalar>& w_z,
                               Scalar fraction, SeededUniform<double>& uniform, bool skip_own_row) {
    keep_rows(w_u, w_r, w_z, fraction, [&](Index k, Index keep, std::vector<Index>& order) {
      auto n = static_cast<Index>(order.size());
      if (skip_own_row && k < n) {
        std::swap(order[static_cast<std::size_t>(k)], order.back());
        keep = std::min(keep, --n);
      }
      for (Index i = 0; i < keep; ++i) {
        const auto j = std::min<Index>(
            n - 1, i + static_cast<Index>(uniform(0, 1) * static_cast<double>(n - i)));
        std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
      }
    });
  }
};

// The ten weight fields with their parameter specs, f(spec, field), in the order of the flat
// training vector: U_u, U_r, U_z, V_u, V_r, V_z, b_u, b_r, b_z, theta (theta > 0 through
// softplus).
template <class W, class F>
void visit_egru_weights(W& w, F&& f) {
  f(ParameterSpec{"U_u"}, w.U_u);
  f(ParameterSpec{"U_r"}, w.U_r);
  f(ParameterSpec{"U_z"}, w.U_z);
  f(ParameterSpec{"V_u"}, w.V_u);
  f(ParameterSpec{"V_r"}, w.V_r);
  f(ParameterSpec{"V_z"}, w.V_z);
  f(ParameterSpec{"b_u"}, w.b_u);
  f(ParameterSpec{"b_r"}, w.b_r);
  f(ParameterSpec{"b_z"}, w.b_z);
  f(ParameterSpec{"theta", Constraint::kSoftplus}, w.theta);
}

}  // namespace egret
