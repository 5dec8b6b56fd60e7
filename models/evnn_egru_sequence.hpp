// A batch of sequences through one EvNN-convention EGRU layer (models/evnn_egru_equations.hpp), on
// dense [T, B, ·] arrays in torch's layout: what egret.torch.EGRU runs. Event-sparse: a step
// adds the kernel rows of the nonzero inputs only and the recurrent-kernel rows of the units
// that fired at the previous step only (y is the recurrent input, and y = 0 for silent units),
// so a step costs 3N per nonzero input and per active unit plus O(N), not 3N (C + N).
//
// Arrays are row-major and contiguous, as torch stores them: kernel [C, 3N] (row c: channel
// c's weights to the three gates, what an input event touches), recurrent_kernel [N, 3N],
// x [T, B, C], y0 [B, N], outputs [T, B, N]. Rows of the batch run in parallel; each row's
// arithmetic is the same whatever the thread count.
#pragma once

#include <Eigen/Core>
#include <stdexcept>
#include <vector>

#include "models/evnn_egru_equations.hpp"
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
// of models/evnn_egru_equations.hpp (z, r, g, q_g, v: 5N values), and the inputs' nonzero channels.
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

// Runs the batch forward, filling io's outputs and the tape.
template <class Scalar>
void evnn_egru_forward(const EvnnEgruWeights<Scalar>& w, const EvnnEgruSequenceIo<Scalar>& io,
                       EvnnEgruTape<Scalar>& tape, int threads) {
  using Cell = EvnnEgruEquations<Scalar>;
  using Array = typename Cell::Array;
  const Index n = w.units, c_in = w.inputs, T = io.steps, B = io.batch;
  tape.steps = T;
  tape.batch = B;
  tape.units = n;
  tape.inputs = c_in;
  tape.records.resize(static_cast<std::size_t>(T * B * 5 * n));
  tape.nonzero.resize(static_cast<std::size_t>(T * B));
  const auto W = w.W();
  const auto R = w.R();
  const Eigen::Map<const Array> bx(w.bias, 3 * n), br(w.recurrent_bias, 3 * n);
  const Array thr = Eigen::Map<const Array>(w.thr, n);
  for_each_index(static_cast<std::size_t>(B), threads, [&](std::size_t bi) {
    const auto b = static_cast<Index>(bi);
    Array a(3 * n), q(3 * n), zero_h = Array::Zero(n), trace = Array::Zero(n);
    std::vector<Index> active;
    const Scalar* y_prev = io.y0 ? io.y0 + b * n : nullptr;
    const Scalar* h_prev = zero_h.data();  // h_0 = 0 always (EvNN: the state is y_0)
    for (Index t = 0; t < T; ++t) {
      const std::size_t at = static_cast<std::size_t>(t * B + b);
      const Scalar* x = io.x + at * static_cast<std::size_t>(c_in);
      auto& nz = tape.nonzero[at];
      nz.clear();
      a = bx;
      for (Index k = 0; k < c_in; ++k)
        if (x[k] != Scalar(0)) {
          nz.push_back(k);
          a += x[k] * W.row(k).transpose().array();
        }
      q = br;
      active.clear();
      if (y_prev)
        for (Index j = 0; j < n; ++j)
          if (y_prev[j] != Scalar(0)) {
            active.push_back(j);
            q += y_prev[j] * R.row(j).transpose().array();
          }
      Scalar* rec = tape.record(t, b);
      typename Cell::StepRecord s{
          {rec, n}, {rec + n, n}, {rec + 2 * n, n}, {rec + 3 * n, n}, {rec + 4 * n, n}};
      const std::size_t out = at * static_cast<std::size_t>(n);
      const Scalar* wz = io.zoneout ? io.zoneout + out : nullptr;
      Cell::step(a, q, h_prev, wz, thr, s, io.y + out, io.h + out, trace.data());
      Eigen::Map<Array>(io.trace + out, n) = trace;
      Eigen::Map<Array>(io.o + out, n) = (s.v > Scalar(0)).template cast<Scalar>();
      y_prev = io.y + out;
      h_prev = io.h + out;
    }
  });
}

}  // namespace egret
