// Counting a family's synaptic operations exactly (sim/operation_counts.hpp) at a cost far below
// the products being counted. A weight matrix's nonzero pattern is read once per layer
// (WeightPattern): a whole column's pairs are then a lookup, and a row against a set of operands
// is a product of counts when the matrix has no zero weight. Only matrices with zeros (pruned, or
// set by hand) pay a pairwise check, and only over the pairs the family actually touched.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/numeric_types.hpp"
#include "sim/operation_counts.hpp"

namespace egret {

// A binary spike (+1 or -1) is accumulated, any other nonzero value multiplied (NeuroBench: ACs
// for binary inputs, MACs for graded ones), decided per operand.
template <class Scalar>
bool is_binary_operand(Scalar v) {
  return (v == Scalar(1)) | (v == Scalar(-1));  // no branch: binned values alternate
}

// How many operands of a list are binary and how many graded (zeros are neither).
struct OperandSplit {
  std::uint64_t binary = 0;
  std::uint64_t graded = 0;

  template <class Values>
  static OperandSplit of(const Values& values, std::size_t count) {
    OperandSplit s;
    for (std::size_t i = 0; i < count; ++i) {
      const auto v = values[static_cast<Index>(i)];
      if (v == decltype(v)(0)) continue;
      if (is_binary_operand(v))
        ++s.binary;
      else
        ++s.graded;
    }
    return s;
  }
};

template <class Scalar>
class WeightPattern {
 public:
  WeightPattern() = default;
  // `weights` must outlive the pattern (both belong to one layer's parameters).
  explicit WeightPattern(const Matrix<Scalar>& weights) : w_(&weights) {
    column_.assign(static_cast<std::size_t>(weights.cols()), 0);
    std::uint64_t total = 0;
    for (Index c = 0; c < weights.cols(); ++c) {
      // Counted in a local (the loop vectorises), not by incrementing column_[c] in memory.
      std::uint64_t nonzero = 0;
      for (Index r = 0; r < weights.rows(); ++r) nonzero += weights(r, c) != Scalar(0) ? 1 : 0;
      column_[static_cast<std::size_t>(c)] = nonzero;
      total += nonzero;
    }
    full_ = total ==
            static_cast<std::uint64_t>(weights.rows()) * static_cast<std::uint64_t>(weights.cols());
  }

  std::uint64_t column(Index c) const { return column_[static_cast<std::size_t>(c)]; }
  bool full() const { return full_; }

  // Pairs of every row with the listed columns (operands `values`).
  void count_columns(OperationCounts& ops, const std::vector<Index>& columns,
                     const std::vector<Scalar>& values) const {
    for (std::size_t i = 0; i < columns.size(); ++i) add(ops, values[i], column(columns[i]));
  }

  // Pairs of row r with the listed columns; `split` is OperandSplit::of(values).
  void count_row(OperationCounts& ops, Index r, const std::vector<Index>& columns,
                 const std::vector<Scalar>& values, const OperandSplit& split) const {
    if (full_) return add_split(ops, split);
    for (std::size_t i = 0; i < columns.size(); ++i)
      if ((*w_)(r, columns[i]) != Scalar(0)) add(ops, values[i], 1);
  }

  // Pairs of the rows rows[0], ..., rows[rows.size() - 1] with the listed columns, or with a
  // dense operand vector (the open units of a selective tick): that many times the split for a
  // matrix without zeros. (Row by row, the counts' read-modify-writes in memory formed one chain
  // through every row: the compiler cannot keep them in registers, since they might alias the
  // row list.)
  template <class Rows>
  void count_rows(OperationCounts& ops, const Rows& rows, const std::vector<Index>& columns,
                  const std::vector<Scalar>& values, const OperandSplit& split) const {
    if (full_) return add_split(ops, split, rows.size());
    for (Index i = 0; i < rows.size(); ++i) count_row(ops, rows[i], columns, values, split);
  }
  template <class Rows, class V>
  void count_rows(OperationCounts& ops, const Rows& rows, const V& v,
                  const OperandSplit& split) const {
    if (full_) return add_split(ops, split, rows.size());
    for (Index i = 0; i < rows.size(); ++i) count_row(ops, rows[i], v, split);
  }

  // Pairs of every row with a dense operand vector v (a matrix-vector product); `split` is
  // OperandSplit::of(v).
  template <class V>
  void count_all_rows(OperationCounts& ops, const V& v, const OperandSplit& split) const {
    if (full_) return add_split(ops, split, static_cast<Index>(rows()));
    for (Index r = 0; r < static_cast<Index>(rows()); ++r) count_row(ops, r, v, split);
  }
  std::uint64_t rows() const { return w_ ? static_cast<std::uint64_t>(w_->rows()) : 0; }

  // Pairs of row r with a dense operand vector v; `split` is OperandSplit::of(v).
  template <class V>
  void count_row(OperationCounts& ops, Index r, const V& v, const OperandSplit& split) const {
    if (full_) return add_split(ops, split);
    for (Index c = 0; c < v.size(); ++c)
      if ((*w_)(r, c) != Scalar(0)) add(ops, v[c], 1);
  }

 private:
  static void add(OperationCounts& ops, Scalar operand, std::uint64_t pairs) {
    if (operand == Scalar(0)) return;
    (is_binary_operand(operand) ? ops.synaptic_acs : ops.synaptic_macs) += pairs;
  }
  static void add_split(OperationCounts& ops, const OperandSplit& split, Index times = 1) {
    const auto n = static_cast<std::uint64_t>(times);
    ops.synaptic_acs += n * split.binary;
    ops.synaptic_macs += n * split.graded;
  }

  const Matrix<Scalar>* w_ = nullptr;
  std::vector<std::uint64_t> column_;  // nonzero weights per column
  bool full_ = true;                   // no zero weight
};

// Every pair of a weight matrix: what a dense product with it costs.
template <class M>
std::uint64_t dense_pairs(const M& weights) {
  return static_cast<std::uint64_t>(weights.rows()) * static_cast<std::uint64_t>(weights.cols());
}

// One element-wise product of two state-dependent factors: a gate product (a MAC) when both are
// nonzero.
template <class Scalar>
void count_product(OperationCounts& ops, Scalar a, Scalar b) {
  if (a != Scalar(0) && b != Scalar(0)) ++ops.gate_products;
}

}  // namespace egret
