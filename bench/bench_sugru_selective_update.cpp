// The suRNN paper Table A2 analog: step time of a stepwise suGRU layer whose rhythmic gates keep
// about 85 % of the units closed, against the same layer computing every unit (dense products,
// as a run that records a tape does) and against a plain dense GRU step (Eigen), on one thread,
// float. The paper reports 5.3x (466 -> 88 per step at 87 % gate sparsity).
//
// The first row is the paper's own shape: 256 units on the sequential-MNIST pixel stream (one
// input channel). The cell is stepped directly (models/sugru/sugru_cell.hpp), with a graded input
// on every channel at every tick, so the time is the cell's arithmetic, not the engine's event
// handling. The gate bias is calibrated by bisection for the target share of closed units (the
// schedule does not depend on the input); the measured share is printed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "bench/dense_gru.hpp"
#include "models/sugru/sugru_cell.hpp"

namespace {

using egret::Index;
using Scalar = float;
using P = egret::SugruParams<Scalar>;

std::vector<egret::TickInput<Scalar>> dense_inputs(Index d, Index ticks, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<egret::TickInput<Scalar>> xs(static_cast<std::size_t>(ticks));
  for (Index k = 0; k < ticks; ++k) {
    auto& x = xs[static_cast<std::size_t>(k)];
    x.time = static_cast<Scalar>(k + 1);
    for (Index c = 0; c < d; ++c) x.channels.push_back(c), x.values.push_back(value(rng));
  }
  return xs;
}

double open_share(const P& p, Index ticks) {
  egret::Vector<Scalar> a;
  double open = 0;
  for (Index k = 1; k <= ticks; ++k) {
    p.gate.activation(static_cast<Scalar>(k), a);
    open += static_cast<double>((a.array() > 0).count());
  }
  return open / static_cast<double>(ticks * p.units());
}

// Sets gate.b so that about `target` of the unit-ticks are open.
void calibrate_gate(P& p, double target, Index ticks) {
  double lo = -3, hi = 3;
  for (int it = 0; it < 40; ++it) {
    const double mid = 0.5 * (lo + hi);
    p.gate.b.setConstant(static_cast<Scalar>(mid));
    (open_share(p, ticks) > target ? hi : lo) = mid;
  }
  p.gate.b.setConstant(static_cast<Scalar>(0.5 * (lo + hi)));
}

// Seconds that run() takes the second time it is called: the first, untimed, is a warm-up.
template <class Run>
double seconds_after_warm_up(Run&& run) {
  run();
  const auto t0 = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Seconds per step of the cell over the inputs; `every_unit` computes closed units too. The
// sequence runs once untimed first: the paths and the dense GRU take turns, and each would
// otherwise start with its weights evicted by the one before (at N = 256 both the layer's and
// the GRU's weights are 1.5 MB, this machine's L2 2 MB), a cost of the interleaving, not of a
// step.
double time_cell(const std::shared_ptr<const P>& p, const std::vector<egret::TickInput<Scalar>>& xs,
                 bool every_unit, Scalar& checksum) {
  egret::SugruCell<Scalar> cell(p);
  std::vector<egret::Emission<Scalar>> emitted;
  emitted.reserve(static_cast<std::size_t>(p->units()));
  egret::OperationCounts counts;
  auto run = [&] {
    cell.reset();
    for (const auto& x : xs) {
      emitted.clear();
      egret::TickOutput<Scalar> out(emitted, every_unit, counts, false);
      cell.step(x, out);
    }
  };
  const double s = seconds_after_warm_up(run);
  for (const auto& e : emitted) checksum += e.value;
  return s / static_cast<double>(xs.size());
}

// Seconds per step of a dense GRU over the inputs, after the same untimed warm-up.
double time_dense_gru(Index n, Index d, const std::vector<egret::TickInput<Scalar>>& xs,
                      Scalar& checksum) {
  egret::bench::DenseGru<Scalar> gru(n, d, 1);
  egret::Vector<Scalar> x(d);
  auto run = [&] {
    for (const auto& in : xs) {
      for (Index c = 0; c < d; ++c) x[c] = in.values[static_cast<std::size_t>(c)];
      gru.step(x);
    }
  };
  const double s = seconds_after_warm_up(run);
  checksum += gru.state().sum();
  return s / static_cast<double>(xs.size());
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const Index ticks = quick ? 20 : 200;
  const int reps = quick ? 1 : 5;
  const double target_open = 0.15;
  std::printf(
      "stepwise suGRU (open units only) vs the same layer computing every unit vs a dense "
      "GRU (Eigen), float, one thread, input on every channel, %lld ticks (after an untimed run), "
      "best of %d\n",
      static_cast<long long>(ticks), reps);
  std::printf("%6s %6s %8s %14s %14s %14s %9s %9s\n", "N", "D", "closed", "suGRU us/step",
              "every unit", "dense GRU", "vs every", "vs GRU");
  Scalar checksum = 0;
  const std::pair<Index, Index> shapes[] = {{256, 1}, {256, 256}, {512, 512}, {1024, 1024}};
  for (const auto& [n, d] : shapes) {
    P::RandomInit init;
    init.frequencies = 16;
    init.period_min = 4;
    init.period_max = 100;
    auto p = std::make_shared<P>(P::random(n, d, 5, init));
    calibrate_gate(*p, target_open, ticks);
    const auto xs = dense_inputs(d, ticks, 11);
    double sparse = 1e30, every = 1e30, dense = 1e30;
    for (int r = 0; r < reps; ++r) {
      sparse = std::min(sparse, time_cell(p, xs, false, checksum));
      every = std::min(every, time_cell(p, xs, true, checksum));
      dense = std::min(dense, time_dense_gru(n, d, xs, checksum));
    }
    std::printf("%6lld %6lld %7.1f%% %14.1f %14.1f %14.1f %8.1fx %8.1fx\n",
                static_cast<long long>(n), static_cast<long long>(d),
                100 * (1 - open_share(*p, ticks)), 1e6 * sparse, 1e6 * every, 1e6 * dense,
                every / sparse, dense / sparse);
  }
  std::printf("(checksum %.4f: the work is used, not optimised away)\n",
              static_cast<double>(checksum));
  return 0;
}
