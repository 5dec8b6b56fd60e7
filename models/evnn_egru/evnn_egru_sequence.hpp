// A batch of sequences through one EvNN-convention EGRU layer
// (models/evnn_egru/evnn_egru_equations.hpp), on dense [T, B, ·] arrays in torch's layout: what
// egret.torch.EGRU runs. Event-sparse: a step adds the kernel rows of the nonzero inputs only and
// the recurrent-kernel rows of the units that fired at the previous step only (y is the recurrent
// input, and y = 0 for silent units), so a step costs 3N per nonzero input and per active unit plus
// O(N), not 3N (C + N).
//
// Arrays are row-major and contiguous, as torch stores them: kernel [C, 3N] (row c: channel
// c's weights to the three gates, what an input event touches), recurrent_kernel [N, 3N],
// x [T, B, C], y0 [B, N], outputs [T, B, N]. Rows of the batch run in parallel; each row's
// arithmetic is the same whatever the thread count.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "models/evnn_egru/evnn_egru_equations.hpp"
#include "sim/batch_runner.hpp"

namespace egret {

template <class Scalar>
struct EvnnEgruWeights {
  const Scalar* kernel = nullptr;            // [C, 3N]
  const Scalar* recurrent_kernel = nullptr;  // [N, 3N]
  const Scalar* bias = nullptr;              // [3N]
  const Scalar* recurrent_bias = nullptr;    // [3N]
  const Scalar* thr = nullptr;               // [N]
  Index inputs = 0, units = 0;
  Scalar dampening = Scalar(0.7);  // gamma of the pseudo-derivative
  Scalar support = Scalar(1);      // eps: H'(v) ~ gamma max(0, 1 - eps |v|)

