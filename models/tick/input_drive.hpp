// W x_k for a tick cell, event-sparse for both input semantics (models/tick/tick_step.hpp):
//  * impulse inputs: W x_k = the columns of the channels with events, scaled by their sums;
//  * held inputs (delta propagation): a running W x_k, updated by the columns of the channels
//    that changed, scaled by their changes; unchanged channels cost nothing.
// One InputDrive per input matrix; reset() with the cell.
#pragma once

#include "models/tick/sparse_columns.hpp"
#include "models/tick/tick_step.hpp"
#include "sim/numeric_types.hpp"

namespace egret {

template <class Scalar>
class InputDrive {
 public:
  void reset(Index rows) { running_.setZero(rows); }

  // out += W x_k.
  template <class Out>
  void add_to(Out&& out, const Matrix<Scalar>& W, const TickInput<Scalar>& x) {
    if (!x.held) {
      add_scaled_columns(out, W, x.channels, x.values);
      return;
    }
    add_scaled_columns(running_, W, x.channels, x.values);
    out += running_;
  }

 private:
  Vector<Scalar> running_;  // held inputs: W x_k so far
};

}  // namespace egret
