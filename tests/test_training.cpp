// Training: the flat parameter vector's gradient (with the positivity transforms) against finite
// differences, Adam and clipping against their formulas, window readouts against a closed form
// computed from the event trace, determinism over thread counts, checkpoint/resume equivalence,
// the delay-copy example reaching 100 % bitwise accuracy on held-out trials, and the one rule for
// samples with non-finite backward passes that the trainer and the Python module share.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "adjoint/losses.hpp"
#include "events/synthetic_input.hpp"
#include "io/config/train_config.hpp"
#include "io/hdf5/checkpoint.hpp"
#include "models/continuous_egru/continuous_egru_layer.hpp"
#include "train/batch_gradient.hpp"
#include "train/delay_copy_task.hpp"

namespace {

using egret::Index;
using P = egret::ContinuousEgruParams<double>;

egret::Network<double> small_network() {
  P::RandomInit init;
  init.weight_scale = 1.2;
  init.bias_z = 0.8;
  P p0 = P::random(5, 3, 7, init, /*self_recurrence=*/true);
  p0.window_input = 3;
  p0.window_recurrent = 2;
  p0.tau_m.setConstant(4);
  p0.tau_o.setConstant(5);
  P p1 = P::random(3, 5, 8, init);
  p1.window_input = 4;
  p1.tau_m.setConstant(3);
  p1.tau_o.setConstant(6);
  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(p0)));
  net.add_layer(std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(p1)));
  egret::Readout<double> ro;
  ro.W_o = egret::Matrix<double>::Constant(2, 3, 0.4);
  ro.W_o(1, 2) = -0.7;
  ro.b_o = egret::Vector<double>::Constant(2, -0.2);
  net.set_readout(ro);
  return net;
}

egret::Sample<double> small_sample() {
  egret::Sample<double> s;
  s.input = egret::poisson_input<double>(3, 150.0, 40.0, 5);
  s.end_time = 40;
  s.readout_times = {25};
  s.readout_windows = {{10, 30}, {30, 39}};
  s.targets.labels = {1, 0, 1};
  return s;
}

double loss_of(const egret::ParameterVector<double>& pv, const egret::Sample<double>& s,
               egret::Gradient<double>* grad, std::size_t* steps) {
  auto net = pv.network();
  egret::Tape<double> tape;
  egret::SimOptions<double> opt;
  opt.end_time = s.end_time;
  opt.readout_times = s.readout_times;
  opt.readout_windows = s.readout_windows;
  opt.tape = &tape;
  const auto fwd = egret::simulate(net, s.input, opt);
  const auto loss =
      egret::evaluate_loss(egret::LossKind::kSoftmaxCrossEntropy, fwd.readouts, s.targets);
  if (steps) *steps = tape.steps.size();
  if (grad) {
    *grad = egret::zero_gradient(net, s.input.size());
    const auto d_o = egret::readout_backward(net, fwd, loss.dlogits, *grad);
    egret::reverse_sweep(net, tape, fwd, d_o, *grad);
  }
  return loss.loss;
}

TEST(Training, FlatGradientMatchesFiniteDifferencesInTrainingCoordinates) {
  const auto net = small_network();
  const auto s = small_sample();
  egret::ParameterVector<double> pv(net, /*train_time_constants=*/true);
  egret::Gradient<double> g;
  std::size_t steps0 = 0;
  loss_of(pv, s, &g, &steps0);
  const auto flat = pv.flatten(g);
  ASSERT_EQ(flat.size(), pv.size());
  // Every theta (softplus) and time constant (log) entry, and a stride through the rest.
  // Layer 0 has self-recurrence, layer 1 not (the default): the diagonal of its V is no
  // parameter, the layer refuses to vary it, and its gradient must be exactly 0.
  int checked = 0, refused = 0;
  double worst = 0;
  for (std::size_t i = 0; i < pv.size(); i += (i % 7 == 0 ? 1 : 3)) {
    auto q = pv;
    const double h = 1e-5;
    double f[2];
    bool same = true;
    try {
      for (int k = 0; k < 2; ++k) {
        q.values()[i] = pv.values()[i] + (k == 0 ? h : -h);
        std::size_t steps = 0;
        f[k] = loss_of(q, s, nullptr, &steps);
        same = same && steps == steps0;
      }
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("self-recurrence"), std::string::npos) << e.what();
      EXPECT_EQ(flat[i], 0.0) << "entry " << i;
      ++refused;
      continue;
    }
    if (!same) continue;
    const double fd = (f[0] - f[1]) / (2 * h);
    const double err = std::abs(fd - flat[i]) / std::max({std::abs(fd), std::abs(flat[i]), 1e-4});
    worst = std::max(worst, err);
    EXPECT_LE(err, 1e-5) << "entry " << i << ": " << flat[i] << " vs " << fd;
    ++checked;
  }
  EXPECT_GT(checked, 40);
  EXPECT_GT(refused, 0);
  std::printf("  %d entries checked, worst relative error %.2e; %d diagonal entries refused\n",
              checked, worst, refused);
}

