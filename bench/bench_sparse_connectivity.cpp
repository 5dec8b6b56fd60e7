// Cost per event of a continuous EGRU layer with sparse connectivity against the fully connected
// layer, for N = 256 ... 4096 on one core. Three runs per N, one process:
//   dense     fully connected (the baseline)
//   sparse    every sender connected to 10 % of the units (ContinuousEgruParams::sparse: per-unit
//             state, an event costs its column's connections)
//   same, dense path   the sparse layer's weights (90 % zeros) run by the dense path: the same
//             events as "sparse", so the ratio to it is the path's gain alone
// Poisson input on D = 64 channels at 50 Hz, windows 5 ms, best of 3 (1 with --quick).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/continuous_bench_layer.hpp"
#include "events/synthetic_input.hpp"
#include "models/continuous_egru/continuous_egru_layer.hpp"
#include "sim/engine.hpp"

namespace {

using egret::Index;

struct Timing {
  double us_per_event = 0;
  double events = 0;
};

template <class Scalar>
Timing time_layer(const egret::ContinuousEgruParams<Scalar>& p,
                  const egret::InputStream<Scalar>& input, double sim_ms, int reps) {
  egret::Network<Scalar> net;
  net.add_layer(std::make_unique<egret::ContinuousEgruLayer<Scalar>>(
      std::make_shared<const egret::ContinuousEgruParams<Scalar>>(p)));
  egret::SimOptions<Scalar> opt;
  opt.end_time = static_cast<Scalar>(sim_ms);
  opt.record_trace = false;
  double best = 1e30, events = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto result = egret::simulate(net, input, opt);
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    events = static_cast<double>(result.events_processed);
  }
  return {1e6 * best / events, events};
}

bool sparse_only = false;  // --sparse-only: the sparse layer alone (for profiling)

template <class Scalar>
void run(Index n, double fraction, double sim_ms, int reps) {
  using P = egret::ContinuousEgruParams<Scalar>;
  const Index d = 64;
  const P dense = egret::bench::continuous_bench_params<Scalar>(n, d);
  P sparse = dense;
  sparse.keep_random_connections(static_cast<Scalar>(fraction), static_cast<Scalar>(fraction), 42);
  sparse.sparse = true;
  P same_dense_path = sparse;
  same_dense_path.sparse = false;
  const auto input = egret::poisson_input<Scalar>(d, 50.0, sim_ms, 7);
  if (sparse_only) {
    const Timing ts = time_layer(sparse, input, sim_ms, reps);
    std::printf("%-6s N=%5lld  %2.0f %%-connected %6.2f us/event (%8.0f events)\n",
                sizeof(Scalar) == 4 ? "float" : "double", static_cast<long long>(n), 100 * fraction,
                ts.us_per_event, ts.events);
    return;
  }
  const Timing td = time_layer(dense, input, sim_ms, reps);
  const Timing ts = time_layer(sparse, input, sim_ms, reps);
  const Timing tz = time_layer(same_dense_path, input, sim_ms, reps);
  std::printf(
      "%-6s N=%5lld  dense %6.2f us/event (%8.0f events)  %2.0f %%-connected %6.2f us/event "
      "(%8.0f events)  same weights, dense path %6.2f us/event  per event: %5.1fx vs dense, "
      "%5.1fx vs same weights\n",
      sizeof(Scalar) == 4 ? "float" : "double", static_cast<long long>(n), td.us_per_event,
      td.events, 100 * fraction, ts.us_per_event, ts.events, tz.us_per_event,
      td.us_per_event / ts.us_per_event, tz.us_per_event / ts.us_per_event);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  Index only_n = 0;                              // --n N: that size only (for profiling)
  bool only_float = false, only_double = false;  // --float, --double: that precision only
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--float") == 0) only_float = true;
    if (std::strcmp(argv[i], "--sparse-only") == 0) sparse_only = true;
    if (std::strcmp(argv[i], "--double") == 0) only_double = true;
    if (std::strcmp(argv[i], "--n") == 0 && i + 1 < argc) only_n = std::atoll(argv[++i]);
  }
  const double sim_ms = quick ? 100 : 1000;
  const int reps = quick ? 1 : 3;
  std::printf(
      "continuous EGRU layer, box kernel, one core: sparse (10 %%-connected) vs fully connected, "
      "D = 64 Poisson inputs at 50 Hz, windows 5 ms, %.0f ms simulated, best of %d\n",
      sim_ms, reps);
  for (Index n : {256, 1024, 4096}) {
    if (only_n > 0 && n != only_n) continue;
    if (!only_float) run<double>(n, 0.1, sim_ms, reps);
    if (!only_double) run<float>(n, 0.1, sim_ms, reps);
  }
  return 0;
}
