// egret.Network in one precision: build from a configuration, simulate, forward passes with
// tapes, exact loss gradients, parameters by name, checkpoints and HDF5 traces. Batches run in
// parallel, each sample on a worker-local clone of the network, results stored at the sample's
// index and gradients summed in sample order: the numbers do not depend on the number of threads.
// The GIL is released while C++ runs.
#pragma once

#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "adjoint/losses.hpp"
#include "io/config/network_config.hpp"
#include "io/hdf5/checkpoint.hpp"
#include "io/hdf5/checkpoint_network.hpp"
#include "io/hdf5/trace_file.hpp"
#include "io/nir/nir_export.hpp"
#include "io/nir/nir_writer.hpp"
#include "python/src/bindings.hpp"
#include "python/src/forward_batch.hpp"
#include "python/src/network_parameters.hpp"
#include "python/src/regularizers.hpp"
#include "python/src/result_dicts.hpp"
#include "python/src/sample_batch.hpp"
#include "train/batch_gradient.hpp"
#include "train/parameters.hpp"

namespace egret::python {

// The Python class egret.Network dispatches to one of the two precisions.
template <class Scalar>
class NetworkOf {
 public:
  NetworkOf(std::string text, NetworkConfig cfg)
      : config_text_(std::move(text)), cfg_(std::move(cfg)), net_(build_network<Scalar>(cfg_)) {}
  NetworkOf(std::string text, NetworkConfig cfg, Network<Scalar> net)
      : config_text_(std::move(text)), cfg_(std::move(cfg)), net_(std::move(net)) {}
  NetworkOf(const NetworkOf&) = delete;
  NetworkOf(NetworkOf&&) = default;
  NetworkOf& operator=(const NetworkOf&) = delete;
  NetworkOf& operator=(NetworkOf&&) = default;

  const std::string& config() const { return config_text_; }
  Index input_channels() const { return net_.input_channels(); }
  Index layers() const { return net_.size(); }
  std::vector<Index> units() const {
    std::vector<Index> u;
    for (Index l = 0; l < net_.size(); ++l) u.push_back(net_.layer(l).units());
    return u;
  }
  std::vector<std::string> layer_types() const {
    std::vector<std::string> t;
    for (Index l = 0; l < net_.size(); ++l) t.push_back(net_.layer(l).type_name());
    return t;
  }
  Index readout_classes() const { return net_.readout() ? net_.readout()->classes() : 0; }

  py::dict simulate(const py::object& t, const py::object& channel, const py::object& value,
                    double end_time, const py::object& readout_times, const py::object& windows,
                    const py::object& snapshot_times) {
    const PySample p = make_sample(t, channel, value, net_.input_channels(), end_time,
                                   readout_times, windows, py::none(), py::none());
    const Sample<Scalar>& s = p.sample<Scalar>();
    auto opt = s.options(cfg_.run_settings());
    if (!snapshot_times.is_none()) {
      const F64 st = as_f64_vector(snapshot_times, "simulate: snapshot_times");
      for (py::ssize_t i = 0; i < st.shape(0); ++i)
        opt.snapshot_times.push_back(narrow_checked<Scalar>(st.data()[i], "snapshot time"));
    }
    // A private clone (shared parameters): another Python thread may run or replace net_.
    Network<Scalar> local = net_.clone();
    SimResult<Scalar> r;
    {
      py::gil_scoped_release release;
      r = egret::simulate(local, s.input, opt);
    }
    return result_to_dict(r);
  }

  py::list simulate_batch(const py::object& samples, int threads) {
    const auto batch = checked(samples);
    const Network<Scalar> net = net_.clone();  // see simulate
    std::vector<SimResult<Scalar>> results(batch.size());
    {
      py::gil_scoped_release release;
      for_each_sample(
          net, batch.size(), checked_threads(threads), [&](std::size_t i, Network<Scalar>& local) {
            const Sample<Scalar>& s = batch[i]->template sample<Scalar>();
            results[i] = egret::simulate(local, s.input, s.options(cfg_.run_settings()));
          });
    }
    py::list out;
    for (const auto& r : results) out.append(result_to_dict(r));
    return out;
  }

