// Minibatch training of continuous EGRU networks with the exact gradients: per sample a forward
// pass that records the tape, the loss at the readouts, the backward pass; the samples of a
// minibatch run in parallel with TBB and their gradients are summed in sample order, so a run
// gives the same numbers for any thread count.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "adjoint/continuous_egru_backward.hpp"
#include "adjoint/losses.hpp"
#include "sim/engine.hpp"
#include "train/optimizer.hpp"
#include "train/parameters.hpp"

namespace egret {

// One training or test example: an input stream, when to read out, and what the logits should
// say there.
template <class Scalar>
struct Sample {
  InputStream<Scalar> input;
  Scalar end_time = 0;
  std::vector<Scalar> readout_times;
  std::vector<std::pair<Scalar, Scalar>> readout_windows;  // targets follow the points' targets
  ReadoutTargets<Scalar> targets;
};

struct TrainConfig {
  OptimizerConfig optimizer;
  LossKind loss = LossKind::kSoftmaxCrossEntropy;
  int epochs = 10;
  int batch_size = 16;
  std::uint64_t seed = 1;
  int threads = 0;  // <= 0: all cores
  bool train_time_constants = false;
  ActivityRegularizer activity;  // added to the loss if weight > 0
};

struct BatchStats {
  double loss = 0;  // mean over samples
  int correct = 0, total = 0;
  std::uint64_t events = 0;         // emitted events, all layers, all samples
  std::uint64_t steps = 0;          // events processed by the forward passes
  double unit_seconds = 0;          // units x simulated seconds, for events per unit per second
  std::size_t skipped_samples = 0;  // samples whose backward pass met non-finite values
  std::size_t grazing = 0, simultaneous = 0;
  double grad_norm = 0;  // before clipping (mean over the optimizer steps summed here)
  int optimizer_steps = 0;
  double accuracy() const { return total ? static_cast<double>(correct) / total : 0; }
  double rate_per_unit() const { return unit_seconds > 0 ? events / unit_seconds : 0; }
  void add(const BatchStats& o) {
    loss += o.loss;
    correct += o.correct;
    total += o.total;
    events += o.events;
    steps += o.steps;
    unit_seconds += o.unit_seconds;
    skipped_samples += o.skipped_samples;
    grazing += o.grazing;
    simultaneous += o.simultaneous;
    grad_norm = (grad_norm * optimizer_steps + o.grad_norm * o.optimizer_steps) /
                std::max(1, optimizer_steps + o.optimizer_steps);
    optimizer_steps += o.optimizer_steps;
  }
};

template <class Scalar>
class Trainer {
 public:
  Trainer(const Network<Scalar>& initial, const TrainConfig& cfg)
      : cfg_(cfg),
        params_(initial, cfg.train_time_constants),
        optimizer_(cfg.optimizer, params_.size()),
        rng_(cfg.seed) {
    if (cfg.batch_size <= 0) throw std::invalid_argument("training: batch_size must be > 0");
    if (cfg.epochs < 0) throw std::invalid_argument("training: epochs must be >= 0");
  }

  Network<Scalar> network() const { return params_.network(); }
  ParameterVector<Scalar>& parameters() { return params_; }
  Optimizer<Scalar>& optimizer() { return optimizer_; }
  std::mt19937_64& rng() { return rng_; }

  // One pass over `train` in a seeded random order; returns summed statistics (loss is the mean
  // over samples).
  BatchStats train_epoch(const std::vector<Sample<Scalar>>& train) {
    std::vector<std::size_t> order(train.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng_);
    BatchStats epoch;
    for (std::size_t start = 0; start < order.size();
         start += static_cast<std::size_t>(cfg_.batch_size)) {
      const std::size_t end =
          std::min(order.size(), start + static_cast<std::size_t>(cfg_.batch_size));
      std::vector<const Sample<Scalar>*> batch;
      for (std::size_t i = start; i < end; ++i) batch.push_back(&train[order[i]]);
      epoch.add(train_step(batch));
    }
    epoch.loss /= static_cast<double>(std::max<std::size_t>(1, train.size()));
    return epoch;
  }