TEST(Training, AdamAndSgdFollowTheirFormulas) {
  egret::OptimizerConfig cfg;
  cfg.learning_rate = 0.1;
  egret::Optimizer<double> adam(cfg, 2);
  std::vector<double> x = {1.0, -2.0};
  adam.step(x, {0.5, -4.0});
  // t = 1: m = 0.1 g, v = 0.001 g^2, mhat = g, vhat = g^2: step = lr g / (|g| + eps).
  EXPECT_NEAR(x[0], 1.0 - 0.1 * 0.5 / (0.5 + 1e-8), 1e-15);
  EXPECT_NEAR(x[1], -2.0 + 0.1 * 4.0 / (4.0 + 1e-8), 1e-15);
  adam.step(x, {1.0, 0.0});
  const double m = 0.9 * 0.05 + 0.1 * 1.0, v = 0.999 * 0.00025 + 0.001 * 1.0;
  const double mhat = m / (1 - 0.81), vhat = v / (1 - 0.999 * 0.999);
  EXPECT_NEAR(x[0], 1.0 - 0.1 * 0.5 / (0.5 + 1e-8) - 0.1 * mhat / (std::sqrt(vhat) + 1e-8), 1e-14);
  cfg.kind = "sgd";
  egret::Optimizer<double> sgd(cfg, 1);
  std::vector<double> y = {3.0};
  sgd.step(y, {2.0});
  EXPECT_DOUBLE_EQ(y[0], 2.8);
  std::vector<double> g = {3.0, 4.0};
  EXPECT_DOUBLE_EQ(egret::clip_global_norm(g, 1.0), 5.0);
  EXPECT_DOUBLE_EQ(g[0], 0.6);
  EXPECT_DOUBLE_EQ(g[1], 0.8);
  cfg.learning_rate = -1;
  EXPECT_THROW(egret::Optimizer<double>(cfg, 1), std::invalid_argument);
}

// The mean of o over [a, b], from the events alone:
//   (1/(b - a)) sum_k y_k tau_o (e^{-(max(a, s_k) - s_k)/tau_o} - e^{-(b - s_k)/tau_o}), s_k <= b.
TEST(Training, WindowReadoutEqualsClosedFormFromTheEvents) {
  auto net = small_network();
  const auto s = small_sample();
  egret::SimOptions<double> opt;
  opt.end_time = s.end_time;
  opt.readout_windows = s.readout_windows;
  const auto r = egret::simulate(net, s.input, opt);
  const double tau_o = 6;  // the last layer's
  std::size_t last_layer_events = 0;
  for (std::size_t j = 0; j < s.readout_windows.size(); ++j) {
    const auto [a, b] = s.readout_windows[j];
    std::vector<double> mean(3, 0);
    for (const auto& e : r.trace) {
      if (e.layer != 1 || e.time > b) continue;
      mean[static_cast<std::size_t>(e.unit)] +=
          e.value * tau_o *
          (std::exp(-(std::max(a, e.time) - e.time) / tau_o) - std::exp(-(b - e.time) / tau_o)) /
          (b - a);
    }
    for (std::size_t n = 0; n < 3; ++n) EXPECT_NEAR(r.readouts[j].trace[n], mean[n], 1e-13);
    EXPECT_EQ(r.readouts[j].begin, a);
    EXPECT_EQ(r.readouts[j].time, b);
  }
  for (const auto& e : r.trace) last_layer_events += e.layer == 1;
  EXPECT_GT(last_layer_events, 10u);
}

