// Subnormal numbers (nonzero, below the smallest normal number: 2^-126 in float, 2^-1022 in
// double) as the operands or results of arithmetic cost a microcode assist on Intel CPUs, over
// 100 cycles each, and one subnormal lane slows a whole packet. A continuous EGRU layer on busy
// input has saturated units (u = sigmoid(a_u) below 1e-30) whose decays and adjoints get there
// (docs/speed.md, "Subnormal arithmetic").
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>

namespace egret {

// 2^26 times the smallest normal number (2^-100 in float, 2^-996 in double): a product of a
// number at least this large with a factor of at least 2^-26 is normal.
template <class Scalar>
constexpr Scalar kNearlySubnormal = std::numeric_limits<Scalar>::min() * Scalar(1 << 26);

}  // namespace egret

namespace egret::detail {

// x, or +0 where |x| < threshold (NaN stays NaN), vectorised: Eigen keeps an expression with it
// in packets (a select() would make the whole expression scalar).
template <class Scalar>
struct ZeroBelowMagnitude {
  Scalar threshold = std::numeric_limits<Scalar>::min();
  Scalar operator()(Scalar x) const { return std::abs(x) < threshold ? Scalar(0) : x; }
  template <class Packet>
  Packet packetOp(const Packet& x) const {
    namespace ei = Eigen::internal;
    return ei::pandnot(x, ei::pcmp_lt(ei::pabs(x), ei::pset1<Packet>(threshold)));
  }
};

}  // namespace egret::detail

template <class Scalar>
struct Eigen::internal::functor_traits<egret::detail::ZeroBelowMagnitude<Scalar>> {
  enum { Cost = 3, PacketAccess = true };
};

namespace egret {

// Every entry of `a` below kNearlySubnormal in magnitude set to +0 (the others, infinities and
// NaN kept): its products with factors down to 2^-26 stay normal.
template <class Derived>
void flush_nearly_subnormal(Eigen::ArrayBase<Derived>& a) {
  using Scalar = typename Derived::Scalar;
  a = a.unaryExpr(detail::ZeroBelowMagnitude<Scalar>{kNearlySubnormal<Scalar>});
}

}  // namespace egret
