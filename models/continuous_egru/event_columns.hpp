// The jump an event applies to a continuous EGRU layer's gate pre-activations: one weight column
// per gate and the scale applied to it (docs/adjoint.md). The forward pass
// (continuous_egru_layer.hpp) and the backward pass's recomputation between checkpoints
// (dense_replay.hpp) both apply jumps through these functions, so the recomputed
// state is bitwise the forward state.
#pragma once

#include <Eigen/Core>

#include "events/event.hpp"
#include "models/continuous_egru/box_kernel_cell.hpp"
#include "models/continuous_egru/continuous_egru_params.hpp"
#include "models/shared/column_blocks.hpp"

namespace egret {

template <class Scalar>
struct EgruColumn {
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  const Scalar* u = nullptr;
  const Scalar* r = nullptr;
  const Scalar* z = nullptr;
  Scalar scale_ur = 0;  // applied to the u and r columns
  Scalar scale_z = 0;   // applied to the z column
  bool input = false;   // the sender: an input channel, or a unit of the layer
  Index index = 0;      // its channel or unit
};

// Writes into `col` the column of an event of `kind` on channel or unit `index` with value x or
// y and aux r (the sender's reset gate, recurrent events only). A release removes what its event
// added. The layer fills its buffer of a call's columns in place: a column returned by value was
// stored field by field and copied with wider loads, which the CPU cannot forward from those
// stores (a stall on every input and release; docs/speed.md, "Symbols hidden").
template <class Scalar>
inline void write_event_column(EgruColumn<Scalar>& col, const ContinuousEgruParams<Scalar>& p,
                               EventKind kind, Index index, Scalar value, Scalar aux) {
  using Cell = BoxEgruCell<Scalar>;
  const bool input = kind == EventKind::kInput || kind == EventKind::kInputRelease;
  const Scalar sign = (kind == EventKind::kInputRelease || kind == EventKind::kRecurrentRelease)
                          ? Scalar(-1)
                          : Scalar(1);
  col.input = input;
  col.index = index;
  if (input) {
    const Scalar s = sign * Cell::input_scale(value);
    col.u = p.U_u.col(index).data();
    col.r = p.U_r.col(index).data();
    col.z = p.U_z.col(index).data();
    col.scale_ur = s;
    col.scale_z = s;
    return;
  }
  col.u = p.V_u.col(index).data();
  col.r = p.V_r.col(index).data();
  col.z = p.V_z.col(index).data();
  col.scale_ur = sign * Cell::recurrent_scale_ur(value);
  col.scale_z = sign * Cell::recurrent_scale_z(value, aux);
}

// The same column, returned.
template <class Scalar>
EgruColumn<Scalar> event_column(const ContinuousEgruParams<Scalar>& p, EventKind kind, Index index,
                                Scalar value, Scalar aux) {
  EgruColumn<Scalar> col;
  write_event_column(col, p, kind, index, value, aux);
  return col;
}

// a_X += scale * column_X for the columns cols[0], ..., cols[n_cols - 1] in that order, every
// unit (a_r may be skipped by passing nullptr: the backward recomputation of the box kernel does
// not need it). The units stay in registers while the columns pass
// (models/shared/column_blocks.hpp); each unit's sum is the column-at-a-time loop's, bitwise.
template <class Scalar>
void apply_columns(const EgruColumn<Scalar>* cols, Index n_cols, Index n,
                   typename EgruColumn<Scalar>::Array& a_u, typename EgruColumn<Scalar>::Array* a_r,
                   typename EgruColumn<Scalar>::Array& a_z) {
  if (a_r) {
    Scalar* const a[3] = {a_u.data(), a_r->data(), a_z.data()};
    add_columns<3>(a, n, n_cols, [cols](Index k) {
      const EgruColumn<Scalar>& c = cols[k];
      return ScaledColumns<Scalar, 3>{{c.u, c.r, c.z}, {c.scale_ur, c.scale_ur, c.scale_z}};
    });
  } else {
    Scalar* const a[2] = {a_u.data(), a_z.data()};
    add_columns<2>(a, n, n_cols, [cols](Index k) {
      const EgruColumn<Scalar>& c = cols[k];
      return ScaledColumns<Scalar, 2>{{c.u, c.z}, {c.scale_ur, c.scale_z}};
    });
  }
}

}  // namespace egret