// The activity sparsity printed per epoch covers event-driven layers too: active (unit, bin)
// pairs in the run's dense_step bins ((k - 1) step, k step], counted here by hand from the event
// trace of a plain simulation, over all unit-bins of both layers.
TEST(Training, ActivitySparsityCountsEventDrivenLayersInDenseStepBins) {
  auto net = small_network();
  const auto s = small_sample();
  egret::TrainConfig tc;
  tc.loss = egret::LossKind::kSoftmaxCrossEntropy;
  tc.run.dense_step = 2.5;
  egret::Trainer<double> trainer(net, tc);
  const egret::BatchStats stats = trainer.evaluate({s, s});
  egret::SimOptions<double> opt;
  opt.end_time = s.end_time;
  const auto r = egret::simulate(net, s.input, opt);
  std::set<std::tuple<Index, Index, long>> active;
  for (const auto& e : r.trace)
    active.emplace(e.layer, e.unit, std::max(1L, static_cast<long>(std::ceil(e.time / 2.5))));
  const double unit_bins = (5 + 3) * 16.0;  // 40 ms in 2.5 ms bins, 5 and 3 units
  ASSERT_GT(active.size(), 20u);
  EXPECT_DOUBLE_EQ(stats.activity_sparsity(), 1.0 - static_cast<double>(active.size()) / unit_bins);
}

egret::TrainRunConfig delay_copy_config() {
  return egret::load_train_config(std::string(EGRET_SOURCE_DIR) + "/examples/delay_copy.json");
}

TEST(Training, SameResultForOneAndTwoThreads) {
  auto cfg = delay_copy_config();
  const auto train = egret::delay_copy_trials<double>(cfg.delay_copy, 32, 5);
  std::vector<std::vector<double>> values;
  for (int threads : {1, 2}) {
    cfg.training.threads = threads;
    egret::Trainer<double> trainer(egret::build_network<double>(cfg.network), cfg.training);
    for (int e = 0; e < 4; ++e) trainer.train_epoch(train);
    values.push_back(trainer.parameters().values());
  }
  EXPECT_EQ(values[0], values[1]);
}

// Training in float (the default precision) follows training in double within float's
// rounding: the same trials, network and seed, three epochs of the delay-copy example. The
// double run is the verified one (its gradients against finite differences above).
TEST(Training, FloatTrainingFollowsDoubleWithinFloatRounding) {
  auto cfg = delay_copy_config();
  const auto train_d = egret::delay_copy_trials<double>(cfg.delay_copy, 32, 5);
  const auto train_f = egret::cast_samples<float>(train_d);
  egret::Trainer<double> d(egret::build_network<double>(cfg.network), cfg.training);
  egret::Trainer<float> f(egret::build_network<float>(cfg.network), cfg.training);
  ASSERT_EQ(d.parameters().size(), f.parameters().size());
  double worst_loss = 0;
  for (int e = 0; e < 3; ++e) {
    const double ld = d.train_epoch(train_d).loss, lf = f.train_epoch(train_f).loss;
    worst_loss = std::max(worst_loss, std::abs(lf - ld) / std::abs(ld));
  }
  const auto& vd = d.parameters().values();
  const auto& vf = f.parameters().values();
  double diff = 0, norm = 0, moved = 0;
  const auto initial = egret::ParameterVector<double>(egret::build_network<double>(cfg.network),
                                                      cfg.training.train_time_constants)
                           .values();
  for (std::size_t i = 0; i < vd.size(); ++i) {
    diff += (vf[i] - vd[i]) * (vf[i] - vd[i]);
    norm += vd[i] * vd[i];
    moved += (vd[i] - initial[i]) * (vd[i] - initial[i]);
  }
  std::printf(
      "  float vs double, 3 epochs: worst loss difference %.2e relative; parameters "
      "%.2e relative (training moved them %.2e)\n",
      worst_loss, std::sqrt(diff / norm), std::sqrt(moved / norm));
  EXPECT_LT(worst_loss, 1e-4);
  EXPECT_LT(std::sqrt(diff / norm), 1e-4);
  EXPECT_GT(std::sqrt(moved / norm), 1e-2);  // the comparison is of trained parameters
}