  ForwardBatchOf<Scalar> forward(const py::object& samples, const py::object& parameters,
                                 int threads) {
    const auto batch = checked(samples);
    const std::size_t r = static_cast<std::size_t>(batch.front()->readouts());
    if (r == 0) throw std::invalid_argument("forward: the samples have no readouts");
    for (std::size_t i = 0; i < batch.size(); ++i)
      if (static_cast<std::size_t>(batch[i]->readouts()) != r)
        throw std::invalid_argument("forward: sample " + std::to_string(i) + " has " +
                                    std::to_string(batch[i]->readouts()) +
                                    " readouts, sample 0 has " + std::to_string(r) +
                                    " (a batch needs one readout count)");
    Network<Scalar> net =
        parameters.is_none() ? net_.clone() : with_parameters(net_, parameters.cast<py::dict>());
    std::vector<SimResult<Scalar>> results(batch.size());
    std::vector<Tape<Scalar>> tapes(batch.size());
    {
      py::gil_scoped_release release;
      for_each_sample(net, batch.size(), checked_threads(threads),
                      [&](std::size_t i, Network<Scalar>& local) {
                        const Sample<Scalar>& s = batch[i]->template sample<Scalar>();
                        auto opt = s.options(cfg_.run_settings());
                        opt.tape = &tapes[i];
                        // ForwardBatch returns no per-event input gradients: a bin's
                        // simultaneous inputs are one tape step, and layer 0's inputs are netted
                        // with the releases they meet, as in training (docs/adjoint.md §5).
                        opt.tape_merge_simultaneous_inputs = true;
                        opt.record_trace = false;
                        results[i] = egret::simulate(local, s.input, opt);
                      });
    }
    return ForwardBatchOf<Scalar>(std::move(net), std::move(results), std::move(tapes), threads);
  }

  // Mean loss over the samples and the exact gradient of the mean, with accuracy counts. A sample
  // with non-finite values in its backward pass is an error (NonFiniteSamples::kRefuse).
  py::tuple loss_and_gradient(const py::object& samples, const std::string& loss, int threads,
                              const py::object& state_regularizer,
                              const py::object& activity_regularizer) {
    const auto batch = checked(samples);
    BatchRequest request;
    if (renamed_loss(loss)) warn_deprecated(renamed_loss_warning("loss_and_gradient", loss));
    request.loss = parse_loss_kind(loss);
    request.state = state_regularizer_from(state_regularizer);
    request.activity = activity_regularizer_from(activity_regularizer);
    check_state_regularizer(net_, request.state, "state_regularizer");
    request.run = cfg_.run_settings();
    request.threads = checked_threads(threads);
    // Per-event input gradients are returned for a single sample only; without them the backward
    // pass skips the zero-length intervals between simultaneous inputs (a binned stream's most).
    request.input_time_gradient = batch.size() == 1;
    check_targets(batch, request.loss, loss);
    const Network<Scalar> net = net_.clone();  // see simulate
    Gradient<Scalar> sum = zero_gradient(net, 0);
    SummedBatch<Scalar> summed;
    {
      py::gil_scoped_release release;
      summed = batch_gradient_sum(
          net, batch.size(),
          [&](std::size_t i) -> const Sample<Scalar>& {
            return batch[i]->template sample<Scalar>();
          },
          request, NonFiniteSamples::kRefuse,
          [&](const SampleOutcome<Scalar>& o) { sum += o.grad; });
    }
    const std::vector<SampleOutcome<Scalar>>& out = summed.outcomes;
    sum *= Scalar(1) / static_cast<Scalar>(summed.used);
    py::dict grad = gradient_to_dict(sum, true);
    if (batch.size() == 1) {  // per-event input gradients exist for a single sample
      grad["input.time"] = f64_numpy(out[0].grad.input_time);
      grad["input.value"] = f64_numpy(out[0].grad.input_value);
    }
    double total = 0;
    for (const auto& o : out)
      total += static_cast<double>(o.loss.loss + o.activity.value) + o.report.state_cost;
    return py::make_tuple(total / static_cast<double>(out.size()), grad, batch_statistics(out));
  }

  py::dict parameter_specs() const { return python::parameter_specs(net_); }
  py::dict parameters() const { return named_parameters(net_); }
  void set_parameters(const py::dict& values) { net_ = with_parameters(net_, values); }

