// The numeric types every layer, gradient and file shares: the index type (events/event.hpp) and
// column-major dynamic Eigen matrices and vectors, templated on the scalar (double for
// verification, float for speed).
#pragma once

#include <Eigen/Core>

#include "events/event.hpp"

namespace egret {

template <class Scalar>
using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;  // column-major
template <class Scalar>
using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
// Row-major, for cells that read whole rows of a matrix (only some units' rows).
template <class Scalar>
using RowMajorMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace egret