TEST(Training, ResumedRunEqualsUninterruptedRun) {
  const auto cfg = delay_copy_config();
  const auto train = egret::delay_copy_trials<double>(cfg.delay_copy, 32, 5);
  egret::Trainer<double> full(egret::build_network<double>(cfg.network), cfg.training);
  std::vector<double> losses_full;
  for (int e = 0; e < 6; ++e) losses_full.push_back(full.train_epoch(train).loss);

  egret::Trainer<double> first(egret::build_network<double>(cfg.network), cfg.training);
  std::vector<double> losses;
  for (int e = 0; e < 3; ++e) losses.push_back(first.train_epoch(train).loss);
  egret::Checkpoint c;
  c.values = first.parameters().values();
  c.adam_m = first.optimizer().first_moment();
  c.adam_v = first.optimizer().second_moment();
  c.optimizer_steps = first.optimizer().steps();
  std::ostringstream rs;
  rs << first.rng();
  c.rng_state = rs.str();
  const std::string path = ::testing::TempDir() + "/egret_ckpt.h5";
  egret::write_checkpoint(path, c);
  const egret::Checkpoint back = egret::read_checkpoint(path);

  egret::Trainer<double> second(egret::build_network<double>(cfg.network), cfg.training);
  second.parameters().values() = back.values;
  second.optimizer().restore(back.adam_m, back.adam_v, back.optimizer_steps);
  std::istringstream is(back.rng_state);
  is >> second.rng();
  for (int e = 0; e < 3; ++e) losses.push_back(second.train_epoch(train).loss);
  EXPECT_EQ(losses, losses_full);
  EXPECT_EQ(second.parameters().values(), full.parameters().values());
}

// A stop request (Ctrl-C) is polled before every minibatch: set before the epoch, nothing is
// trained (the parameters and the optimizer are untouched); cleared, the epoch runs all four.
// (Requests during an epoch: tests/python/test_interrupt_resume.py.)
TEST(Training, StopRequestEndsTheEpochAtAMinibatchBoundary) {
  const auto cfg = delay_copy_config();
  const auto train = egret::delay_copy_trials<double>(cfg.delay_copy, 64, 5);  // 4 minibatches
  egret::Trainer<double> t(egret::build_network<double>(cfg.network), cfg.training);
  const auto before = t.parameters().values();
  std::atomic<bool> stop{true};
  const egret::BatchStats none = t.train_epoch(train, &stop);
  EXPECT_TRUE(none.stopped_early);
  EXPECT_EQ(none.optimizer_steps, 0);
  EXPECT_EQ(t.parameters().values(), before);
  EXPECT_EQ(t.optimizer().steps(), 0);
  stop = false;
  const egret::BatchStats whole = t.train_epoch(train, &stop);
  EXPECT_FALSE(whole.stopped_early);
  EXPECT_EQ(whole.optimizer_steps, 4);
  EXPECT_EQ(whole.total, 64 * 2 * 2);  // 2 bits in 2 readout windows per trial
}

// The example of the README: two units, exact gradients, 100 % on new trials.
TEST(Training, DelayCopyExampleReachesFullHeldOutAccuracy) {
  const auto cfg = delay_copy_config();
  const auto train =
      egret::delay_copy_trials<double>(cfg.delay_copy, cfg.train_trials, cfg.task_seed);
  const auto test =
      egret::delay_copy_trials<double>(cfg.delay_copy, cfg.test_trials, cfg.task_seed + 1);
  egret::Trainer<double> trainer(egret::build_network<double>(cfg.network), cfg.training);
  const double before = trainer.evaluate(test).accuracy();
  // The stopping rule of `egret train`: held-out accuracy at the target for stop_patience epochs.
  int first_full = -1, streak = 0, epoch = 0;
  while (epoch < cfg.training.epochs && streak < cfg.stop_patience) {
    ++epoch;
    trainer.train_epoch(train);
    streak = trainer.evaluate(test).accuracy() >= cfg.stop_at_test_accuracy ? streak + 1 : 0;
    if (streak == 1 && first_full < 0) first_full = epoch;
  }
  const auto fresh = egret::delay_copy_trials<double>(cfg.delay_copy, 256, 999);
  const double fresh_accuracy = trainer.evaluate(fresh).accuracy();
  std::printf(
      "  held-out bitwise accuracy %.1f%% before training, 100%% first at epoch %d, "
      "stopped at epoch %d; 256 fresh trials: %.1f%%\n",
      100 * before, first_full, epoch, 100 * fresh_accuracy);
  EXPECT_LT(before, 0.9);
  EXPECT_EQ(streak, cfg.stop_patience) << "never held 100 % held-out accuracy";
  EXPECT_EQ(trainer.evaluate(test).accuracy(), 1.0);
  EXPECT_EQ(fresh_accuracy, 1.0);
}