  // Checkpoint: the configuration and every parameter (thresholds and time constants included)
  // in the flat training coordinates of `egret train`, plus the named parameters.
  void save_checkpoint(const std::string& path, int epoch) const {
    const ParameterVector<Scalar> pv(net_, true);
    Checkpoint c;
    c.config_text = config_text_;
    c.epoch = epoch;
    c.values.assign(pv.values().begin(), pv.values().end());
    const Network<Scalar> net = net_.clone();  // see simulate
    {
      py::gil_scoped_release release;
      write_checkpoint(path, c, &net);
    }
  }

  // The network with its current parameters as a NIR graph (docs/nir.md).
  void export_nir(const std::string& path, bool extension) const {
    nir::ExportOptions options;
    options.extension = extension;
    const nir::NetworkValues values = nir::values_of_network(cfg_, net_);
    py::gil_scoped_release release;
    nir::write_nir_file(path, nir::export_graph(values, options));
  }

  static NetworkOf load_checkpoint(const std::string& path, const Checkpoint& c,
                                   const NetworkConfig& cfg) {
    return NetworkOf(c.config_text, cfg, network_from_checkpoint<Scalar>(path, c, cfg));
  }

  // Simulates the samples one after another into an HDF5 trace (docs/formats.md).
  std::uint64_t write_trace(const std::string& path, const py::object& samples,
                            const py::object& labels, const std::string& command_line,
                            const py::object& dense_step) {
    const double step = dense_step.is_none() ? cfg_.dense_step : dense_step.cast<double>();
    if (!(step > 0) || !std::isfinite(step))
      throw std::invalid_argument("write_trace: dense_step must be finite and > 0 [ms]");
    const auto batch = checked(samples);
    std::vector<std::int64_t> label;
    if (!labels.is_none()) {
      const auto l = as_channels(labels, "write_trace: labels");
      if (l.size() != batch.size())
        throw std::invalid_argument("write_trace: one label per sample expected");
      label.assign(l.begin(), l.end());
    }
    std::vector<const Sample<Scalar>*> runs;
    for (std::size_t i = 0; i < batch.size(); ++i)
      runs.push_back(&batch[i]->template sample<Scalar>());
    const Network<Scalar> net = net_.clone();  // see simulate
    const Provenance provenance{config_text_, static_cast<std::int64_t>(cfg_.seed), command_line};
    py::gil_scoped_release release;
    return write_samples_trace(path, net, runs, label, provenance, step).events;
  }

 private:
  SampleBatch checked(const py::object& samples) const {
    return as_samples(samples, net_.input_channels());
  }

  void check_targets(const SampleBatch& batch, LossKind kind, const std::string& loss) const {
    const bool need_labels = kind == LossKind::kSoftmaxCrossEntropy;
    for (std::size_t i = 0; i < batch.size(); ++i)
      if (need_labels ? !batch[i]->has_labels : !batch[i]->has_values)
        throw std::invalid_argument("loss_and_gradient: sample " + std::to_string(i) + " has no " +
                                    (need_labels ? "labels" : "targets") + " for " + loss);
    if (!net_.readout())
      throw std::invalid_argument("loss_and_gradient: the network has no readout");
  }

  // The means of the loss and of each regulariser, accuracy counts and the backward pass's work
  // (surrogate-gradient families), summed.
  static py::dict batch_statistics(const std::vector<SampleOutcome<Scalar>>& out) {
    int correct = 0, total = 0;
    double loss = 0, activity = 0;
    BackwardReport report;
    for (const auto& o : out) {
      correct += o.loss.correct;
      total += o.loss.total;
      loss += static_cast<double>(o.loss.loss);
      activity += static_cast<double>(o.activity.value);
      report += o.report;
    }
    const auto b = static_cast<double>(out.size());
    py::dict stats;
    stats["loss"] = loss / b;
    stats["state_regularizer"] = report.state_cost / b;
    stats["activity_regularizer"] = activity / b;
    stats["correct"] = correct;
    stats["total"] = total;
    stats["surrogate_pairs"] = report.surrogate_pairs;
    stats["zero_surrogate_pairs"] = report.zero_surrogate_pairs;
    stats["backward_sparsity"] = report.backward_sparsity();
    stats["backward_macs"] = report.backward_macs;
    return stats;
  }

  std::string config_text_;
  NetworkConfig cfg_;
  Network<Scalar> net_;
};

}  // namespace egret::python
