// Minibatch training of event-driven networks (any family with a backward pass: exact adjoint
// or BPTT) with their gradients: per sample a forward pass that records the tape, the loss at
// the readouts, the backward pass; the samples of a minibatch run in parallel with TBB and
// their gradients are summed in sample order, so a run gives the same numbers for any thread
// count.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sim/batch_runner.hpp"
#include "train/optimizer.hpp"
#include "train/parameters.hpp"
#include "train/sample.hpp"
#include "train/sample_gradient.hpp"

namespace egret {

struct TrainConfig {
  OptimizerConfig optimizer;
  LossKind loss = LossKind::kSoftmaxCrossEntropy;
  int epochs = 10;
  int batch_size = 16;
  std::uint64_t seed = 1;
  int threads = 0;  // <= 0: all cores
  bool train_time_constants = false;
  ActivityRegularizer activity;  // added to the loss if weight > 0
  RunSettings run;               // the network configuration's "simulation" settings
  // Magnitude pruning after epoch prune_after_epoch (0: never) to the prune_keep share of each
  // sender's connections, in every layer whose family has sparse connectivity.
  int prune_after_epoch = 0;
  double prune_keep = 1;
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
  // Surrogate-gradient families' backward pass (sim/layer_adjoint.hpp BackwardReport): (unit,
  // step) pairs visited, those with a zero pseudo-derivative, and the sweep's weight products.
  std::uint64_t surrogate_pairs = 0, zero_surrogate_pairs = 0, backward_macs = 0;
  double accuracy() const { return total ? static_cast<double>(correct) / total : 0; }
  // NaN when no layer has a surrogate gradient (an exact adjoint is not sparse in this sense).
  double backward_sparsity() const {
    return surrogate_pairs ? static_cast<double>(zero_surrogate_pairs) / surrogate_pairs
                           : std::nan("");
  }
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
    surrogate_pairs += o.surrogate_pairs;
    zero_surrogate_pairs += o.zero_surrogate_pairs;
    backward_macs += o.backward_macs;
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
    if (cfg.prune_after_epoch > 0) {
      bool prunable = false;
      for (Index l = 0; l < initial.size() && !prunable; ++l)
        prunable = initial.layer(l).prunable();
      if (!prunable)
        throw std::invalid_argument(
            "training.prune: no layer of this network has sparse connectivity (continuous_egru "
            "layers do)");
    }
  }

  Network<Scalar> network() const { return params_.network(); }
  const TrainConfig& config() const { return cfg_; }
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

  // Magnitude pruning (TrainConfig::prune_keep) of every layer that supports it; returns the
  // number of weights cut. Training then keeps them at 0 (their gradient is 0, their Adam
  // moments are forgotten). On weights pruned before with the same share it cuts nothing.
  std::size_t prune() {
    const auto [cut, layers] = params_.prune(cfg_.prune_keep);
    if (layers == 0)
      throw std::invalid_argument(
          "training.prune: no layer of this network supports sparse connectivity");
    optimizer_.forget(cut);
    return cut.size();
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
    for_each_sample(net, n, cfg_.threads, f);
  }

  Outcome run_sample(Network<Scalar>& net, const Sample<Scalar>& s, bool with_gradient) const {
    const SampleOutcome<Scalar> r =
        sample_loss_and_gradient(net, s, cfg_.loss, with_gradient, cfg_.activity,
                                 /*input_time_gradient=*/false, cfg_.run);
    Outcome o;
    o.stats.loss = static_cast<double>(r.loss.loss + r.activity.value);
    o.stats.correct = r.loss.correct;
    o.stats.total = r.loss.total;
    o.stats.steps = r.forward.events_processed;
    for (const auto& l : r.forward.layers) {
      o.stats.events += l.events;
      o.stats.unit_seconds += static_cast<double>(l.units) * static_cast<double>(s.end_time) * 1e-3;
    }
    if (with_gradient) {
      o.report = r.report;
      o.stats.skipped_samples = r.report.ok() ? 0 : 1;
      o.stats.grazing = r.report.grazing_crossings;
      o.stats.simultaneous = r.report.simultaneous_crossings;
      o.stats.surrogate_pairs = r.report.surrogate_pairs;
      o.stats.zero_surrogate_pairs = r.report.zero_surrogate_pairs;
      o.stats.backward_macs = r.report.backward_macs;
      o.grad = params_.flatten(r.grad);
    }
    return o;
  }

  TrainConfig cfg_;
  ParameterVector<Scalar> params_;
  Optimizer<Scalar> optimizer_;
  std::mt19937_64 rng_;
};

}  // namespace egret
