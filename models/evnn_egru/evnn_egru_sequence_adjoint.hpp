// The backward pass of a batch through an EvNN-convention EGRU layer (evnn_egru_sequence.hpp):
// backpropagation through the steps with EvNN's pseudo-derivative (evnn_egru_equations.hpp,
// step_adjoint), from the upstream gradients of every returned sequence (y, h, o, trace).
//
// Event-sparse, in two passes:
//  1. in fixed groups of kGroup batch rows (groups in parallel), steps T..1: each row's step
//     adjoint, then for the group together dL/dy_{t-1} = R qbar (kept only for the units whose
//     y_{t-1} can pass a gradient on: o = 1, or a nonzero pseudo-derivative; all units at t = 1
//     if dL/dy_0 is wanted) and, only if asked for, dL/dx = W p (dense: x reaches every gate);
//  2. the weight gradients, in parallel over their rows, each row summing over (t, b) in order:
//     kernel rows of nonzero inputs only, recurrent-kernel rows of active senders only. The
//     result does not depend on the thread count.
#pragma once

#include <algorithm>
#include <vector>

#include "models/evnn_egru/evnn_egru_sequence.hpp"

namespace egret {

template <class Scalar>
struct EvnnEgruUpstream {
  const Scalar *y = nullptr, *h = nullptr, *o = nullptr, *trace = nullptr;  // [T, B, N] or null
};

template <class Scalar>
struct EvnnEgruGradients {
  Scalar* x = nullptr;   // [T, B, C] or null (not wanted)
  Scalar* y0 = nullptr;  // [B, N] or null
  Scalar *kernel = nullptr, *recurrent_kernel = nullptr, *bias = nullptr, *recurrent_bias = nullptr,
         *thr = nullptr;  // overwritten
};

template <class Scalar>
class EvnnEgruBackward {
 public:
  using Cell = EvnnEgruEquations<Scalar>;
  using Array = typename Cell::Array;
  using ConstMap = typename Cell::ConstMap;

  // io: the forward pass's arrays (x, y0, zoneout and the outputs y, h).
  void run(const EvnnEgruWeights<Scalar>& w, const EvnnEgruSequenceIo<Scalar>& io,
           const EvnnEgruTape<Scalar>& tape, const EvnnEgruUpstream<Scalar>& up,
           const EvnnEgruGradients<Scalar>& out, int threads) {
    n_ = w.units;
    damp_ = w.dampening;
    support_ = w.support;
    T_ = tape.steps;
    B_ = tape.batch;
    pre_.resize(static_cast<std::size_t>(T_ * B_ * 4 * n_));  // every entry is written
    thr_rows_.assign(static_cast<std::size_t>(B_ * n_), Scalar(0));
    const Index groups = (B_ + kGroup - 1) / kGroup;
    for_each_index(static_cast<std::size_t>(groups), threads, [&](std::size_t g) {
      const Index b0 = static_cast<Index>(g) * kGroup;
      sweep_group(w, io, tape, up, out, b0, std::min(B_, b0 + kGroup));
    });
    accumulate_weights(w, io, tape, out, threads);
    Eigen::Map<Array> dthr(out.thr, n_);
    dthr.setZero();
    for (Index b = 0; b < B_; ++b) dthr += ConstMap(thr_rows_.data() + b * n_, n_);
  }

 private:
  // [p_z, p_r, p_g, qbar_g] of step t, row b: the pre-activation adjoints (qbar's z and r parts
  // equal p's).
  Scalar* pre(Index t, Index b) { return pre_.data() + ((t * B_ + b) * 4) * n_; }
  const Scalar* pre(Index t, Index b) const { return pre_.data() + ((t * B_ + b) * 4) * n_; }

  static typename Cell::ConstStepRecord record_of(const EvnnEgruTape<Scalar>& tape, Index t,
                                                  Index b) {
    const Index n = tape.units;
    const Scalar* r = tape.record(t, b);
    return {{r, n}, {r + n, n}, {r + 2 * n, n}, {r + 3 * n, n}, {r + 4 * n, n}};
  }

  // Rows of the batch swept together, step by step, so that R q and W p are matrix products
  // reading the kernels once per step for the group. The group size is fixed (not the thread
  // count), so the result does not depend on the number of threads.
  static constexpr Index kGroup = 8;

  using Block = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;

