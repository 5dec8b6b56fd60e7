// Many weight columns added to a few short vectors, or one vector's multiples added to many
// columns, with the short side held in registers. A continuous EGRU layer adds a weight column
// per gate for every input, release and emission (hundreds per time on a busy camera stream), and
// its backward pass adds x * lambda into the input weights' gradient for each of them. Done one
// column at a time, every column reloads and stores the layer's pre-activations (or the adjoint
// lambda) and pays a call and Eigen's alignment checks; here a block of units stays in registers
// while all the columns pass (docs/speed.md, "Columns in registers": 2.4-3x for the forward's
// columns, 1.6x for the gradient's, on 64 units).
//
// Each element receives the same terms in the same order as the column-at-a-time loop, computed
// the same way (a product, rounded, then a sum, as Eigen evaluates `a += s * column`), so the
// results are bitwise that loop's.
#pragma once

#include <Eigen/Core>

namespace egret {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"  // Eigen's packet types as arguments

// What add_columns reads for one column: a pointer and a scale per target vector.
template <class Scalar, int G>
struct ScaledColumns {
  const Scalar* data[G];
  Scalar scale[G];
};
// What add_to_columns writes for one target: a column per source vector, and the scale.
template <class Scalar, int G>
struct ColumnTargets {
  Scalar* data[G];
  Scalar scale;
};

namespace detail {

template <class Scalar>
using ColumnPacket = typename Eigen::internal::packet_traits<Scalar>::type;
template <class Scalar>
constexpr Eigen::Index kColumnPacket = Eigen::internal::unpacket_traits<ColumnPacket<Scalar>>::size;

// Packets b < B of G vectors, from element `off` on.
template <int G, int B, class Scalar, class Pointer>
void load_packets(Pointer const (&v)[G], Eigen::Index off, ColumnPacket<Scalar> (&out)[G][B]) {
  constexpr Eigen::Index P = kColumnPacket<Scalar>;
  for (int g = 0; g < G; ++g)
    for (int b = 0; b < B; ++b)
      out[g][b] = Eigen::internal::ploadu<ColumnPacket<Scalar>>(v[g] + off + b * P);
}

// Units [off, off + B packets) of G vectors: the targets loaded once, every column added, stored.
template <int G, int B, class Scalar, class ColumnAt>
void add_columns_block(Scalar* const (&a)[G], Eigen::Index off, Eigen::Index n_cols,
                       const ColumnAt& column_at) {
  namespace ei = Eigen::internal;
  using Packet = ColumnPacket<Scalar>;
  constexpr Eigen::Index P = kColumnPacket<Scalar>;
  Packet acc[G][B];
  load_packets<G, B, Scalar>(a, off, acc);
  for (Eigen::Index k = 0; k < n_cols; ++k) {
    const auto col = column_at(k);
    for (int g = 0; g < G; ++g) {
      const Packet s = ei::pset1<Packet>(col.scale[g]);
      for (int b = 0; b < B; ++b)
        acc[g][b] = ei::padd(acc[g][b], ei::pmul(s, ei::ploadu<Packet>(col.data[g] + off + b * P)));
    }
  }
  for (int g = 0; g < G; ++g)
    for (int b = 0; b < B; ++b) ei::pstoreu(a[g] + off + b * P, acc[g][b]);
}

// Columns [off, off + B packets) of the targets: the G sources held, every target updated.
template <int G, int B, class Scalar, class TargetAt>
void add_to_columns_block(const Scalar* const (&src)[G], Eigen::Index off, Eigen::Index n_targets,
                          const TargetAt& target_at) {
  namespace ei = Eigen::internal;
  using Packet = ColumnPacket<Scalar>;
  constexpr Eigen::Index P = kColumnPacket<Scalar>;
  Packet held[G][B];
  load_packets<G, B, Scalar>(src, off, held);
  for (Eigen::Index k = 0; k < n_targets; ++k) {
    const auto t = target_at(k);
    const Packet x = ei::pset1<Packet>(t.scale);
    for (int g = 0; g < G; ++g)
      for (int b = 0; b < B; ++b) {
        Scalar* d = t.data[g] + off + b * P;
        ei::pstoreu(d, ei::padd(ei::ploadu<Packet>(d), ei::pmul(x, held[g][b])));
      }
  }
}

}  // namespace detail

// For k = 0, 1, ..., n_cols - 1 and every gate g < G: a[g][i] += scale[g] * data[g][i] for the
// units i < n, where column_at(k) returns a ScaledColumns.
template <int G, class Scalar, class ColumnAt>
void add_columns(Scalar* const (&a)[G], Eigen::Index n, Eigen::Index n_cols,
                 const ColumnAt& column_at) {
  constexpr Eigen::Index P = detail::kColumnPacket<Scalar>;
  Eigen::Index off = 0;
  for (; off + 4 * P <= n; off += 4 * P) detail::add_columns_block<G, 4>(a, off, n_cols, column_at);
  for (; off + P <= n; off += P) detail::add_columns_block<G, 1>(a, off, n_cols, column_at);
  if (off == n) return;
  for (Eigen::Index k = 0; k < n_cols; ++k) {  // the units after the last whole packet
    const auto col = column_at(k);
    for (int g = 0; g < G; ++g)
      for (Eigen::Index i = off; i < n; ++i) {
        const Scalar term = col.scale[g] * col.data[g][i];
        a[g][i] += term;
      }
  }
}

// For k = 0, 1, ..., n_targets - 1 and every g < G: data[g][i] += scale * src[g][i] for i < n,
// where target_at(k) returns a ColumnTargets.
template <int G, class Scalar, class TargetAt>
void add_to_columns(const Scalar* const (&src)[G], Eigen::Index n, Eigen::Index n_targets,
                    const TargetAt& target_at) {
  constexpr Eigen::Index P = detail::kColumnPacket<Scalar>;
  Eigen::Index off = 0;
  for (; off + 4 * P <= n; off += 4 * P)
    detail::add_to_columns_block<G, 4>(src, off, n_targets, target_at);
  for (; off + P <= n; off += P) detail::add_to_columns_block<G, 1>(src, off, n_targets, target_at);
  if (off == n) return;
  for (Eigen::Index k = 0; k < n_targets; ++k) {
    const auto t = target_at(k);
    for (int g = 0; g < G; ++g)
      for (Eigen::Index i = off; i < n; ++i) {
        const Scalar term = t.scale * src[g][i];
        t.data[g][i] += term;
      }
  }
}

#pragma GCC diagnostic pop

}  // namespace egret