TEST(Training, LossErrorsNameTheProblem) {
  std::vector<egret::ReadoutRecord<double>> r(1);
  r[0].logits = {0.1, 0.2};
  egret::ReadoutTargets<double> t;
  t.labels = {2};
  EXPECT_THROW(egret::evaluate_loss(egret::LossKind::kSoftmaxCrossEntropy, r, t),
               std::invalid_argument);
  t.values = {{0.5, 2.0}};
  EXPECT_THROW(egret::evaluate_loss(egret::LossKind::kBinaryCrossEntropy, r, t),
               std::invalid_argument);
  t.values = {{0.5}};
  EXPECT_THROW(egret::evaluate_loss(egret::LossKind::kMeanSquaredError, r, t),
               std::invalid_argument);
  EXPECT_THROW(egret::parse_loss_kind("hinge"), std::invalid_argument);
}

}  // namespace

// "training": {"prune": {"after_epoch": E, "keep": f}}: magnitude pruning of a continuous layer.
// Each sender keeps its round(f N) largest connections (|w_u| + |w_r| + |w_z|) with their values;
// the others become 0, their Adam moments are forgotten, the layer becomes sparse, and further
// training leaves them at 0 while the kept ones go on learning. Pruning again cuts nothing.
TEST(Training, PruningKeepsTheLargestConnectionsAndTrainingKeepsTheCutOnesAbsent) {
  const std::string text = R"({
    "seed": 3, "input_channels": 3,
    "layers": [{"type": "continuous_egru", "units": 10, "tau_m": 5, "tau_o": 5,
                "window_input": "inf", "window_recurrent": 5, "threshold": 0.3,
                "init": {"weight_scale": 1.0, "bias_z": 0.5, "bias_spread": 0.2}}],
    "readout_classes": 2,
    "task": {"name": "delay_copy", "bits": 2, "train_trials": 32, "test_trials": 8, "seed": 2,
             "delay_min": 30, "delay_max": 40, "recall_begin": 1, "recall_end": 11},
    "training": {"optimizer": "adam", "learning_rate": 0.01, "epochs": 3, "batch_size": 8,
                 "loss": "binary_cross_entropy", "prune": {"after_epoch": 1, "keep": 0.3}}})";
  const auto cfg = egret::parse_train_config(text, "prune.json");
  EXPECT_EQ(cfg.training.prune_after_epoch, 1);
  EXPECT_EQ(cfg.training.prune_keep, 0.3);
  const auto train = egret::delay_copy_trials<double>(cfg.delay_copy, 32, 5);
  egret::Trainer<double> trainer(egret::build_network<double>(cfg.network), cfg.training);
  trainer.train_epoch(train);
  using Layer = egret::ContinuousEgruLayer<double>;
  const auto before = dynamic_cast<const Layer&>(trainer.network().layer(0)).params();
  ASSERT_FALSE(before.sparse);
  const std::size_t cut = trainer.prune();
  // Per gate: 3 channels keep 3 of 10 receivers; 10 units keep 3 of their 9 (without
  // self-recurrence a unit is no receiver of its own events).
  EXPECT_EQ(cut, 3u * (3 * 7 + 10 * 6));
  const auto pruned = dynamic_cast<const Layer&>(trainer.network().layer(0)).params();
  EXPECT_TRUE(pruned.sparse);
  auto check = [](const egret::Matrix<double>* b, const egret::Matrix<double>* p) {
    for (egret::Index k = 0; k < p[0].cols(); ++k) {
      std::vector<double> size(10), kept;
      for (egret::Index m = 0; m < 10; ++m) {
        size[static_cast<std::size_t>(m)] =
            std::abs(b[0](m, k)) + std::abs(b[1](m, k)) + std::abs(b[2](m, k));
        if (p[0](m, k) != 0) kept.push_back(size[static_cast<std::size_t>(m)]);
        for (int g = 0; g < 3; ++g)
          EXPECT_TRUE(p[g](m, k) == 0 || p[g](m, k) == b[g](m, k)) << "kept values unchanged";
      }
      ASSERT_EQ(kept.size(), 3u) << "column " << k;
      std::sort(size.rbegin(), size.rend());
      std::sort(kept.rbegin(), kept.rend());
      EXPECT_EQ(kept, std::vector<double>(size.begin(), size.begin() + 3)) << "column " << k;
    }
  };
  const egret::Matrix<double> bU[3] = {before.U_u, before.U_r, before.U_z};
  const egret::Matrix<double> pU[3] = {pruned.U_u, pruned.U_r, pruned.U_z};
  const egret::Matrix<double> bV[3] = {before.V_u, before.V_r, before.V_z};
  const egret::Matrix<double> pV[3] = {pruned.V_u, pruned.V_r, pruned.V_z};
  check(bU, pU);
  check(bV, pV);
  std::size_t forgotten = 0;
  const auto& values = trainer.parameters().values();
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] == 0) forgotten += trainer.optimizer().first_moment()[i] == 0;
  EXPECT_GE(forgotten, cut);

  trainer.train_epoch(train);
  trainer.train_epoch(train);
  const auto after = dynamic_cast<const Layer&>(trainer.network().layer(0)).params();
  EXPECT_EQ((after.V_u.array() != 0).cast<int>().matrix(),
            (pruned.V_u.array() != 0).cast<int>().matrix());
  EXPECT_EQ((after.U_z.array() != 0).cast<int>().matrix(),
            (pruned.U_z.array() != 0).cast<int>().matrix());
  EXPECT_GT((after.V_u - pruned.V_u).cwiseAbs().maxCoeff(), 0) << "kept connections train";
  EXPECT_EQ(trainer.prune(), 0u);

  EXPECT_THROW(
      egret::parse_train_config(
          std::string(text).replace(text.find("\"keep\": 0.3"), 11, "\"keep\": 0.0"), "prune.json"),
      std::invalid_argument);
}