  void sweep_group(const EvnnEgruWeights<Scalar>& w, const EvnnEgruSequenceIo<Scalar>& io,
                   const EvnnEgruTape<Scalar>& tape, const EvnnEgruUpstream<Scalar>& up,
                   const EvnnEgruGradients<Scalar>& out, Index b0, Index b1) {
    const Index n = n_, G = b1 - b0;
    const Array thr = ConstMap(w.thr, n);
    Block trace_bar = Block::Zero(n, G), rho_y = Block::Zero(n, G), rho_h = Block::Zero(n, G);
    Block P(3 * n, G), Qbar(3 * n, G);
    Array y_bar(n), h_bar(n), p(3 * n), qbar(3 * n), h_prev_bar(n), zero_h = Array::Zero(n);
    for (Index t = T_ - 1; t >= 0; --t) {
      for (Index i = 0; i < G; ++i) {
        const Index b = b0 + i;
        const std::size_t at = static_cast<std::size_t>((t * B_ + b) * n);
        const auto add = [&](const Scalar* g) {
          return g ? Array(ConstMap(g + at, n)) : Array::Zero(n);
        };
        trace_bar.col(i) = (add(up.trace) + Cell::kTraceDecay * trace_bar.col(i).array()).matrix();
        y_bar = add(up.y) + rho_y.col(i).array() +
                (Scalar(1) - Cell::kTraceDecay) * trace_bar.col(i).array();
        h_bar = add(up.h) + rho_h.col(i).array();
        const Scalar* h_prev = t > 0 ? io.h + at - static_cast<std::size_t>(B_ * n) : zero_h.data();
        Cell::step_adjoint(y_bar, h_bar, up.o ? up.o + at : nullptr, record_of(tape, t, b), h_prev,
                           io.zoneout ? io.zoneout + at : nullptr, thr, w.dampening, w.support,
                           Eigen::Map<Array>(thr_rows_.data() + b * n, n), p, qbar, h_prev_bar);
        rho_h.col(i) = h_prev_bar.matrix();
        P.col(i) = p.matrix();
        Qbar.col(i) = qbar.matrix();
        Scalar* pq = pre(t, b);
        Eigen::Map<Array>(pq, 3 * n) = p;
        Eigen::Map<Array>(pq + 3 * n, n) = qbar.tail(n);
      }
      if (out.x)  // dL/dx_t = W p: every channel of every row of the group
        rows_dot_columns(w.W(), P, [&](Index c, Index i) -> Scalar& {
          return out.x[static_cast<std::size_t>(t * B_ + b0 + i) * w.inputs + c];
        });
      recurrent_adjoint(w, Qbar, tape, t, b0, out, rho_y);
    }
  }

  // out(j, i) = M.row(j) . X.col(i) for every row j of the row-major M and column i of X: two
  // rows of M at a time against a row-major copy of X (G rows of 3N, held in L2), so M is read
  // once, contiguously, without the packing a general matrix product does per call.
  template <class M, class Out>
  static void rows_dot_columns(const M& m, const Block& x, Out&& out) {
    thread_local Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> xt;
    xt = x.transpose();
    const Index rows = m.rows(), G = x.cols();
    Index j = 0;
    for (; j + 1 < rows; j += 2) {
      const auto r0 = m.row(j), r1 = m.row(j + 1);
      for (Index i = 0; i < G; ++i) {
        out(j, i) = r0.dot(xt.row(i));
        out(j + 1, i) = r1.dot(xt.row(i));
      }
    }
    for (; j < rows; ++j)
      for (Index i = 0; i < G; ++i) out(j, i) = m.row(j).dot(xt.row(i));
  }

  // dL/dy_{t-1} = R qbar for the units whose y_{t-1} passes a gradient on (fired, or a nonzero
  // pseudo-derivative); the others get 0. A matrix product when most units pass (EvNN's default
  // support), dot products of the passing rows otherwise. At t = 1: dL/dy_0, if wanted.
  void recurrent_adjoint(const EvnnEgruWeights<Scalar>& w, const Block& Qbar,
                         const EvnnEgruTape<Scalar>& tape, Index t, Index b0,
                         const EvnnEgruGradients<Scalar>& out, Block& rho_y) const {
    const Index n = n_, G = Qbar.cols();
    const auto R = w.R();
    if (t == 0) {
      if (out.y0)
        rows_dot_columns(R, Qbar,
                         [&](Index j, Index i) -> Scalar& { return out.y0[(b0 + i) * n + j]; });
      return;
    }
    std::size_t passing = 0;
    passes_.resize(static_cast<std::size_t>(n * G));
    for (Index i = 0; i < G; ++i) {
      const auto prev = record_of(tape, t - 1, b0 + i);
      for (Index j = 0; j < n; ++j) {
        const Scalar v = prev.v[j];
        const bool pass = v > Scalar(0) || Cell::pseudo_derivative(v, damp_, support_) != Scalar(0);
        passes_[static_cast<std::size_t>(i * n + j)] = pass;
        passing += pass;
      }
    }
    if (4 * passing >= static_cast<std::size_t>(n * G)) {
      rows_dot_columns(R, Qbar, [&](Index j, Index i) -> Scalar& { return rho_y(j, i); });
      for (Index i = 0; i < G; ++i)
        for (Index j = 0; j < n; ++j)
          if (!passes_[static_cast<std::size_t>(i * n + j)]) rho_y(j, i) = Scalar(0);
      return;
    }
    for (Index i = 0; i < G; ++i)
      for (Index j = 0; j < n; ++j)
        rho_y(j, i) = passes_[static_cast<std::size_t>(i * n + j)]
                          ? R.row(j).dot(Qbar.col(i).transpose())
                          : Scalar(0);
  }

