// The connections of a sparsely connected EGRU layer (ContinuousEgruParams::sparse) in
// compressed sparse columns: what an event of one sender touches. The forward pass
// (box_sparse_units.hpp), the backward pass's recomputation
// (box_sparse_replay.hpp) and its jumps (box_sparse_adjoint.hpp) walk them.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "sim/numeric_types.hpp"

namespace egret {

// The connections of one sender kind (input channels or units) in compressed sparse columns:
// column k's receivers are connections[start[k] .. start[k + 1]), each with its three weights
// next to its row (one read stream per event: 16 bytes per connection in float).
template <class Scalar>
struct EgruConnections {
  struct Connection {
    std::int32_t row;
    Scalar u, r, z;
  };
  std::vector<std::int64_t> start;
  std::vector<Connection> connections;

  // Sender k's connections, for a range-for.
  struct Column {
    const Connection *first, *last;
    const Connection* begin() const { return first; }
    const Connection* end() const { return last; }
  };
  Column column(Index k) const {
    const auto* c = connections.data();
    return {c + start[static_cast<std::size_t>(k)], c + start[static_cast<std::size_t>(k) + 1]};
  }

  static EgruConnections of(const Matrix<Scalar>& w_u, const Matrix<Scalar>& w_r,
                            const Matrix<Scalar>& w_z) {
    if (w_u.rows() > std::numeric_limits<std::int32_t>::max())
      throw std::invalid_argument("continuous_egru: a sparse layer holds at most 2^31 - 1 units");
    EgruConnections c;
    c.start.reserve(static_cast<std::size_t>(w_u.cols()) + 1);
    c.start.push_back(0);
    for (Index k = 0; k < w_u.cols(); ++k) {
      for (Index m = 0; m < w_u.rows(); ++m) {
        if (w_u(m, k) == Scalar(0) && w_r(m, k) == Scalar(0) && w_z(m, k) == Scalar(0)) continue;
        c.connections.push_back({static_cast<std::int32_t>(m), w_u(m, k), w_r(m, k), w_z(m, k)});
      }
      c.start.push_back(static_cast<std::int64_t>(c.connections.size()));
    }
    return c;
  }
};

// Both sender kinds of a sparse layer: built once per layer from its weights, and shared by the
// layer's copies (one per worker) and by its backward passes, which walk the same columns.
template <class Scalar>
struct SparseEgruConnections {
  EgruConnections<Scalar> input, recurrent;

  template <class Params>  // ContinuousEgruParams<Scalar>
  static std::shared_ptr<const SparseEgruConnections> of(const Params& p) {
    auto c = std::make_shared<SparseEgruConnections>();
    c->input = EgruConnections<Scalar>::of(p.U_u, p.U_r, p.U_z);
    c->recurrent = EgruConnections<Scalar>::of(p.V_u, p.V_r, p.V_z);
    return c;
  }
};

}  // namespace egret