namespace {

std::vector<egret::Sample<double>> three_samples() {
  std::vector<egret::Sample<double>> v(3, small_sample());
  v[1].input = egret::poisson_input<double>(3, 120.0, 40.0, 6);
  v[2].input = egret::poisson_input<double>(3, 90.0, 40.0, 7);
  return v;
}

}  // namespace

// batch_outcomes gives each sample what sample_loss_and_gradient gives it alone, at its index,
// on two threads.
TEST(BatchGradient, OutcomesEqualTheSamplesRunAlone) {
  const auto net = small_network();
  const auto samples = three_samples();
  egret::BatchRequest request;
  request.threads = 2;
  const auto out = egret::batch_outcomes(
      net, samples.size(),
      [&](std::size_t i) -> const egret::Sample<double>& { return samples[i]; }, request);
  ASSERT_EQ(out.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    auto local = net.clone();
    const auto alone = egret::sample_loss_and_gradient(local, samples[i],
                                                       egret::LossKind::kSoftmaxCrossEntropy, true);
    EXPECT_EQ(out[i].loss.loss, alone.loss.loss) << i;
    EXPECT_EQ(out[i].grad.W_o, alone.grad.W_o) << i;
    EXPECT_EQ(out[i].grad.input_time, alone.grad.input_time) << i;
  }
  EXPECT_NE(out[0].loss.loss, out[1].loss.loss);  // the samples differ
}

// kLeaveOut (the trainer) drops a sample whose backward pass met non-finite values from the sum
// and its divisor; kRefuse (the Python module) names it.
TEST(BatchGradient, NonFiniteSampleIsLeftOutOrRefusedByName) {
  const auto net = small_network();
  const auto samples = three_samples();
  auto out = egret::batch_outcomes(
      net, samples.size(),
      [&](std::size_t i) -> const egret::Sample<double>& { return samples[i]; },
      egret::BatchRequest{});
  out[1].report.nonfinite_steps = 2;
  out[1].report.first_problem = "non-finite adjoint at step 7";
  std::vector<std::size_t> seen;
  egret::Matrix<double> sum = egret::Matrix<double>::Zero(2, 3);
  const std::size_t used = egret::sum_gradients(
      out, egret::NonFiniteSamples::kLeaveOut, [&](const egret::SampleOutcome<double>& o) {
        seen.push_back(static_cast<std::size_t>(&o - out.data()));
        sum += o.grad.W_o;
      });
  EXPECT_EQ(used, 2u);
  EXPECT_EQ(seen, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(sum, out[0].grad.W_o + out[2].grad.W_o);
  try {
    egret::sum_gradients(out, egret::NonFiniteSamples::kRefuse,
                         [](const egret::SampleOutcome<double>&) {});
    FAIL() << "kRefuse accepted a non-finite sample";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "backward pass, sample 1: non-finite adjoint at step 7");
  }
  out[1].report.nonfinite_steps = 0;
  EXPECT_EQ(egret::sum_gradients(out, egret::NonFiniteSamples::kRefuse,
                                 [](const egret::SampleOutcome<double>&) {}),
            3u);
}

