// Minibatch training of event-driven networks (any family with a backward pass: exact adjoint
// or BPTT) with their gradients: per sample a forward pass that records the tape, the loss at
// the readouts, the backward pass; the samples of a minibatch run in parallel with TBB and
// their gradients are summed in sample order, so a run gives the same numbers for any thread
// count.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "train/batch_gradient.hpp"
#include "train/optimizer.hpp"
#include "train/parameters.hpp"
#include "train/sample.hpp"

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
  StateRegularizer state;        // likewise (adjoint/state_regularizer.hpp)
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
  // Per layer: emitted events and units x simulated seconds (the runaway guard's rates).
  std::vector<std::uint64_t> layer_events;
  std::vector<double> layer_unit_seconds;
  // Active unit-steps and all unit-steps of every layer (activity sparsity): a clocked layer's
  // steps are its ticks, an event-driven layer's the run's dense_step bins (sim/engine.hpp).
  std::uint64_t active_unit_steps = 0, unit_steps = 0;
  // The step of those unit-steps (ms): 0 before any layer is counted, NaN when layers or samples
  // differ in it (then the sparsity still counts every layer at its own step).
  double activity_step_ms = 0;
  // The epoch stopped early at a minibatch boundary on request (train_epoch's `stop`): its
  // figures cover only the minibatches trained.
  bool stopped_early = false;
  double accuracy() const { return total ? static_cast<double>(correct) / total : 0; }
  // NaN when no layer has a surrogate gradient (an exact adjoint is not sparse in this sense).
  double backward_sparsity() const {
    return surrogate_pairs ? static_cast<double>(zero_surrogate_pairs) / surrogate_pairs
                           : std::nan("");
  }
  double rate_per_unit() const { return unit_seconds > 0 ? events / unit_seconds : 0; }
  double layer_rate(std::size_t l) const {
    return layer_unit_seconds[l] > 0 ? static_cast<double>(layer_events[l]) / layer_unit_seconds[l]
                                     : 0;
  }
  // 1 - active / all unit-steps (ActivationSparsity, docs/metrics.md); NaN without any.
  double activity_sparsity() const {
    return unit_steps
               ? 1.0 - static_cast<double>(active_unit_steps) / static_cast<double>(unit_steps)
               : std::nan("");
  }
  void add_step(double step_ms) {
    if (step_ms == 0 || activity_step_ms == step_ms || std::isnan(activity_step_ms)) return;
    activity_step_ms = activity_step_ms == 0 ? step_ms : std::nan("");
  }
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
    if (layer_events.size() < o.layer_events.size()) {
      layer_events.resize(o.layer_events.size(), 0);
      layer_unit_seconds.resize(o.layer_events.size(), 0);
    }
    for (std::size_t l = 0; l < o.layer_events.size(); ++l) {
      layer_events[l] += o.layer_events[l];
      layer_unit_seconds[l] += o.layer_unit_seconds[l];
    }
    active_unit_steps += o.active_unit_steps;
    unit_steps += o.unit_steps;
    add_step(o.activity_step_ms);
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
    check_state_regularizer(initial, cfg.state, "training.state_regularizer");
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
  // over samples). A set `stop` (polled before every minibatch; e.g. Ctrl-C) ends the pass early,
  // marked stopped_early: the parameters then hold a partial epoch, to be discarded.
  BatchStats train_epoch(const std::vector<Sample<Scalar>>& train,
                         const std::atomic<bool>* stop = nullptr) {
    std::vector<std::size_t> order(train.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng_);
    BatchStats epoch;
    for (std::size_t start = 0; start < order.size();
         start += static_cast<std::size_t>(cfg_.batch_size)) {
      if (stop && stop->load()) {
        epoch.stopped_early = true;
        return epoch;
      }
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
    std::vector<Scalar> sum(params_.size(), 0);
    const SummedBatch<Scalar> summed = batch_gradient_sum(
        params_.network(), batch.size(),
        [&](std::size_t i) -> const Sample<Scalar>& { return *batch[i]; }, request(true),
        NonFiniteSamples::kLeaveOut,
        [&](const SampleOutcome<Scalar>& o) {  // one worker at a time, in sample order
          params_.flatten(o.grad, flat_);
          for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += flat_[k];
        });
    const auto& out = summed.outcomes;
    const std::size_t used = summed.used;
    BatchStats stats;
    for (std::size_t i = 0; i < out.size(); ++i) stats.add(sample_stats(out[i], *batch[i], true));
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
    const auto out = run_batch(
        samples.size(), [&](std::size_t i) -> const Sample<Scalar>& { return samples[i]; }, false);
    BatchStats stats;
    for (std::size_t i = 0; i < out.size(); ++i) stats.add(sample_stats(out[i], samples[i], false));
    stats.loss /= static_cast<double>(std::max<std::size_t>(1, samples.size()));
    return stats;
  }

 private:
  template <class SampleAt>
  std::vector<SampleOutcome<Scalar>> run_batch(std::size_t n, const SampleAt& sample_at,
                                               bool with_gradient) const {
    return batch_outcomes(params_.network(), n, sample_at, request(with_gradient));
  }
  BatchRequest request(bool with_gradient) const {
    BatchRequest request;
    request.loss = cfg_.loss;
    request.with_gradient = with_gradient;
    request.activity = cfg_.activity;
    request.state = cfg_.state;
    request.input_time_gradient = false;
    request.run = cfg_.run;
    request.threads = cfg_.threads;
    return request;
  }

  // One sample's share of the batch statistics.
  static BatchStats sample_stats(const SampleOutcome<Scalar>& r, const Sample<Scalar>& s,
                                 bool with_gradient) {
    BatchStats o;
    o.loss = static_cast<double>(r.loss.loss + r.activity.value) + r.report.state_cost;
    o.correct = r.loss.correct;
    o.total = r.loss.total;
    o.steps = r.forward.events_processed;
    for (const auto& l : r.forward.layers) {
      const double unit_seconds =
          static_cast<double>(l.units) * static_cast<double>(s.end_time) * 1e-3;
      o.events += l.events;
      o.unit_seconds += unit_seconds;
      o.layer_events.push_back(l.events);
      o.layer_unit_seconds.push_back(unit_seconds);
      o.active_unit_steps += l.active_unit_steps;
      o.unit_steps += l.steps * static_cast<std::uint64_t>(l.units);
      o.add_step(l.step_ms);
    }
    if (with_gradient) {
      o.skipped_samples = r.report.ok() ? 0 : 1;
      o.grazing = r.report.grazing_crossings;
      o.simultaneous = r.report.simultaneous_crossings;
      o.surrogate_pairs = r.report.surrogate_pairs;
      o.zero_surrogate_pairs = r.report.zero_surrogate_pairs;
      o.backward_macs = r.report.backward_macs;
    }
    return o;
  }

  TrainConfig cfg_;
  ParameterVector<Scalar> params_;
  Optimizer<Scalar> optimizer_;
  std::mt19937_64 rng_;
  std::vector<Scalar> flat_;  // train_step's flattened sample gradient, reused across samples
};

}  // namespace egret
