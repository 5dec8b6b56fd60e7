// models/shared/column_blocks.hpp against the column-at-a-time loops it replaces, written with
// Eigen as the continuous EGRU layer wrote them before (`a += s * column`, `G.col(j) += x * l`):
// bitwise equal for unit counts around the packet sizes (whole blocks of four packets, single
// packets, the scalar tail, none), repeated columns, and scales of both signs, zero and one.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <random>
#include <vector>

#include "models/shared/column_blocks.hpp"

namespace {

using Eigen::Index;

template <class Scalar>
using Vec = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
template <class Scalar>
using Mat = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;

const Index kUnitCounts[] = {0, 1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 131};
const Index kColumnCounts[] = {0, 1, 2, 9, 40};

template <class Scalar>
Scalar draw_scale(std::mt19937_64& rng) {
  const Scalar special[] = {Scalar(0), Scalar(1), Scalar(-1)};
  std::uniform_int_distribution<int> pick(0, 5);
  const int k = pick(rng);
  if (k < 3) return special[k];
  return static_cast<Scalar>(std::uniform_real_distribution<double>(-3, 3)(rng));
}

// G target vectors, n_cols columns drawn (with repeats) from G weight matrices of 12 columns.
template <class Scalar, int G>
void check_add_columns(Index n, Index n_cols, std::mt19937_64& rng) {
  std::vector<Mat<Scalar>> W(G);
  for (auto& w : W) w = Mat<Scalar>::Random(n, 12);
  std::vector<Vec<Scalar>> a(G), reference(G);
  for (int g = 0; g < G; ++g) reference[g] = a[g] = Vec<Scalar>::Random(n);
  std::uniform_int_distribution<Index> channel(0, 11);
  std::vector<egret::ScaledColumns<Scalar, G>> cols(static_cast<std::size_t>(n_cols));
  for (auto& c : cols) {
    const Index j = channel(rng);
    for (int g = 0; g < G; ++g) {
      c.data[g] = W[g].col(j).data();
      c.scale[g] = draw_scale<Scalar>(rng);
    }
  }
  for (const auto& c : cols)
    for (int g = 0; g < G; ++g)
      reference[g] += c.scale[g] * Eigen::Map<const Vec<Scalar>>(c.data[g], n);
  Scalar* targets[G];
  for (int g = 0; g < G; ++g) targets[g] = a[g].data();
  egret::add_columns<G>(targets, n, n_cols,
                        [&](Index k) { return cols[static_cast<std::size_t>(k)]; });
  for (int g = 0; g < G; ++g)
    for (Index i = 0; i < n; ++i)
      ASSERT_EQ(a[g][i], reference[g][i])
          << "n = " << n << ", columns " << n_cols << ", g " << g << ", unit " << i;
}

// n_items rank-one updates of columns (with repeats) of G gradient matrices by G held vectors.
template <class Scalar, int G>
void check_add_to_columns(Index n, Index n_items, std::mt19937_64& rng) {
  std::vector<Mat<Scalar>> grad(G), reference(G);
  std::vector<Vec<Scalar>> lambda(G);
  for (int g = 0; g < G; ++g) {
    reference[g] = grad[g] = Mat<Scalar>::Random(n, 12);
    lambda[g] = Vec<Scalar>::Random(n);
  }
  std::uniform_int_distribution<Index> channel(0, 11);
  std::vector<std::pair<Index, Scalar>> items(static_cast<std::size_t>(n_items));
  for (auto& [j, x] : items) j = channel(rng), x = draw_scale<Scalar>(rng);
  for (const auto& [j, x] : items)
    for (int g = 0; g < G; ++g) reference[g].col(j) += x * lambda[g].matrix();
  const Scalar* sources[G];
  for (int g = 0; g < G; ++g) sources[g] = lambda[g].data();
  egret::add_to_columns<G>(sources, n, n_items, [&](Index k) {
    const auto& [j, x] = items[static_cast<std::size_t>(k)];
    egret::ColumnTargets<Scalar, G> t;
    for (int g = 0; g < G; ++g) t.data[g] = grad[g].col(j).data();
    t.scale = x;
    return t;
  });
  for (int g = 0; g < G; ++g)
    ASSERT_TRUE((grad[g].array() == reference[g].array()).all())
        << "n = " << n << ", items " << n_items << ", g " << g;
}

template <class Scalar>
void check_all() {
  std::mt19937_64 rng(5);
  for (Index n : kUnitCounts)
    for (Index k : kColumnCounts) {
      check_add_columns<Scalar, 3>(n, k, rng);
      check_add_columns<Scalar, 2>(n, k, rng);
      check_add_to_columns<Scalar, 3>(n, k, rng);
    }
}

TEST(ColumnBlocks, BitwiseTheColumnAtATimeLoopsInFloat) {
  check_all<float>();
}
TEST(ColumnBlocks, BitwiseTheColumnAtATimeLoopsInDouble) {
  check_all<double>();
}

}  // namespace
