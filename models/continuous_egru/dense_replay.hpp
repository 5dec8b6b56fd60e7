// The forward state of a continuous EGRU layer after any of its steps, for the backward pass.
// The forward pass keeps the state [c; a_u; a_z] (exp kernel: [c; a_u; a_z; a_r]) only after
// every K-th step of the layer (the checkpoints, continuous_egru_layer.hpp), so the tape holds per
// event only what cannot be recomputed cheaply (time, unit or channel, value, reset gate). The
// adjoint asks for states latest first; a request before the current segment recomputes the segment
// forward from its checkpoint with the forward pass's own functions (the closed-form flow or the
// exp kernel's ExpKernelEgruFlow, the resets, write_event_column / apply_columns), so the
// recomputed state is bitwise the forward state. Each step is recomputed once per backward pass;
// memory: one segment of K states.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "models/continuous_egru/box_kernel_cell.hpp"
#include "models/continuous_egru/checkpoint_layout.hpp"
#include "models/continuous_egru/checkpoint_steps.hpp"
#include "models/continuous_egru/continuous_egru_params.hpp"
#include "models/continuous_egru/event_columns.hpp"
#include "models/continuous_egru/exp_kernel_flow.hpp"
#include "sim/tape.hpp"

namespace egret {

template <class Scalar>
class ContinuousEgruReplay {
 public:
  using Params = ContinuousEgruParams<Scalar>;
  using Cell = BoxEgruCell<Scalar>;
  using Array = typename Cell::Array;

  // The state right after a step: c and the gate pre-activations a_u, a_z (and a_r with the
  // exp kernel; empty with the box kernel).
  struct State {
    Array c, a_u, a_z, a_r;
  };

  // The interval that ends at a step (box kernel): the gates u, z over it and c at its end,
  // before the step's resets and columns. The replay computes them on its way forward and the
  // adjoint needs them again for the same step (the gates cost two exp and two divisions per
  // unit, a fifth of training): kept for the steps of the segment instead of computed twice.
  struct Interval {
    Array u, z, c_end;
    Array decay;  // exp(-u dt / tau_m) over the interval (dt > 0), for the adjoint's flow
    bool known = false;
  };

  // The layer's steps and checkpoints on the tape, and the buffers.
  void begin(const Tape<Scalar>& tape, Index layer, const Params& p) {
    p_ = &p;
    n_ = p.units();
    exp_ = p.gate_kernel == GateKernel::kExp;
    steps_.begin(tape, layer, CheckpointLayout::width(p));
    for (Array* a : {&work_.c, &work_.a_u, &work_.a_z, &out_.c, &out_.a_u, &out_.a_z})
      a->resize(n_);
    for (Array* a : {&work_.a_r, &out_.a_r}) a->resize(exp_ ? n_ : 0);
    segment_first_ = 0;
    segment_.clear();
    intervals_.clear();
  }

  Index steps() const { return steps_.steps(); }
  const TapeStep<Scalar>& step(Index i) const { return steps_.step(i); }

  // The state right after the layer's i-th step; i = -1: the initial state.
  const State& after(Index i) {
    if (i < 0) {
      out_.c = p_->c_init.array();
      out_.a_u = p_->b_u.array();
      out_.a_z = p_->b_z.array();
      if (exp_) out_.a_r = p_->b_r.array();
      return out_;
    }
    if (i < segment_first_ || i > segment_last()) recompute_segment_ending_at(i);
    return segment_[static_cast<std::size_t>(i - segment_first_)];
  }

  // The interval that ends at the layer's i-th step (box kernel), from the forward recomputation
  // when it passed there, else from the state after step i - 1. Valid until the next call.
  const Interval& interval_before(Index i) {
    if (i > segment_last() || i < segment_first_) recompute_segment_ending_at(i);
    if (i == segment_first_) {  // a checkpoint: the interval belongs to the segment before
      fill_interval(after(i - 1), i, boundary_);
      return boundary_;
    }
    Interval& in = intervals_[static_cast<std::size_t>(i - segment_first_)];
    if (!in.known) fill_interval(segment_[static_cast<std::size_t>(i - 1 - segment_first_)], i, in);
    return in;
  }

 private:
  Index segment_last() const { return segment_first_ + static_cast<Index>(segment_.size()) - 1; }
  Scalar time_before(Index i) const { return steps_.time(i - 1); }

