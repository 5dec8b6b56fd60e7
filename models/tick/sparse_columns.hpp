// acc += sum_k W[:, index[k]] * scale[k]: the event-sparse product at the heart of the discrete
// cells (only the columns of channels/units that carried an event are touched). Columns are
// added four at a time in one pass over acc, so the accumulator is loaded and stored once per
// four columns instead of once per column.
#pragma once

#include <Eigen/Core>
#include <vector>

#include "events/event.hpp"

namespace egret {

template <class Scalar, class Acc>
void add_scaled_columns(Acc&& acc,
                        const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& weights,
                        const std::vector<Index>& index, const std::vector<Scalar>& scale) {
  const std::size_t count = index.size();
  std::size_t k = 0;
  for (; k + 4 <= count; k += 4) {
    acc.noalias() += weights.col(index[k]) * scale[k] + weights.col(index[k + 1]) * scale[k + 1] +
                     weights.col(index[k + 2]) * scale[k + 2] +
                     weights.col(index[k + 3]) * scale[k + 3];
  }
  for (; k < count; ++k) acc.noalias() += weights.col(index[k]) * scale[k];
}

}  // namespace egret