  using RowMajor = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const RowMajor> W() const { return {kernel, inputs, 3 * units}; }
  Eigen::Map<const RowMajor> R() const { return {recurrent_kernel, units, 3 * units}; }
};

// One forward pass of a batch, and what its backward pass needs: per step and row the record
// of models/evnn_egru/evnn_egru_equations.hpp (z, r, g, q_g, v: 5N values), and the inputs' nonzero
// channels.
template <class Scalar>
struct EvnnEgruTape {
  Index steps = 0, batch = 0, units = 0, inputs = 0;
  std::vector<Scalar> records;              // [T][B][5][N]
  std::vector<std::vector<Index>> nonzero;  // per (t, b): the channels with x != 0
  Scalar* record(Index t, Index b) { return records.data() + ((t * batch + b) * 5) * units; }
  const Scalar* record(Index t, Index b) const {
    return records.data() + ((t * batch + b) * 5) * units;
  }
};

template <class Scalar>
struct EvnnEgruSequenceIo {
  Index steps = 0, batch = 0;
  const Scalar* x = nullptr;        // [T, B, C]
  const Scalar* y0 = nullptr;       // [B, N] or null (zeros): the recurrent input of step 1
  const Scalar* zoneout = nullptr;  // [T, B, N] weights of the new value, or null (none)
  Scalar *y = nullptr, *h = nullptr, *o = nullptr, *trace = nullptr;  // [T, B, N]
};

namespace detail {

// Sizes the tape for a forward pass of io.
template <class Scalar>
void size_tape(const EvnnEgruWeights<Scalar>& w, const EvnnEgruSequenceIo<Scalar>& io,
               EvnnEgruTape<Scalar>& tape) {
  tape.steps = io.steps;
  tape.batch = io.batch;
  tape.units = w.units;
  tape.inputs = w.inputs;
  tape.records.resize(static_cast<std::size_t>(io.steps * io.batch * 5 * w.units));
  tape.nonzero.resize(static_cast<std::size_t>(io.steps * io.batch));
}

// The elementwise step of row b at step t from its pre-activations, into the outputs and tape.
template <class Scalar, class A, class Q>
void finish_step(const EvnnEgruWeights<Scalar>& w, const EvnnEgruSequenceIo<Scalar>& io,
                 EvnnEgruTape<Scalar>& tape, Index t, Index b, const A& a, const Q& q,
                 Scalar* trace) {
  using Eq = EvnnEgruEquations<Scalar>;
  using Array = typename Eq::Array;
  const Index n = w.units, B = io.batch;
  static thread_local Array zero_h;
  if (zero_h.size() != n) zero_h.setZero(n);
  const std::size_t out = static_cast<std::size_t>((t * B + b) * n);
  const Scalar* h_prev = t > 0 ? io.h + out - static_cast<std::size_t>(B * n) : zero_h.data();
  Scalar* rec = tape.record(t, b);
  typename Eq::StepRecord s{
      {rec, n}, {rec + n, n}, {rec + 2 * n, n}, {rec + 3 * n, n}, {rec + 4 * n, n}};
  const Eigen::Map<const Array> thr(w.thr, n);
  Eq::step(a, q, h_prev, io.zoneout ? io.zoneout + out : nullptr, thr, s, io.y + out, io.h + out,
           trace);
  Eigen::Map<Array>(io.trace + out, n) = Eigen::Map<const Array>(trace, n);
  Eigen::Map<Array>(io.o + out, n) = (s.v > Scalar(0)).template cast<Scalar>();
}

// y_{t-1} of row b (y_0: the state, or null for zeros).
template <class Scalar>
const Scalar* previous_output(const EvnnEgruSequenceIo<Scalar>& io, Index n, Index t, Index b) {
  if (t > 0) return io.y + static_cast<std::size_t>(((t - 1) * io.batch + b) * n);
  return io.y0 ? io.y0 + b * n : nullptr;
}

// Senders of one step, by sender: for each weight row k, the batch rows whose input (or
// previous output) is nonzero at k and that value.
template <class Scalar>
struct SendersByRow {
  std::vector<Index> start, rows, fill;
  std::vector<Scalar> values;
  // row_of(b) points to the K values of batch row b (null: all zero), for b in [b0, b1).
  template <class RowOf>
  void build(Index K, Index b0, Index b1, const RowOf& row_of) {
    start.assign(static_cast<std::size_t>(K + 1), 0);
    for (Index b = b0; b < b1; ++b)
      if (const Scalar* v = row_of(b))
        for (Index k = 0; k < K; ++k) start[static_cast<std::size_t>(k + 1)] += v[k] != Scalar(0);
    for (std::size_t k = 0; k < static_cast<std::size_t>(K); ++k) start[k + 1] += start[k];
    rows.resize(static_cast<std::size_t>(start.back()));
    values.resize(rows.size());
    fill.assign(start.begin(), start.end() - 1);
    for (Index b = b0; b < b1; ++b)
      if (const Scalar* v = row_of(b))
        for (Index k = 0; k < K; ++k)
          if (v[k] != Scalar(0)) {
            const auto at = static_cast<std::size_t>(fill[static_cast<std::size_t>(k)]++);
            rows[at] = b;
            values[at] = v[k];
          }
  }
  // acc[b] += values * weights.row(k) for every listed (k, b), in increasing k: each weight
  // row is read once for all the rows that need it.
  template <class Weights, class Acc>
  void accumulate(const Weights& weights, Acc&& acc_of_row) const {
    for (std::size_t k = 0; k + 1 < start.size(); ++k) {
      if (start[k] == start[k + 1]) continue;
      const auto wk = weights.row(static_cast<Index>(k)).transpose().array();
      for (Index i = start[k]; i < start[k + 1]; ++i)
        acc_of_row(rows[static_cast<std::size_t>(i)]) += values[static_cast<std::size_t>(i)] * wk;
    }
  }
};

// The rows of the batch split into one group per worker; a group runs step by step, reading
// each weight row once per step for all its rows that need it. A row's sums are in increasing
// sender order whatever the grouping, so results do not depend on the thread count.
template <class Scalar>
void forward_by_group(const EvnnEgruWeights<Scalar>& w, const EvnnEgruSequenceIo<Scalar>& io,
                      EvnnEgruTape<Scalar>& tape, Index groups, int threads) {
  using Array = typename EvnnEgruEquations<Scalar>::Array;
  const Index n = w.units, c_in = w.inputs, T = io.steps, B = io.batch;
  const auto W = w.W();
  const auto R = w.R();
  const Eigen::Map<const Array> bx(w.bias, 3 * n), br(w.recurrent_bias, 3 * n);
  for_each_index(static_cast<std::size_t>(groups), threads, [&](std::size_t g) {
    const Index b0 = static_cast<Index>(g) * B / groups,
                b1 = (static_cast<Index>(g) + 1) * B / groups;
    std::vector<Array> a(static_cast<std::size_t>(b1 - b0), Array(3 * n)), q = a;
    std::vector<Array> trace(a.size(), Array::Zero(n));
    SendersByRow<Scalar> inputs, senders;
    auto slot = [&](std::vector<Array>& v) {
      return [&v, b0](Index b) -> Array& { return v[static_cast<std::size_t>(b - b0)]; };
    };
    for (Index t = 0; t < T; ++t) {
      const Scalar* x = io.x + static_cast<std::size_t>(t * B * c_in);
      inputs.build(c_in, b0, b1, [&](Index b) { return x + b * c_in; });
      senders.build(n, b0, b1, [&](Index b) { return previous_output(io, n, t, b); });
      for (Index b = b0; b < b1; ++b) {
        auto& nz = tape.nonzero[static_cast<std::size_t>(t * B + b)];
        nz.clear();
        for (Index k = 0; k < c_in; ++k)
          if (x[b * c_in + k] != Scalar(0)) nz.push_back(k);
        a[static_cast<std::size_t>(b - b0)] = bx;
        q[static_cast<std::size_t>(b - b0)] = br;
      }
      inputs.accumulate(W, slot(a));
      senders.accumulate(R, slot(q));
      for (Index b = b0; b < b1; ++b) {
        const auto i = static_cast<std::size_t>(b - b0);
        finish_step(w, io, tape, t, b, a[i], q[i], trace[i].data());
      }
    }
  });
}

}  // namespace detail

// Runs the batch forward, filling io's outputs and the tape: the batch rows in one group per
// worker (threads <= 0: every core).
template <class Scalar>
void evnn_egru_forward(const EvnnEgruWeights<Scalar>& w, const EvnnEgruSequenceIo<Scalar>& io,
                       EvnnEgruTape<Scalar>& tape, int threads) {
  detail::size_tape(w, io, tape);
  const auto workers = static_cast<Index>(threads > 0 ? threads : worker_count());
  detail::forward_by_group(w, io, tape, std::max<Index>(1, std::min(io.batch, workers)), threads);
}

}  // namespace egret