// batch_gradient_sum adds the gradients in sample order as the batch runs: bitwise the sum
// sum_gradients forms afterwards, on 1, 2 and 3 threads, and the outcomes keep the rest.
TEST(BatchGradient, SumWhileRunningIsBitwiseTheSumAfterwards) {
  const auto net = small_network();
  std::vector<egret::Sample<double>> samples;
  for (int k = 0; k < 7; ++k) {
    samples.push_back(small_sample());
    samples.back().input = egret::poisson_input<double>(3, 80.0 + 10 * k, 40.0, 11 + k);
  }
  auto at = [&](std::size_t i) -> const egret::Sample<double>& { return samples[i]; };
  egret::BatchRequest request;
  const auto stored = egret::batch_outcomes(net, samples.size(), at, request);
  egret::Matrix<double> expected = egret::Matrix<double>::Zero(2, 3);
  egret::sum_gradients(stored, egret::NonFiniteSamples::kRefuse,
                       [&](const egret::SampleOutcome<double>& o) { expected += o.grad.W_o; });
  egret::Matrix<double> expected_u;
  for (const auto& o : stored)
    expected_u = expected_u.size() ? egret::Matrix<double>(expected_u + o.grad.layers[0][0].value)
                                   : o.grad.layers[0][0].value;
  for (int threads : {1, 2, 3}) {
    request.threads = threads;
    egret::Matrix<double> sum = egret::Matrix<double>::Zero(2, 3), sum_u;
    std::vector<double> losses;  // of the samples as they are added
    const auto summed = egret::batch_gradient_sum(
        net, samples.size(), at, request, egret::NonFiniteSamples::kRefuse,
        [&](const egret::SampleOutcome<double>& o) {
          losses.push_back(o.loss.loss);
          sum += o.grad.W_o;
          const auto& u = o.grad.layers[0][0].value;
          sum_u = sum_u.size() ? egret::Matrix<double>(sum_u + u) : u;
        });
    EXPECT_EQ(summed.used, samples.size()) << threads;
    ASSERT_EQ(losses.size(), samples.size()) << threads;
    for (std::size_t i = 0; i < samples.size(); ++i)
      EXPECT_EQ(losses[i], stored[i].loss.loss) << threads << " threads, the " << i << "th added";
    EXPECT_EQ(sum, expected) << threads;      // bitwise
    EXPECT_EQ(sum_u, expected_u) << threads;  // bitwise, a layer's first parameter
    ASSERT_EQ(summed.outcomes.size(), samples.size());
    for (std::size_t i = 0; i < samples.size(); ++i) {
      EXPECT_EQ(summed.outcomes[i].loss.loss, stored[i].loss.loss) << i;
      EXPECT_EQ(summed.outcomes[i].grad.input_time, stored[i].grad.input_time) << i;
      EXPECT_TRUE(summed.outcomes[i].grad.layers.empty()) << i;  // its buffer went on
    }
  }
  EXPECT_NE(expected, egret::Matrix<double>::Zero(2, 3));
}

