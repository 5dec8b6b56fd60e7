// The one place where a continuous EGRU layer meets its backward side: the adjoint it hands to
// the reverse sweep, by gate kernel and connectivity (box_dense_adjoint.hpp,
// box_sparse_adjoint.hpp, exp_dense_adjoint.hpp). Included only by continuous_egru_family.cpp,
// which instantiates the layer for both scalar types, so the forward pass
// (continuous_egru_layer.hpp) includes nothing of the backward side.
#pragma once

#include <memory>

#include "models/continuous_egru/box_dense_adjoint.hpp"
#include "models/continuous_egru/box_sparse_adjoint.hpp"
#include "models/continuous_egru/continuous_egru_layer.hpp"
#include "models/continuous_egru/exp_dense_adjoint.hpp"

namespace egret {

template <class Scalar>
std::unique_ptr<LayerAdjoint<Scalar>> ContinuousEgruLayer<Scalar>::make_adjoint() const {
  if (p_->gate_kernel == GateKernel::kExp)
    return std::make_unique<ExpKernelEgruAdjoint<Scalar>>(p_);
  if (p_->sparse) return std::make_unique<SparseEgruAdjoint<Scalar>>(p_, connections_);
  return std::make_unique<ContinuousEgruAdjoint<Scalar>>(p_);
}

}  // namespace egret