  void accumulate_weights(const EvnnEgruWeights<Scalar>& w, const EvnnEgruSequenceIo<Scalar>& io,
                          const EvnnEgruTape<Scalar>& tape, const EvnnEgruGradients<Scalar>& out,
                          int threads) {
    const Index n = n_, c_in = w.inputs;
    Eigen::Map<Array> db(out.bias, 3 * n), dbr(out.recurrent_bias, 3 * n);
    db.setZero();
    dbr.setZero();
    for (Index t = 0; t < T_; ++t)
      for (Index b = 0; b < B_; ++b) {
        const ConstMap pq(pre(t, b), 4 * n);
        db += pq.head(3 * n);
        dbr.head(2 * n) += pq.head(2 * n);
        dbr.tail(n) += pq.tail(n);
      }
    // Rows of the kernel gradient (input channels) then of the recurrent one (senders), in
    // chunks; each chunk visits (t, b) in order.
    const Index chunk = 64;
    const Index kernel_chunks = (c_in + chunk - 1) / chunk, rec_chunks = (n + chunk - 1) / chunk;
    std::fill(out.kernel, out.kernel + c_in * 3 * n, Scalar(0));
    std::fill(out.recurrent_kernel, out.recurrent_kernel + n * 3 * n, Scalar(0));
    for_each_index(static_cast<std::size_t>(kernel_chunks + rec_chunks), threads,
                   [&](std::size_t k) {
                     const auto ck = static_cast<Index>(k);
                     if (ck < kernel_chunks)
                       kernel_rows(io, tape, out, ck * chunk, std::min(c_in, (ck + 1) * chunk));
                     else
                       recurrent_rows(io, out, (ck - kernel_chunks) * chunk,
                                      std::min(n, (ck - kernel_chunks + 1) * chunk));
                   });
  }

  void kernel_rows(const EvnnEgruSequenceIo<Scalar>& io, const EvnnEgruTape<Scalar>& tape,
                   const EvnnEgruGradients<Scalar>& out, Index c0, Index c1) const {
    const Index n = n_, c_in = tape.inputs;
    for (Index t = 0; t < T_; ++t)
      for (Index b = 0; b < B_; ++b) {
        const std::size_t at = static_cast<std::size_t>(t * B_ + b);
        const ConstMap p(pre(t, b), 3 * n);
        for (const Index c : tape.nonzero[at]) {
          if (c < c0 || c >= c1) continue;
          const Scalar x = io.x[at * static_cast<std::size_t>(c_in) + static_cast<std::size_t>(c)];
          Eigen::Map<Array>(out.kernel + c * 3 * n, 3 * n) += x * p;
        }
      }
  }

  void recurrent_rows(const EvnnEgruSequenceIo<Scalar>& io, const EvnnEgruGradients<Scalar>& out,
                      Index j0, Index j1) const {
    const Index n = n_;
    for (Index t = 0; t < T_; ++t)
      for (Index b = 0; b < B_; ++b) {
        const Scalar* y_prev = t > 0 ? io.y + static_cast<std::size_t>(((t - 1) * B_ + b) * n)
                                     : (io.y0 ? io.y0 + b * n : nullptr);
        if (!y_prev) continue;
        const Scalar* pq = pre(t, b);
        for (Index j = j0; j < j1; ++j) {
          if (y_prev[j] == Scalar(0)) continue;
          Scalar* row = out.recurrent_kernel + j * 3 * n;
          Eigen::Map<Array>(row, 2 * n) += y_prev[j] * ConstMap(pq, 2 * n);
          Eigen::Map<Array>(row + 2 * n, n) += y_prev[j] * ConstMap(pq + 3 * n, n);
        }
      }
  }

  Index n_ = 0, T_ = 0, B_ = 0;
  Scalar damp_ = 0, support_ = 1;
  std::vector<Scalar> pre_;                                // [T][B][4N]
  static thread_local std::vector<unsigned char> passes_;  // per (row of a group, unit)
  std::vector<Scalar> thr_rows_;  // [B][N] dL/dthr per row, summed in row order
};

template <class Scalar>
thread_local std::vector<unsigned char> EvnnEgruBackward<Scalar>::passes_;

}  // namespace egret
