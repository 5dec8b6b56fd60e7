// Events per second of one continuous-time EGRU layer (box kernel) on one core, for N = 64, 256
// and 1024 units, random weights, Poisson input. Also splits the run into layer work and engine
// work (queue, dispatch), to show that the queue does not dominate although every event moves
// every unit's next crossing time.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "bench/continuous_bench_layer.hpp"
#include "bench/timed_layer.hpp"
#include "events/synthetic_input.hpp"
#include "models/continuous_egru/continuous_egru_layer.hpp"
#include "sim/engine.hpp"

namespace {

using egret::Index;

template <class Scalar>
void run(Index n, double sim_ms, int reps) {
  using P = egret::ContinuousEgruParams<Scalar>;
  const Index d = 64;
  const P p = egret::bench::continuous_bench_params<Scalar>(n, d);
  const auto input = egret::poisson_input<Scalar>(d, 50.0, sim_ms, 7);  // 3.2 inputs per ms

  double best_wall = 1e30, best_layer = 0;
  egret::SimResult<Scalar> result;
  for (int r = 0; r < reps; ++r) {
    double layer_seconds = 0;
    egret::Network<Scalar> net;
    net.add_layer(std::make_unique<egret::bench::TimedLayer<Scalar>>(
        std::make_unique<egret::ContinuousEgruLayer<Scalar>>(std::make_shared<P>(p)),
        &layer_seconds));
    egret::SimOptions<Scalar> opt;
    opt.end_time = static_cast<Scalar>(sim_ms);
    opt.record_trace = false;
    const auto t0 = std::chrono::steady_clock::now();
    result = egret::simulate(net, input, opt);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (wall < best_wall) {
      best_wall = wall;
      best_layer = layer_seconds;
    }
  }
  const auto& c = result.layers[0];
  const double processed = static_cast<double>(result.events_processed);
  std::printf(
      "%-6s N=%5lld  inputs %7llu  releases %7llu  crossings %7llu  (%5.1f ev/unit/s)  "
      "%9.0f events/s (%8.0f crossings/s)  %6.2f us/event  %5.1f ns/event/unit  "
      "engine share %4.1f%%\n",
      sizeof(Scalar) == 4 ? "float" : "double", static_cast<long long>(n),
      static_cast<unsigned long long>(c.inputs_received),
      static_cast<unsigned long long>(c.releases),
      static_cast<unsigned long long>(c.internal_steps), result.rate_per_unit(0),
      processed / best_wall, static_cast<double>(c.internal_steps) / best_wall,
      1e6 * best_wall / processed, 1e9 * best_wall / processed / static_cast<double>(n),
      100.0 * (best_wall - best_layer) / best_wall);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const double sim_ms = quick ? 200 : 2000;
  const int reps = quick ? 1 : 3;
  std::printf(
      "continuous EGRU layer, box kernel, one core, D = 64 Poisson inputs at 50 Hz, "
      "windows 5 ms, %.0f ms simulated, best of %d\n"
      "(events = inputs + releases + crossings; engine share = time outside the layer's "
      "own updates, i.e. queue and dispatch)\n",
      sim_ms, reps);
  for (Index n : {64, 256, 1024}) {
    run<double>(n, sim_ms, reps);
    run<float>(n, sim_ms, reps);
  }
  return 0;
}