  // One optimizer step on a minibatch. Samples whose backward pass reported non-finite values are
  // left out of the average (and counted); if all are, no step is taken.
  BatchStats train_step(const std::vector<const Sample<Scalar>*>& batch) {
    const Network<Scalar> net = params_.network();
    std::vector<Outcome> out(batch.size());
    run_parallel(
        batch.size(),
        [&](std::size_t i, Network<Scalar>& local) { out[i] = run_sample(local, *batch[i], true); },
        net);
    BatchStats stats;
    std::vector<Scalar> sum(params_.size(), 0);
    std::size_t used = 0;
    for (const Outcome& o : out) {  // in sample order: deterministic
      stats.add(o.stats);
      if (!o.report.ok()) continue;
      for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += o.grad[k];
      ++used;
    }
    if (used > 0) {
      for (Scalar& v : sum) v /= static_cast<Scalar>(used);
      stats.grad_norm = clip_global_norm(sum, cfg_.optimizer.clip_norm);
      stats.optimizer_steps = 1;
      optimizer_.step(params_.values(), sum);
    }
    return stats;
  }

  // Loss and accuracy on `samples` without gradients (mean loss over samples).
  BatchStats evaluate(const std::vector<Sample<Scalar>>& samples) const {
    const Network<Scalar> net = params_.network();
    std::vector<Outcome> out(samples.size());
    run_parallel(
        samples.size(),
        [&](std::size_t i, Network<Scalar>& local) {
          out[i] = run_sample(local, samples[i], false);
        },
        net);
    BatchStats stats;
    for (const Outcome& o : out) stats.add(o.stats);
    stats.loss /= static_cast<double>(std::max<std::size_t>(1, samples.size()));
    return stats;
  }

 private:
  struct Outcome {
    BatchStats stats;
    BackwardReport report;
    std::vector<Scalar> grad;
  };

  template <class F>
  void run_parallel(std::size_t n, F&& f, const Network<Scalar>& net) const {
    tbb::task_arena arena(cfg_.threads > 0 ? cfg_.threads : tbb::task_arena::automatic);
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n),
                        [&](const tbb::blocked_range<std::size_t>& r) {
                          Network<Scalar> local = net.clone();
                          for (std::size_t i = r.begin(); i != r.end(); ++i) f(i, local);
                        });
    });
  }

  Outcome run_sample(Network<Scalar>& net, const Sample<Scalar>& s, bool with_gradient) const {
    Tape<Scalar> tape;
    SimOptions<Scalar> opt;
    opt.end_time = s.end_time;
    opt.readout_times = s.readout_times;
    opt.readout_windows = s.readout_windows;
    opt.record_trace = false;
    if (with_gradient) opt.tape = &tape;
    const SimResult<Scalar> fwd = simulate(net, s.input, opt);
    const LossResult<Scalar> loss = evaluate_loss(cfg_.loss, fwd.readouts, s.targets);
    const ActivityTerm<Scalar> act = with_gradient
                                         ? activity_term(net, tape, s.end_time, cfg_.activity)
                                         : ActivityTerm<Scalar>{};
    Outcome o;
    o.stats.loss = static_cast<double>(loss.loss + act.value);
    o.stats.correct = loss.correct;
    o.stats.total = loss.total;
    o.stats.steps = fwd.events_processed;
    for (const auto& l : fwd.layers) {
      o.stats.events += l.events;
      o.stats.unit_seconds += static_cast<double>(l.units) * static_cast<double>(s.end_time) * 1e-3;
    }
    if (with_gradient) {
      Gradient<Scalar> g = zero_gradient(net, s.input.size());
      const auto d_o = readout_backward(net, fwd, loss.dlogits, g);
      o.report = continuous_egru_backward(net, tape, fwd, d_o, g, &act);
      o.stats.skipped_samples = o.report.ok() ? 0 : 1;
      o.stats.grazing = o.report.grazing_crossings;
      o.stats.simultaneous = o.report.simultaneous_crossings;
      o.grad = params_.flatten(g);
    }
    return o;
  }

  TrainConfig cfg_;
  ParameterVector<Scalar> params_;
  Optimizer<Scalar> optimizer_;
  std::mt19937_64 rng_;
};

}  // namespace egret
