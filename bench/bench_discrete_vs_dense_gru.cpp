// Step time of the event-sparse discrete EGRU (on the event engine: binned input events, tick
// schedule) against a dense GRU of the same size that computes every matrix product (Eigen),
// on one thread, at 2, 5, 10, 20 and 50 % activity of inputs and units.
//
// Input activity is set exactly (that share of channels receives an event every tick). Unit
// activity emerges from the dynamics: a shared threshold is calibrated by bisection so that the
// measured share of units emitting per tick is close to the target; the measured value is
// printed next to the target.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "bench/dense_gru.hpp"
#include "models/discrete_egru/discrete_egru_layer.hpp"
#include "sim/engine.hpp"

namespace {

using egret::Index;
using Scalar = float;
using D = egret::DiscreteEgruParams<Scalar>;

struct Workload {
  egret::InputStream<Scalar> stream;
  std::vector<egret::Vector<Scalar>> dense;  // the same input as dense vectors, per tick
};

Workload make_input(Index d, double share, Index ticks, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Index> channels(static_cast<std::size_t>(d));
  std::iota(channels.begin(), channels.end(), 0);
  const Index k_active = std::max<Index>(1, static_cast<Index>(std::lround(share * d)));
  Workload w;
  std::vector<egret::InputEvent<Scalar>> events;
  for (Index k = 1; k <= ticks; ++k) {
    std::shuffle(channels.begin(), channels.end(), rng);
    egret::Vector<Scalar> x = egret::Vector<Scalar>::Zero(d);
    for (Index i = 0; i < k_active; ++i) {
      events.push_back({static_cast<Scalar>(k) - Scalar(0.5), channels[i], Scalar(1)});
      x[channels[i]] = 1;
    }
    w.dense.push_back(x);
  }
  w.stream = egret::InputStream<Scalar>(std::move(events), d);
  return w;
}

// Runs the discrete layer through the engine; returns (seconds, unit activity).
std::pair<double, double> run_egru(const D& p, const Workload& w, Index ticks) {
  egret::Network<Scalar> net;
  net.add_layer(std::make_unique<egret::DiscreteEgruLayer<Scalar>>(std::make_shared<D>(p)));
  egret::SimOptions<Scalar> opt;
  opt.end_time = static_cast<Scalar>(ticks);
  opt.record_trace = false;
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = egret::simulate(net, w.stream, opt);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {s, 1.0 - r.activity_sparsity(0)};
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const Index ticks = quick ? 40 : 300;
  const int reps = quick ? 1 : 5;
  std::printf(
      "discrete EGRU (event-sparse, on the engine) vs dense GRU (Eigen, all products), "
      "float, one thread, %lld ticks, best of %d\n",
      static_cast<long long>(ticks), reps);
  std::printf("%6s %6s %8s %10s %10s %14s %14s %8s\n", "N", "D", "target", "inputs", "units",
              "EGRU us/step", "GRU us/step", "speedup");
  Scalar checksum = 0;
  for (Index n : {256, 1024}) {
    const Index d = n;
    egret::bench::DenseGru<Scalar> gru(n, d, 1);
    for (double share : {0.02, 0.05, 0.10, 0.20, 0.50}) {
      const Workload w =
          make_input(d, share, ticks, 100 + static_cast<std::uint64_t>(share * 1000));
      D::RandomInit init;
      init.weight_scale = 1.0f;
      init.bias_u = 0.0f;
      init.bias_z = 0.3f;
      init.bias_spread = 0.5f;
      D p = D::random(n, d, 5, init);
      p.dt = 1;
      // Calibrate the shared threshold for the target unit activity (bisection on a short run).
      const Index cal_ticks = std::min<Index>(ticks, 60);
      const Workload wc = make_input(d, share, cal_ticks, 7);
      double lo = 1e-4, hi = 2.0;
      for (int it = 0; it < 22; ++it) {
        const double mid = std::sqrt(lo * hi);
        p.theta.setConstant(static_cast<Scalar>(mid));
        const double act = run_egru(p, wc, cal_ticks).second;
        (act > share ? lo : hi) = mid;
      }
      p.theta.setConstant(static_cast<Scalar>(std::sqrt(lo * hi)));

      double best_egru = 1e30, activity = 0;
      for (int r = 0; r < reps; ++r) {
        const auto [s, act] = run_egru(p, w, ticks);
        best_egru = std::min(best_egru, s);
        activity = act;
      }
      double best_gru = 1e30;
      for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (Index k = 0; k < ticks; ++k) gru.step(w.dense[static_cast<std::size_t>(k)]);
        best_gru = std::min(
            best_gru, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      checksum += gru.state().sum();
      const double e_us = 1e6 * best_egru / static_cast<double>(ticks);
      const double g_us = 1e6 * best_gru / static_cast<double>(ticks);
      std::printf("%6lld %6lld %7.0f%% %9.1f%% %9.1f%% %14.1f %14.1f %7.1fx\n",
                  static_cast<long long>(n), static_cast<long long>(d), 100 * share,
                  100.0 * std::max<Index>(1, std::lround(share * d)) / static_cast<double>(d),
                  100 * activity, e_us, g_us, g_us / e_us);
    }
  }
  std::printf("(dense GRU state checksum %.4f: its work is used, not optimised away)\n",
              static_cast<double>(checksum));
  return 0;
}