  // The gates of `before` and its c advanced to step i's time, as the forward pass computed them.
  void fill_interval(const State& before, Index i, Interval& in) {
    Cell::gates(before.a_u, before.a_z, in.u, in.z);
    in.c_end = before.c;
    const Scalar t0 = time_before(i), t1 = step(i).time;
    if (t1 != t0) {
      Cell::decay(in.u, t1 - t0, p_->tau_m.array(), in.decay);
      Cell::advance_by_decay(in.c_end, in.z, in.decay);
    }
    in.known = true;
  }

  // From the latest checkpoint at or before step `last`, forward to `last`.
  void recompute_segment_ending_at(Index last) {
    const Index k = steps_.checkpoint_at_or_before(last);
    const Scalar* rec = steps_.tape().step_state(step(k));
    const auto block = [&](CheckpointBlock b) {
      return Eigen::Map<const Array>(CheckpointLayout::block(rec, n_, b), n_);
    };
    work_.c = block(CheckpointBlock::kC);
    work_.a_u = block(CheckpointBlock::kAu);
    work_.a_z = block(CheckpointBlock::kAz);
    if (exp_) work_.a_r = block(CheckpointBlock::kAr);
    Scalar t_last = step(k).time;
    segment_first_ = k;
    segment_.resize(static_cast<std::size_t>(last - k + 1));
    intervals_.resize(segment_.size());
    segment_[0] = work_;
    for (Index j = k + 1; j <= last; ++j) {
      apply_step(j, t_last, intervals_[static_cast<std::size_t>(j - k)]);
      segment_[static_cast<std::size_t>(j - k)] = work_;
    }
  }

  // What the layer did at one step (continuous_egru_layer.hpp): c to the step time with the gates
  // of the interval, the resets of the units that crossed, the step's weight columns.
  // With the box kernel the interval is kept in `in` for the adjoint; an interval of length 0
  // is filled only if the adjoint asks (a binned input stream is mostly such intervals).
  void apply_step(Index j, Scalar& t_last, Interval& in) {
    const TapeStep<Scalar>& st = step(j);
    in.known = false;
    if (st.time != t_last) {  // t_last is step j - 1's time
      if (exp_) {
        advance_exp(t_last, st.time);
      } else {
        fill_interval(work_, j, in);
        work_.c = in.c_end;
      }
      t_last = st.time;
    }
    const TapeItem<Scalar>* items = steps_.tape().items_of(st);
    const std::int64_t n_items = steps_.tape().n_items(st);
    if (st.kind == EventKind::kInternal)
      for (std::int64_t k = 0; k < n_items; ++k) work_.c[items[k].index] = Cell::reset_state();
    columns_.resize(static_cast<std::size_t>(n_items));
    for (std::int64_t k = 0; k < n_items; ++k) {
      const TapeItem<Scalar>& it = items[k];
      write_event_column(columns_[static_cast<std::size_t>(k)], *p_, it.kind, it.index, it.value,
                         it.aux);
    }
    apply_columns(columns_.data(), static_cast<Index>(n_items), n_, work_.a_u,
                  exp_ ? &work_.a_r : nullptr, work_.a_z);
  }

  // The exp kernel's flow from t0 to t1 > t0, as the forward pass computed it.
  void advance_exp(Scalar t0, Scalar t1) {
    ExpKernelEgruFlow::integrate_c(*p_, work_.c, work_.a_u, work_.a_z, double(t0), double(t1),
                                   flow_work_, ExpKernelEgruFlow::Unobserved{});
    ExpKernelEgruFlow::relax(work_.a_u, p_->b_u, t1 - t0, p_->tau_s);
    ExpKernelEgruFlow::relax(work_.a_r, p_->b_r, t1 - t0, p_->tau_s);
    ExpKernelEgruFlow::relax(work_.a_z, p_->b_z, t1 - t0, p_->tau_s);
  }

  ContinuousEgruTapeSteps<Scalar> steps_;
  const Params* p_ = nullptr;
  Index n_ = 0;
  Index segment_first_ = 0;
  std::vector<State> segment_;       // states after steps segment_first_, segment_first_ + 1, ...
  std::vector<Interval> intervals_;  // the intervals ending at those steps (box kernel)
  Interval boundary_;                // the interval ending at a checkpoint step
  State work_, out_;
  std::vector<EgruColumn<Scalar>> columns_;  // a step's columns
  bool exp_ = false;                         // the exp gate kernel (else box)
  std::vector<double> flow_work_;            // ExpKernelEgruFlow's
};

}  // namespace egret
