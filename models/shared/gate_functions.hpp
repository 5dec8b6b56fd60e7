// The gate nonlinearities of the tick families on whole arrays, vectorised by Eigen's packet math
// (SSE, AVX or AVX-512, whichever the build targets): logistic(x) = 1 / (1 + e^-x) and tanh(x).
//
// Every element goes through the same packet code, the last partial packet too (padded), so
// an element's result does not depend on where it sits in the array: a layer that computes
// the gates of all its units (a run with a tape) and one that gathers only its open units get
// bitwise the same values. (Eigen's own array.tanh() takes libm for the elements after the last
// whole packet.)
//
// Accuracy, float, against libm in double, on [-30, 30] step 2^-12 and the special values
// (tests/test_gate_functions.cpp; AVX-512 and SSE builds): logistic within 2e-7 absolute and
// 7e-7 relative for x >= -2 (Eigen fits logistic - 1/2: the relative error grows toward small
// values, up to 1e-3 near x = -9); tanh within 4e-7 absolute; logistic(+inf) = 1, logistic(-inf)
// = 0 (a denormal without AVX), tanh(+-inf) = +-1, NaN stays NaN. In double, Eigen's packet exp
// (logistic) is within 4 ulp of libm; tanh is libm's.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

namespace egret {

namespace detail {

// Eigen's packet types carry alignment attributes that GCC drops, with a warning, when they are
// template arguments (Eigen silences the same warning in its own headers).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"

// f applied packet by packet to in[0, n) -> out[0, n) (in == out allowed).
template <class Scalar, class F>
void for_each_packet(const Scalar* in, Scalar* out, Eigen::Index n, F f) {
  namespace ei = Eigen::internal;
  using Packet = typename ei::packet_traits<Scalar>::type;
  constexpr Eigen::Index kSize = ei::unpacket_traits<Packet>::size;
  Eigen::Index i = 0;
  for (; i + kSize <= n; i += kSize) ei::pstoreu(out + i, f(ei::ploadu<Packet>(in + i)));
  if (i == n) return;
  Scalar tail[kSize] = {};
  std::copy(in + i, in + n, tail);
  ei::pstoreu(tail, f(ei::ploadu<Packet>(tail)));
  std::copy(tail, tail + (n - i), out + i);
}

#pragma GCC diagnostic pop

}  // namespace detail

// out = 1 / (1 + exp(-x)), element-wise.
template <class Scalar>
void vector_logistic(const Scalar* x, Scalar* out, Eigen::Index n) {
  const Eigen::internal::scalar_logistic_op<Scalar> op;
  detail::for_each_packet(x, out, n, [&](const auto& p) { return op.packetOp(p); });
}

// out = tanh(x), element-wise: Eigen's packet tanh where it has one (float), else libm's.
template <class Scalar>
void vector_tanh(const Scalar* x, Scalar* out, Eigen::Index n) {
  if constexpr (Eigen::internal::packet_traits<Scalar>::HasTanh) {
    detail::for_each_packet(x, out, n, [](const auto& p) { return Eigen::internal::ptanh(p); });
  } else {
    for (Eigen::Index i = 0; i < n; ++i) out[i] = std::tanh(x[i]);
  }
}

}  // namespace egret
