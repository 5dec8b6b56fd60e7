// Dot products of a few consecutive rows of a row-major matrix with one vector, in one pass over
// the vector: a selective-update cell without a tape multiplies an open unit's three gate rows
// (rows 3m, 3m+1, 3m+2 of its interleaved weights) by x_k and by h_{k-1}. Reading the vector once
// for the three rows, with two packet accumulators per row (six independent chains hide the FMA
// latency), halves the loads and loop overhead of three separate dot products.
#pragma once

#include <Eigen/Core>

namespace egret {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"  // Eigen's packet types as arguments

// out[g] = sum_j rows[g * d + j] v[j] for g = 0, 1, 2.
template <class Scalar>
void three_row_dots(const Scalar* rows, const Scalar* v, Eigen::Index d, Scalar* out) {
  namespace ei = Eigen::internal;
  using Packet = typename ei::packet_traits<Scalar>::type;
  constexpr Eigen::Index P = ei::unpacket_traits<Packet>::size;
  const Scalar* r0 = rows;
  const Scalar* r1 = rows + d;
  const Scalar* r2 = rows + 2 * d;
  Packet a0 = ei::pset1<Packet>(Scalar(0)), a1 = a0, a2 = a0, b0 = a0, b1 = a0, b2 = a0;
  Eigen::Index j = 0;
  for (; j + 2 * P <= d; j += 2 * P) {
    const Packet x = ei::ploadu<Packet>(v + j), y = ei::ploadu<Packet>(v + j + P);
    a0 = ei::pmadd(ei::ploadu<Packet>(r0 + j), x, a0);
    a1 = ei::pmadd(ei::ploadu<Packet>(r1 + j), x, a1);
    a2 = ei::pmadd(ei::ploadu<Packet>(r2 + j), x, a2);
    b0 = ei::pmadd(ei::ploadu<Packet>(r0 + j + P), y, b0);
    b1 = ei::pmadd(ei::ploadu<Packet>(r1 + j + P), y, b1);
    b2 = ei::pmadd(ei::ploadu<Packet>(r2 + j + P), y, b2);
  }
  if (j + P <= d) {
    const Packet x = ei::ploadu<Packet>(v + j);
    a0 = ei::pmadd(ei::ploadu<Packet>(r0 + j), x, a0);
    a1 = ei::pmadd(ei::ploadu<Packet>(r1 + j), x, a1);
    a2 = ei::pmadd(ei::ploadu<Packet>(r2 + j), x, a2);
    j += P;
  }
  Scalar s0 = ei::predux(ei::padd(a0, b0)), s1 = ei::predux(ei::padd(a1, b1)),
         s2 = ei::predux(ei::padd(a2, b2));
  for (; j < d; ++j) {
    s0 += r0[j] * v[j];
    s1 += r1[j] * v[j];
    s2 += r2[j] * v[j];
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
}

#pragma GCC diagnostic pop

}  // namespace egret
