// The units whose rhythmic gate (models/rhythmic_gate/rhythmic_gate.hpp) is open at a tick,
// a_k > 0, gathered once per tick in increasing order: a selective-update cell without a tape
// computes, counts and updates only these, so a closed unit costs nothing after its gate.
#pragma once

#include "sim/numeric_types.hpp"

namespace egret {

class OpenUnits {
 public:
  void resize(Index units) { index_.resize(units); }

  // From the gate activations a (one per unit). Branch-free: every unit is written at the next
  // free place, which moves on only when the unit is open.
  template <class Activations>
  void gather(const Activations& a) {
    Index k = 0;
    for (Index m = 0; m < a.size(); ++m) {
      index_[k] = m;
      k += a[m] > typename Activations::Scalar(0) ? 1 : 0;
    }
    count_ = k;
  }

  Index size() const { return count_; }
  Index operator[](Index i) const { return index_[i]; }

  // The units a tick walks, in increasing order: all `units` while a tape is recorded (`every`:
  // the adjoint needs the closed units' values too), else the open ones. The selective cells
  // walk both cases with one loop, so that a run with a tape computes bitwise what one without
  // does.
  Index walked(bool every, Index units) const { return every ? units : count_; }
  Index walked_unit(bool every, Index i) const { return every ? i : index_[i]; }

 private:
  Eigen::Array<Index, Eigen::Dynamic, 1> index_;
  Index count_ = 0;
};

}  // namespace egret
