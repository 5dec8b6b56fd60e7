// The contract between a continuous EGRU layer's forward pass and its backward pass: what a
// checkpoint of the layer's state holds. The forward pass writes one on the tape after every
// K-th step of the layer (continuous_egru_layer.hpp, through the units classes:
// box_dense_units.hpp, box_sparse_units.hpp, exp_dense_units.hpp); both replays read them
// (dense_replay.hpp, box_sparse_replay.hpp, through checkpoint_steps.hpp). A checkpoint is blocks
// of N values (N the layer's units), in this order:
//
//   c, a_u, a_z          box kernel: the state right after the step
//   c, a_u, a_z, a_r     exp kernel: a_r relaxes between events, so it is state too
//
// The box kernel needs no a_r: each emission's reset gate is on the tape, and its a_r does not
// flow.
#pragma once

#include <vector>

#include "models/continuous_egru/continuous_egru_params.hpp"

namespace egret {

enum class CheckpointBlock : int { kC = 0, kAu = 1, kAz = 2, kAr = 3 };

struct CheckpointLayout {
  static Index blocks(GateKernel kernel) { return kernel == GateKernel::kExp ? 4 : 3; }

  // Entries of one checkpoint of the layer.
  template <class Scalar>
  static Index width(const ContinuousEgruParams<Scalar>& p) {
    return blocks(p.gate_kernel) * p.units();
  }

  // Where one block starts in a checkpoint of n units.
  template <class Scalar>
  static const Scalar* block(const Scalar* checkpoint, Index n, CheckpointBlock b) {
    return checkpoint + static_cast<Index>(b) * n;
  }

  // Appends a checkpoint of n units to `out`: write(block, destination) fills each block's n
  // values, for the blocks of `kernel` in order.
  template <class Scalar, class Write>
  static void append(std::vector<Scalar>& out, Index n, GateKernel kernel, Write&& write) {
    const std::size_t at = out.size();
    out.resize(at + static_cast<std::size_t>(blocks(kernel) * n));
    for (Index b = 0; b < blocks(kernel); ++b)
      write(static_cast<CheckpointBlock>(b), out.data() + at + static_cast<std::size_t>(b * n));
  }
};

}  // namespace egret
