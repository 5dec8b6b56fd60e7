// Cost of the exact backward pass: time relative to the forward pass and tape memory per event,
// for one continuous EGRU layer (N = 64 ... 4096) over Poisson input, with a softmax readout
// over 10 window readouts. The forward pass is timed without and with the tape; the tape keeps
// the layer's state at checkpoints chosen automatically (about 64 bytes per step) and, for
// comparison, after every step (K = 1). The tape is reused across repetitions, as in training.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "adjoint/losses.hpp"
#include "adjoint/reverse_sweep.hpp"
#include "bench/continuous_bench_layer.hpp"
#include "events/synthetic_input.hpp"
#include "models/continuous_egru/continuous_egru_layer.hpp"
#include "sim/engine.hpp"

namespace {

using egret::Index;
using Clock = std::chrono::steady_clock;

template <class Scalar>
void run(Index n, double sim_ms, int reps, std::int64_t checkpoint_every) {
  using P = egret::ContinuousEgruParams<Scalar>;
  const Index d = 64, classes = 10;
  const P p = egret::bench::continuous_bench_params<Scalar>(n, d);
  egret::Network<Scalar> net;
  net.add_layer(std::make_unique<egret::ContinuousEgruLayer<Scalar>>(std::make_shared<P>(p)));
  egret::Readout<Scalar> ro;
  ro.W_o = egret::Matrix<Scalar>::Constant(classes, n, Scalar(0.01));
  ro.b_o = egret::Vector<Scalar>::Zero(classes);
  net.set_readout(ro);
  const auto input = egret::poisson_input<Scalar>(d, 50.0, sim_ms, 7);
  egret::SimOptions<Scalar> opt;
  opt.end_time = static_cast<Scalar>(sim_ms);
  opt.record_trace = false;
  egret::ReadoutTargets<Scalar> targets;
  for (int k = 0; k < 10; ++k) {
    opt.readout_windows.push_back(
        {static_cast<Scalar>(sim_ms * k / 10), static_cast<Scalar>(sim_ms * (k + 1) / 10)});
    targets.labels.push_back(k % static_cast<int>(classes));
  }
  double best_f0 = 1e30, best_f1 = 1e30, best_b = 1e30;
  std::size_t bytes = 0, steps = 0, processed = 0;
  egret::Tape<Scalar> tape;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    const auto plain = egret::simulate(net, input, opt);
    best_f0 = std::min(best_f0, std::chrono::duration<double>(Clock::now() - t0).count());
    auto opt_tape = opt;
    opt_tape.tape = &tape;
    opt_tape.tape_checkpoint_every = checkpoint_every;
    t0 = Clock::now();
    const auto fwd = egret::simulate(net, input, opt_tape);
    best_f1 = std::min(best_f1, std::chrono::duration<double>(Clock::now() - t0).count());
    t0 = Clock::now();
    const auto loss =
        egret::evaluate_loss(egret::LossKind::kSoftmaxCrossEntropy, fwd.readouts, targets);
    auto grad = egret::zero_gradient(net, input.size());
    const auto d_o = egret::readout_backward(net, fwd, loss.dlogits, grad);
    const auto report = egret::reverse_sweep(net, tape, fwd, d_o, grad);
    best_b = std::min(best_b, std::chrono::duration<double>(Clock::now() - t0).count());
    if (!report.ok()) std::printf("  backward reported: %s\n", report.first_problem.c_str());
    bytes = tape.bytes();
    steps = tape.steps.size();
    processed = plain.events_processed;
  }
  std::printf(
      "%-6s N=%4lld K=%-4s events %7zu  forward %7.2f ms  forward+tape %7.2f ms  backward %7.2f ms"
      "  backward/forward %.2f  (backward/forward+tape %.2f)  tape %7.1f bytes/event "
      "(%.1f per event per unit)\n",
      sizeof(Scalar) == 4 ? "float" : "double", static_cast<long long>(n),
      checkpoint_every == 0 ? "auto" : std::to_string(checkpoint_every).c_str(), processed,
      1e3 * best_f0, 1e3 * best_f1, 1e3 * best_b, best_b / best_f0, best_b / best_f1,
      static_cast<double>(bytes) / static_cast<double>(steps),
      static_cast<double>(bytes) / static_cast<double>(steps) / static_cast<double>(n));
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const double sim_ms = quick ? 100 : 1000;
  const int reps = quick ? 1 : 5;
  std::printf(
      "exact backward pass vs forward pass: one continuous EGRU layer, D = 64 Poisson "
      "inputs at 50 Hz, windows 5 ms, %.0f ms (N >= 1024: a fifth), 10 window readouts, "
      "softmax cross-entropy, one core, best of %d\n",
      sim_ms, reps);
  for (Index n : {64, 256, 1024, 4096}) {
    const bool large = n >= 1024;
    const double ms = large ? sim_ms / 5 : sim_ms;
    const int r = large ? std::max(1, reps / 2) : reps;
    for (std::int64_t k : {0, 1}) {
      if (n <= 1024) run<double>(n, ms, r, k);
      run<float>(n, ms, r, k);
    }
  }
  return 0;
}
