// Row-major copies of a layer's column-major weight matrices with each unit's gate rows next to
// each other (row G m + g is row m of the g-th matrix): a selective-update cell reads only its
// open units' rows, and then each unit's are one contiguous block. The copy goes tile by tile,
// so that both the column-major reads and the row-major writes stay within a few cache lines
// and pages: row by row, every element read was a column's length away from the last (each
// worker of every batch call builds a cell, and so these copies).
#pragma once

#include <algorithm>
#include <array>
#include <stdexcept>

#include "sim/numeric_types.hpp"

namespace egret {

template <class Scalar, std::size_t G>
RowMajorMatrix<Scalar> interleaved_rows(const std::array<const Matrix<Scalar>*, G>& gates) {
  const Index rows = gates[0]->rows(), cols = gates[0]->cols();
  for (const Matrix<Scalar>* m : gates)
    if (m->rows() != rows || m->cols() != cols)
      throw std::logic_error("interleaved_rows: the gates' matrices differ in shape");
  // 16 x 16: a tile's reads and writes each touch 16 pages and 16 cache lines (a column of a
  // 1024-unit layer's matrix is 4 KB long, a row of the copy 12 KB apart from the next).
  constexpr Index kTile = 16;
  const auto gate_count = static_cast<Index>(G);
  RowMajorMatrix<Scalar> out(gate_count * rows, cols);
  for (Index c0 = 0; c0 < cols; c0 += kTile) {
    const Index c1 = std::min(cols, c0 + kTile);
    for (Index r0 = 0; r0 < rows; r0 += kTile) {
      const Index r1 = std::min(rows, r0 + kTile);
      for (Index g = 0; g < gate_count; ++g) {
        const Matrix<Scalar>& m = *gates[static_cast<std::size_t>(g)];
        for (Index r = r0; r < r1; ++r)
          for (Index c = c0; c < c1; ++c) out(gate_count * r + g, c) = m(r, c);
      }
    }
  }
  return out;
}

}  // namespace egret