// OrderedGradientSum on outcomes finished out of order, by two threads: `add` sees them in index
// order; kLeaveOut skips a non-finite one, kRefuse names it; a spent buffer is handed on.
TEST(BatchGradient, OrderedSumAddsInIndexOrderAndAppliesTheRule) {
  for (auto rule : {egret::NonFiniteSamples::kLeaveOut, egret::NonFiniteSamples::kRefuse}) {
    std::vector<egret::SampleOutcome<double>> out(6);
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i].grad.layers.resize(1);
      out[i].grad.W_o = egret::Matrix<double>::Constant(1, 1, static_cast<double>(i));
    }
    out[3].report.nonfinite_steps = 1;
    out[3].report.first_problem = "non-finite adjoint at step 2";
    std::vector<double> seen;
    auto add = [&](const egret::SampleOutcome<double>& o) { seen.push_back(o.grad.W_o(0, 0)); };
    egret::OrderedGradientSum<double, decltype(add)> sum(out, rule, add);
    EXPECT_TRUE(sum.take_buffer().layers.empty());  // nothing spent yet
    std::thread other([&] {
      for (std::size_t i : {5u, 2u, 4u}) sum.done(i, false);
    });
    for (std::size_t i : {1u, 3u, 0u}) sum.done(i, false);
    other.join();
    if (rule == egret::NonFiniteSamples::kLeaveOut) {
      EXPECT_EQ(seen, (std::vector<double>{0, 1, 2, 4, 5}));
      EXPECT_EQ(sum.used(), 5u);
      EXPECT_EQ(sum.take_buffer().W_o.size(), 1);  // a spent buffer
    } else {
      EXPECT_EQ(seen, (std::vector<double>{0, 1, 2}));  // nothing after the refused sample
      try {
        (void)sum.used();
        FAIL() << "kRefuse accepted a non-finite sample";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "backward pass, sample 3: non-finite adjoint at step 2");
      }
    }
  }
}

// summed_backward_sweeps (ForwardBatch.backward): each sweep adds into a zeroed gradient, even
// when it is a recycled buffer, and the sum is the in-order one, bitwise, on 1 to 3 threads;
// kLeaveOut leaves out a non-finite sample, and an error is the lowest index's.
TEST(BatchGradient, SummedSweepsAddZeroedBuffersInSampleOrder) {
  const auto net = small_network();
  const std::size_t n = 9;
  auto term = [](std::size_t i) { return 1.0 / (3.0 + static_cast<double>(i)) + 1e8 * (i % 2); };
  auto sweep = [&](std::size_t i, egret::Gradient<double>& g) {
    g.W_o.array() += term(i);  // += : a buffer left unzeroed would show
    g.layers[1][0].value(0, 0) += -term(i);
    if (i % 3 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // out of order
    egret::BackwardReport r;
    if (i == 4) r.nonfinite_steps = 1;
    return r;
  };
  double expected = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (i != 4) expected += term(i);
  for (int threads : {1, 2, 3}) {
    const auto sum =
        egret::summed_backward_sweeps(net, n, threads, egret::NonFiniteSamples::kLeaveOut, sweep);
    EXPECT_EQ(sum.W_o(1, 2), expected) << threads;  // bitwise the in-order sum
    EXPECT_EQ(sum.layers[1][0].value(0, 0), -expected) << threads;
    EXPECT_EQ(sum.layers[1][0].value(1, 0), 0.0) << threads;
  }
  EXPECT_THROW(egret::summed_backward_sweeps(net, n, 2, egret::NonFiniteSamples::kRefuse, sweep),
               std::runtime_error);
  try {
    egret::summed_backward_sweeps(net, n, 2, egret::NonFiniteSamples::kRefuse,
                                  [&](std::size_t i, egret::Gradient<double>& g) {
                                    if (i >= 2) throw std::invalid_argument(std::to_string(i));
                                    return sweep(i, g);
                                  });
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "2");
  }
}

// An error in a batch is the lowest-index sample's, whatever order the threads ran in, with the
// outcomes stored or summed as the batch runs.
TEST(BatchGradient, ErrorsAreReportedInSampleOrder) {
  const auto net = small_network();
  const auto samples = three_samples();
  egret::BatchRequest request;
  request.threads = 2;
  auto sample_at = [&](std::size_t i) -> const egret::Sample<double>& {
    if (i > 0) throw std::invalid_argument("sample " + std::to_string(i));
    return samples[i];
  };
  auto expect_sample_1 = [](const auto& run_batch) {
    try {
      run_batch();
      FAIL() << "no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_STREQ(e.what(), "sample 1");
    }
  };
  for (int repeat = 0; repeat < 20; ++repeat) {
    expect_sample_1([&] { egret::batch_outcomes(net, 3, sample_at, request); });
    expect_sample_1([&] {
      egret::batch_gradient_sum(net, 3, sample_at, request, egret::NonFiniteSamples::kRefuse,
                                [](const egret::SampleOutcome<double>&) {});
    });
  }
}
