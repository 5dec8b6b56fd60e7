// Discrete EGRU training cost: time of the backward pass
// (models/discrete_egru/discrete_egru_adjoint.hpp via the generic sweep) against the forward pass,
// and the tape's bytes per tick, at N = D = 1024 units and inputs, ~10 % input and unit activity,
// double precision (what training uses), one thread. Unit activity is calibrated as in
// bench_discrete_vs_dense_gru.cpp (a shared threshold by bisection). Two pseudo-derivative
// half-widths: the default 0.5 and a narrow 0.1 (fewer units inside it: fewer surrogate events, a
// sparser backward pass).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "adjoint/reverse_sweep.hpp"
#include "models/discrete_egru/discrete_egru_layer.hpp"
#include "sim/engine.hpp"

namespace {

using egret::Index;
using Scalar = double;
using D = egret::DiscreteEgruParams<Scalar>;

// `share` of the channels receive one event per tick.
egret::InputStream<Scalar> make_input(Index d, double share, Index ticks, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Index> channels(static_cast<std::size_t>(d));
  std::iota(channels.begin(), channels.end(), 0);
  const Index k_active = std::max<Index>(1, static_cast<Index>(std::lround(share * d)));
  std::vector<egret::InputEvent<Scalar>> events;
  for (Index k = 1; k <= ticks; ++k) {
    std::shuffle(channels.begin(), channels.end(), rng);
    for (Index i = 0; i < k_active; ++i)
      events.push_back({static_cast<Scalar>(k) - Scalar(0.5), channels[i], Scalar(1)});
  }
  std::sort(events.begin(), events.end(),
            [](const auto& a, const auto& b) { return a.time < b.time; });
  return egret::InputStream<Scalar>(std::move(events), d);
}

egret::Network<Scalar> network(const D& p) {
  egret::Network<Scalar> net;
  net.add_layer(std::make_unique<egret::DiscreteEgruLayer<Scalar>>(std::make_shared<D>(p)));
  egret::Readout<Scalar> ro;
  ro.W_o = egret::Matrix<Scalar>::Constant(1, p.units(), 0.01);
  ro.b_o = egret::Vector<Scalar>::Zero(1);
  net.set_readout(ro);
  return net;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double unit_activity(const D& p, const egret::InputStream<Scalar>& in, Index ticks) {
  auto net = network(p);
  egret::SimOptions<Scalar> opt;
  opt.end_time = static_cast<Scalar>(ticks);
  opt.record_trace = false;
  return 1.0 - egret::simulate(net, in, opt).activity_sparsity(0);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const Index n = 1024, d = 1024;
  const Index ticks = quick ? 30 : 200;
  const int reps = quick ? 1 : 3;
  const double share = 0.10;
  D::RandomInit init;
  init.weight_scale = 1.0;
  init.bias_z = 0.3;
  init.bias_spread = 0.5;
  D p = D::random(n, d, 5, init);
  p.dt = 1;
  const auto in = make_input(d, share, ticks, 11);
  const auto cal = make_input(d, share, std::min<Index>(ticks, 60), 7);
  double lo = 1e-4, hi = 2.0;
  for (int it = 0; it < 22; ++it) {
    const double mid = std::sqrt(lo * hi);
    p.theta.setConstant(mid);
    (unit_activity(p, cal, std::min<Index>(ticks, 60)) > share ? lo : hi) = mid;
  }
  p.theta.setConstant(std::sqrt(lo * hi));
  std::printf(
      "discrete EGRU backward vs forward, N = D = %lld, double, one thread, %lld ticks, "
      "best of %d; input activity %.0f %%, threshold %.4f\n",
      static_cast<long long>(n), static_cast<long long>(ticks), reps, 100 * share, p.theta[0]);
  std::printf("%10s %8s %9s %12s %12s %12s %9s %11s %13s %14s\n", "half-width", "units",
              "bwd-sparse", "fwd ms", "fwd+tape ms", "bwd ms", "bwd/fwd", "bwd/fwd+tp",
              "tape B/tick", "bwd MAC/tick");
  for (double eps : {0.5, 0.1}) {
    p.half_width = eps;
    auto net = network(p);
    egret::SimOptions<Scalar> opt;
    opt.end_time = static_cast<Scalar>(ticks);
    opt.record_trace = false;
    opt.readout_windows = {{0.0, static_cast<Scalar>(ticks)}};
    double fwd = 1e30, taped = 1e30, bwd = 1e30;
    egret::BackwardReport report;
    std::size_t bytes = 0;
    double activity = 0;
    for (int r = 0; r < reps; ++r) {
      opt.tape = nullptr;
      auto t0 = std::chrono::steady_clock::now();
      const auto plain = egret::simulate(net, in, opt);
      fwd = std::min(fwd, seconds_since(t0));
      activity = 1.0 - plain.activity_sparsity(0);
      egret::Tape<Scalar> tape;
      opt.tape = &tape;
      t0 = std::chrono::steady_clock::now();
      const auto result = egret::simulate(net, in, opt);
      taped = std::min(taped, seconds_since(t0));
      bytes = tape.bytes();
      auto grad = egret::zero_gradient(net, in.size());
      const std::vector<std::vector<Scalar>> d_o = {std::vector<Scalar>(n, 1.0)};
      t0 = std::chrono::steady_clock::now();
      report = egret::reverse_sweep(net, tape, result, d_o, grad);
      bwd = std::min(bwd, seconds_since(t0));
      if (!report.ok()) {
        std::printf("backward pass failed: %s\n", report.first_problem.c_str());
        return 1;
      }
    }
    std::printf("%10.2f %7.1f%% %8.1f%% %12.2f %12.2f %12.2f %9.2f %11.2f %13.0f %14.0f\n", eps,
                100 * activity, 100 * report.backward_sparsity(), 1e3 * fwd, 1e3 * taped, 1e3 * bwd,
                bwd / fwd, bwd / taped, static_cast<double>(bytes) / static_cast<double>(ticks),
                static_cast<double>(report.backward_macs) / static_cast<double>(ticks));
  }
  std::printf("(a dense copy of c per tick alone is %lld B; dense BPTT would be ~%lld MAC/tick)\n",
              static_cast<long long>(n * sizeof(Scalar)), static_cast<long long>(6 * n * (n + d)));
  return 0;
}
