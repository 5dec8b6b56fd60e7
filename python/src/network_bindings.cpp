// Python bindings of networks: egret.Network (build from a JSON configuration, simulate, exact
// loss gradients, parameters as numpy arrays, checkpoints and HDF5 traces), egret.Sample (one
// input sequence with its readouts and targets) and egret.ForwardBatch (a batch's forward pass
// with its adjoint tapes, kept for a later backward pass: what egret.torch builds on).
//
// Batches run in parallel with TBB, each sample on a worker-local clone of the network, results
// stored at the sample's index and gradients summed in sample order: the numbers do not depend on
// the number of threads. The GIL is released while C++ runs.
#include <pybind11/stl.h>

#include <exception>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "adjoint/reverse_sweep.hpp"
#include "io/config/network_config.hpp"
#include "io/hdf5/checkpoint.hpp"
#include "io/hdf5/trace_file.hpp"
#include "python/src/bindings.hpp"
#include "python/src/numpy_conversions.hpp"
#include "python/src/sample.hpp"
#include "sim/batch_runner.hpp"
#include "sim/layer_metrics.hpp"
#include "train/parameters.hpp"
#include "train/sample_gradient.hpp"

namespace egret::python {
namespace {

// A batch of samples: pointers for the C++ side and the Python objects that own them, held for
// the whole call (a generator's samples, or a list another thread empties while the GIL is
// released, would otherwise be freed under us).
struct SampleBatch {
  py::list owners;
  std::vector<const PySample*> samples;
  std::size_t size() const { return samples.size(); }
  const PySample* operator[](std::size_t i) const { return samples[i]; }
  const PySample* front() const { return samples.front(); }
};

SampleBatch as_samples(const py::handle& obj) {
  SampleBatch b;
  if (py::isinstance<PySample>(obj)) {
    b.owners.append(obj);
  } else {
    if (!py::isinstance<py::iterable>(obj))
      throw std::invalid_argument("expected an egret.Sample or a sequence of egret.Sample");
    for (const auto& item : obj) b.owners.append(item);
  }
  for (const auto& item : b.owners) {
    if (!py::isinstance<PySample>(item))
      throw std::invalid_argument("expected an egret.Sample or a sequence of egret.Sample");
    b.samples.push_back(&item.cast<const PySample&>());
  }
  if (b.samples.empty()) throw std::invalid_argument("empty batch: no samples");
  return b;
}

// TBB threads for a batch: 0 = all cores; more than a few thousand is refused (TBB's arena
// cannot create them).
int checked_threads(int threads) {
  if (threads < 0 || threads > 4096)
    throw std::invalid_argument("threads must be in [0, 4096] (0: all cores), got " +
                                std::to_string(threads));
  return threads;
}

// sim/batch_runner.hpp's for_each_sample with the thread count checked.
template <class Scalar, class Body>
void parallel_samples(const Network<Scalar>& net, std::size_t n, int threads, const Body& body) {
  for_each_sample(net, n, checked_threads(threads), body);
}

// A layer's named parameters (or gradient) into `out` as "<prefix><name>".
template <class Scalar>
void add_named_parameters(py::dict& out, const std::string& prefix,
                          const NamedParameters<Scalar>& p) {
  for (const auto& e : p) out[py::str(prefix + e.spec.name)] = parameter_to_python(e);
}

template <class Scalar>
py::dict gradient_to_dict(const Gradient<Scalar>& g, bool with_readout) {
  py::dict grads;
  for (std::size_t l = 0; l < g.layers.size(); ++l)
    add_named_parameters(grads, "layer" + std::to_string(l) + ".", g.layers[l]);
  if (with_readout) {
    grads["readout.W_o"] = eigen_to_numpy(g.W_o);
    grads["readout.b_o"] = eigen_to_numpy(g.b_o);
  }
  return grads;
}

// Arrays are float64 in both precisions.
template <class T>
py::array_t<double> f64_numpy(const std::vector<T>& v) {
  return vector_to_numpy(std::vector<double>(v.begin(), v.end()));
}

template <class Scalar>
py::dict result_to_dict(const SimResult<Scalar>& r) {
  const auto n = static_cast<py::ssize_t>(r.trace.size());
  py::array_t<double> time(n), val(n);
  py::array_t<std::int64_t> layer(n), unit(n);
  auto tm = time.mutable_unchecked<1>();
  auto vm = val.mutable_unchecked<1>();
  auto lm = layer.mutable_unchecked<1>();
  auto um = unit.mutable_unchecked<1>();
  for (py::ssize_t i = 0; i < n; ++i) {
    const auto& e = r.trace[static_cast<std::size_t>(i)];
    tm(i) = e.time;
    lm(i) = e.layer;
    um(i) = e.unit;
    vm(i) = e.value;
  }
  py::list readouts, logits, events_per_layer;
  for (const auto& ro : r.readouts) {
    readouts.append(f64_numpy(ro.trace));
    logits.append(f64_numpy(ro.logits));
  }
  py::list counts;
  for (std::size_t k = 0; k < r.layers.size(); ++k) {
    const auto& l = r.layers[k];
    events_per_layer.append(l.events);
    py::dict c;
    c["units"] = l.units;
    c["events"] = l.events;
    c["inputs_received"] = l.inputs_received;
    c["releases"] = l.releases;
    c["internal_steps"] = l.internal_steps;
    c["events_per_unit_per_s"] = r.rate_per_unit(k);
    // Exact counts (sim/operation_counts.hpp) and the NeuroBench-named metrics of this sample.
    c["synaptic_macs"] = l.operations.synaptic_macs;
    c["synaptic_acs"] = l.operations.synaptic_acs;
    c["gate_products"] = l.operations.gate_products;
    c["membrane_updates"] = l.operations.membrane_updates;
    c["active_unit_steps"] = l.active_unit_steps;
    c["steps"] = l.steps;
    c["dense_operations_per_step"] = l.dense.operations_per_step;
    py::dict metrics;
    for (const auto& [name, value] :
         egret::layer_metrics(l, 1, static_cast<double>(r.end_time), sizeof(Scalar)))
      metrics[name.c_str()] = value;
    c["metrics"] = metrics;
    counts.append(c);
  }
  py::dict out;
  out["time"] = time;
  out["layer"] = layer;
  out["unit"] = unit;
  out["value"] = val;
  out["readouts"] = readouts;
  out["logits"] = logits;
  out["events_per_layer"] = events_per_layer;
  out["layer_counts"] = counts;
  out["events_processed"] = r.events_processed;
  out["end_time"] = static_cast<double>(r.end_time);
  if (!r.snapshots.empty()) {  // {time: (K,), layers: [{variable: (K, N)}]}
    std::vector<double> times;
    for (const auto& s : r.snapshots) times.push_back(s.time);
    py::list layers;
    for (std::size_t l = 0; l < r.snapshots[0].layers.size(); ++l) {
      py::dict vars;
      for (const auto& [name, first] : r.snapshots[0].layers[l].variables) {
        py::array_t<double> a(
            {static_cast<py::ssize_t>(times.size()), static_cast<py::ssize_t>(first.size())});
        auto w = a.mutable_unchecked<2>();
        for (std::size_t k = 0; k < times.size(); ++k) {
          const auto& v = r.snapshots[k].layers[l].at(name);
          for (std::size_t j = 0; j < v.size(); ++j)
            w(static_cast<py::ssize_t>(k), static_cast<py::ssize_t>(j)) = v[j];
        }
        vars[py::str(name)] = a;
      }
      layers.append(vars);
    }
    py::dict snap;
    snap["time"] = vector_to_numpy(times);
    snap["layers"] = layers;
    out["snapshots"] = snap;
  }
  return out;
}

// A (B, R, width) array from per-sample readout vectors (trace or logits).
template <class Scalar, class Get>
py::array_t<double> stack_readouts(const std::vector<SimResult<Scalar>>& results, Index width,
                                   const Get& get) {
  const auto b = static_cast<py::ssize_t>(results.size());
  const auto r = static_cast<py::ssize_t>(results.empty() ? 0 : results[0].readouts.size());
  py::array_t<double> a({b, r, static_cast<py::ssize_t>(width)});
  auto m = a.mutable_unchecked<3>();
  for (py::ssize_t i = 0; i < b; ++i)
    for (py::ssize_t j = 0; j < r; ++j) {
      const auto& v =
          get(results[static_cast<std::size_t>(i)].readouts[static_cast<std::size_t>(j)]);
      for (py::ssize_t k = 0; k < static_cast<py::ssize_t>(width); ++k)
        m(i, j, k) = v[static_cast<std::size_t>(k)];
    }
  return a;
}

template <class Scalar>
std::vector<std::vector<std::vector<Scalar>>> unstack(const py::handle& obj, std::size_t b,
                                                      std::size_t r, Index width,
                                                      const std::string& name) {
  const F64 a = py::cast<F64>(obj);
  if (a.ndim() != 3 || static_cast<std::size_t>(a.shape(0)) != b ||
      static_cast<std::size_t>(a.shape(1)) != r || a.shape(2) != width)
    throw std::invalid_argument(name + ": expected shape (" + std::to_string(b) + ", " +
                                std::to_string(r) + ", " + std::to_string(width) + ")");
  std::vector<std::vector<std::vector<Scalar>>> out(b);
  const double* d = a.data();
  for (std::size_t i = 0; i < b; ++i) {
    out[i].resize(r);
    for (std::size_t j = 0; j < r; ++j) {
      for (const double* v = d; v != d + width; ++v) {
        if (!std::isfinite(*v)) throw std::invalid_argument(name + ": NaN or infinite entry");
        out[i][j].push_back(narrow_checked<Scalar>(*v, name));
      }
      d += width;
    }
  }
  return out;
}

// A batch's forward pass with tapes, for one backward pass later (egret.torch).
template <class Scalar>
class ForwardBatchOf {
 public:
  ForwardBatchOf(Network<Scalar> net, std::vector<SimResult<Scalar>> results,
                 std::vector<Tape<Scalar>> tapes, std::vector<std::size_t> input_sizes, int threads)
      : net_(std::move(net)),
        results_(std::move(results)),
        tapes_(std::move(tapes)),
        input_sizes_(std::move(input_sizes)),
        threads_(threads) {}
  ForwardBatchOf(const ForwardBatchOf&) = delete;
  ForwardBatchOf(ForwardBatchOf&&) = default;
  ForwardBatchOf& operator=(const ForwardBatchOf&) = delete;
  ForwardBatchOf& operator=(ForwardBatchOf&&) = default;

  Index readout_width() const { return net_.layer(net_.size() - 1).units(); }
  py::array_t<double> traces() const {
    return stack_readouts(
        results_, readout_width(),
        [](const ReadoutRecord<Scalar>& r) -> const std::vector<Scalar>& { return r.trace; });
  }
  py::object logits() const {
    if (!net_.readout()) return py::none();
    return stack_readouts(
        results_, net_.readout()->classes(),
        [](const ReadoutRecord<Scalar>& r) -> const std::vector<Scalar>& { return r.logits; });
  }
  py::list results() const {
    py::list out;
    for (const auto& r : results_) out.append(result_to_dict(r));
    return out;
  }

  // Gradients summed over the batch, given dL/d(readout traces) or dL/d(logits), (B, R, ·).
  py::dict backward(const py::object& d_traces, const py::object& d_logits) {
    if (d_traces.is_none() == d_logits.is_none())
      throw std::invalid_argument("backward: give exactly one of d_traces and d_logits");
    const std::size_t b = results_.size(), r = results_.empty() ? 0 : results_[0].readouts.size();
    const bool via_logits = !d_logits.is_none();
    if (via_logits && !net_.readout())
      throw std::invalid_argument("backward: d_logits given but the network has no readout");
    const auto upstream =
        via_logits
            ? unstack<Scalar>(d_logits, b, r, net_.readout()->classes(), "backward: d_logits")
            : unstack<Scalar>(d_traces, b, r, readout_width(), "backward: d_traces");
    std::vector<Gradient<Scalar>> grads(b);
    std::vector<BackwardReport> reports(b);
    {
      py::gil_scoped_release release;
      parallel_samples(net_, b, threads_, [&](std::size_t i, Network<Scalar>&) {
        grads[i] = zero_gradient(net_, input_sizes_[i]);
        const auto d_o =
            via_logits ? readout_backward(net_, results_[i], upstream[i], grads[i]) : upstream[i];
        reports[i] = reverse_sweep(net_, tapes_[i], results_[i], d_o, grads[i]);
      });
    }
    for (std::size_t i = 0; i < b; ++i)
      if (!reports[i].ok())
        throw std::runtime_error("backward pass, sample " + std::to_string(i) + ": " +
                                 reports[i].first_problem);
    Gradient<Scalar> sum = zero_gradient(net_, 0);
    for (const auto& g : grads) sum += g;
    return gradient_to_dict(sum, via_logits);
  }

  std::size_t size() const { return results_.size(); }

 private:
  Network<Scalar> net_;
  std::vector<SimResult<Scalar>> results_;
  std::vector<Tape<Scalar>> tapes_;
  std::vector<std::size_t> input_sizes_;
  int threads_ = 0;
};

// A training configuration (`egret train --config`) is also a network configuration: its
// training sections are left to the training code.
const std::vector<std::string> kTrainingSections = {"task", "training", "output"};

std::string config_to_text(const py::object& config) {
  if (py::isinstance<py::str>(config)) return config.cast<std::string>();
  if (py::isinstance<py::dict>(config))
    return py::module_::import("json").attr("dumps")(config).cast<std::string>();
  throw std::invalid_argument("Network: configuration must be JSON text or a dict");
}

// egret.Network in one precision (the Python class dispatches to one of the two).
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
      parallel_samples(net, batch.size(), threads, [&](std::size_t i, Network<Scalar>& local) {
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
        parameters.is_none() ? net_.clone() : with_parameters(parameters.cast<py::dict>());
    std::vector<SimResult<Scalar>> results(batch.size());
    std::vector<Tape<Scalar>> tapes(batch.size());
    std::vector<std::size_t> sizes(batch.size());
    {
      py::gil_scoped_release release;
      parallel_samples(net, batch.size(), threads, [&](std::size_t i, Network<Scalar>& local) {
        const Sample<Scalar>& s = batch[i]->template sample<Scalar>();
        auto opt = s.options(cfg_.run_settings());
        opt.tape = &tapes[i];
        opt.record_trace = false;
        results[i] = egret::simulate(local, s.input, opt);
        sizes[i] = s.input.size();
      });
    }
    return ForwardBatchOf<Scalar>(std::move(net), std::move(results), std::move(tapes),
                                  std::move(sizes), threads);
  }

  // Mean loss over the samples and the exact gradient of the mean, with accuracy counts.
  py::tuple loss_and_gradient(const py::object& samples, const std::string& loss, int threads) {
    const auto batch = checked(samples);
    const auto kind = parse_loss_kind(loss);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const bool need_labels = kind == LossKind::kSoftmaxCrossEntropy;
      if (need_labels ? !batch[i]->has_labels : !batch[i]->has_values)
        throw std::invalid_argument("loss_and_gradient: sample " + std::to_string(i) + " has no " +
                                    (need_labels ? "labels" : "targets") + " for " + loss);
    }
    if (!net_.readout())
      throw std::invalid_argument("loss_and_gradient: the network has no readout");
    const Network<Scalar> net = net_.clone();  // see simulate
    const std::size_t b = batch.size();
    // Per-event input gradients are returned for a single sample only; without them the backward
    // pass skips the zero-length intervals between simultaneous inputs (a binned stream's most).
    const bool input_gradients = b == 1;
    std::vector<SampleOutcome<Scalar>> out(b);
    std::vector<std::exception_ptr> errors(b);  // rethrown in sample order, with their types
    {
      py::gil_scoped_release release;
      parallel_samples(net, b, threads, [&](std::size_t i, Network<Scalar>& local) {
        try {
          out[i] = sample_loss_and_gradient(local, batch[i]->template sample<Scalar>(), kind, true,
                                            {}, input_gradients, cfg_.run_settings());
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    }
    for (std::size_t i = 0; i < b; ++i) {
      if (errors[i]) std::rethrow_exception(errors[i]);
      if (!out[i].report.ok())
        throw std::runtime_error("backward pass, sample " + std::to_string(i) + ": " +
                                 out[i].report.first_problem);
    }
    Gradient<Scalar> sum = zero_gradient(net, 0);
    double mean = 0;
    int correct = 0, total = 0;
    BackwardReport report;
    for (const auto& o : out) {
      sum += o.grad;
      mean += o.loss.loss;
      correct += o.loss.correct;
      total += o.loss.total;
      report += o.report;
    }
    sum *= Scalar(1) / static_cast<Scalar>(b);
    mean /= static_cast<double>(b);
    py::dict grad = gradient_to_dict(sum, true);
    if (b == 1) {  // per-event input gradients exist for a single sample
      grad["input.time"] = f64_numpy(out[0].grad.input_time);
      grad["input.value"] = f64_numpy(out[0].grad.input_value);
    }
    py::dict stats;
    stats["correct"] = correct;
    stats["total"] = total;
    // The backward pass's work, summed over the batch (surrogate-gradient families).
    stats["surrogate_pairs"] = report.surrogate_pairs;
    stats["zero_surrogate_pairs"] = report.zero_surrogate_pairs;
    stats["backward_sparsity"] = report.backward_sparsity();
    stats["backward_macs"] = report.backward_macs;
    return py::make_tuple(mean, grad, stats);
  }

  // How training reaches each layer parameter: {name: (constraint, training)} with constraint
  // "free", "softplus" or "log" and training "trained", "time_constant" or "fixed".
  py::dict parameter_specs() const {
    py::dict out;
    for (Index l = 0; l < net_.size(); ++l) {
      for (const auto& e : net_.layer(l).parameters()) {
        const char* constraint = e.spec.constraint == Constraint::kSoftplus ? "softplus"
                                 : e.spec.constraint == Constraint::kLog    ? "log"
                                                                            : "free";
        const char* training = e.spec.training == Training::kTrained        ? "trained"
                               : e.spec.training == Training::kTimeConstant ? "time_constant"
                                                                            : "fixed";
        out[py::str("layer" + std::to_string(l) + "." + e.spec.name)] =
            py::make_tuple(constraint, training);
      }
    }
    return out;
  }

  py::dict parameters() const {
    py::dict out;
    for (Index l = 0; l < net_.size(); ++l)
      add_named_parameters(out, "layer" + std::to_string(l) + ".", net_.layer(l).parameters());
    if (const auto* ro = net_.readout()) {
      out["readout.W_o"] = eigen_to_numpy(ro->W_o);
      out["readout.b_o"] = eigen_to_numpy(ro->b_o);
    }
    return out;
  }

  void set_parameters(const py::dict& values) { net_ = with_parameters(values); }

  // The network with the named parameters replaced (shapes and values checked, layers rebuilt and
  // validated by their family, so e.g. a non-positive threshold is a ValueError). A name no layer
  // has is an error; nothing changes unless every value is accepted.
  Network<Scalar> with_parameters(const py::dict& values) const {
    std::size_t used = 0;
    Network<Scalar> fresh;
    for (Index l = 0; l < net_.size(); ++l) {
      const std::string prefix = "layer" + std::to_string(l) + ".";
      NamedParameters<Scalar> p = net_.layer(l).parameters();
      for (auto& e : p) {
        const std::string key = prefix + e.spec.name;
        if (!values.contains(key)) continue;
        parameter_from_python(values[py::str(key)], e, key);
        ++used;
      }
      try {
        fresh.add_layer(net_.layer(l).with_parameters(p));
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("layer " + std::to_string(l) + ": " + e.what());
      }
    }
    if (const auto* ro = net_.readout()) {
      Readout<Scalar> r = *ro;
      for (const auto* key : {"readout.W_o", "readout.b_o"}) {
        if (!values.contains(key)) continue;
        if (std::string(key) == "readout.W_o")
          numpy_to_matrix(values[key], r.W_o, key);
        else
          numpy_to_matrix(values[key], r.b_o, key);
        ++used;
      }
      fresh.set_readout(std::move(r));
    }
    if (used != values.size()) {
      const py::dict known = parameters();
      for (const auto& item : values) {
        const std::string key = py::str(item.first);
        if (!known.contains(key))
          throw std::invalid_argument("parameters: unknown parameter '" + key + "'");
      }
    }
    return fresh;
  }

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

  static NetworkOf load_checkpoint(const std::string& path, const Checkpoint& c,
                                   const NetworkConfig& cfg) {
    const Network<Scalar> initial = build_network<Scalar>(cfg);
    const ParameterVector<Scalar> without_tau(initial, false), with_tau(initial, true);
    ParameterVector<Scalar> pv;
    if (c.values.size() == with_tau.size())
      pv = with_tau;
    else if (c.values.size() == without_tau.size())
      pv = without_tau;
    else
      throw std::invalid_argument(path + ": " + std::to_string(c.values.size()) +
                                  " trainable values, the configuration's network has " +
                                  std::to_string(without_tau.size()) + " (or " +
                                  std::to_string(with_tau.size()) + " with time constants)");
    pv.values() = cast_values<Scalar>(c.values, path + ": /training/values");
    return NetworkOf(c.config_text, cfg, with_exact_constrained_parameters(pv.network(), c, path));
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
    auto batch = as_samples(samples);
    for (std::size_t i = 0; i < batch.size(); ++i)
      if (batch[i]->s.input.channels() != net_.input_channels())
        throw std::invalid_argument(
            "sample " + std::to_string(i) + " has " + std::to_string(batch[i]->s.input.channels()) +
            " channels, the network " + std::to_string(net_.input_channels()));
    return batch;
  }

  std::string config_text_;
  NetworkConfig cfg_;
  Network<Scalar> net_;
};

// egret.ForwardBatch: the forward pass of a float or a double network.
class ForwardBatch {
 public:
  template <class Scalar>
  explicit ForwardBatch(ForwardBatchOf<Scalar> b) : batch_(std::move(b)) {}
  py::array_t<double> traces() const {
    return std::visit([](const auto& b) { return b.traces(); }, batch_);
  }
  py::object logits() const {
    return std::visit([](const auto& b) { return b.logits(); }, batch_);
  }
  py::list results() const {
    return std::visit([](const auto& b) { return b.results(); }, batch_);
  }
  py::dict backward(const py::object& d_traces, const py::object& d_logits) {
    return std::visit([&](auto& b) { return b.backward(d_traces, d_logits); }, batch_);
  }
  std::size_t size() const {
    return std::visit([](const auto& b) { return b.size(); }, batch_);
  }

 private:
  std::variant<ForwardBatchOf<double>, ForwardBatchOf<float>> batch_;
};

// egret.Network: a NetworkOf<float> or a NetworkOf<double>, chosen once from the configuration's
// "precision" (or the constructor's precision argument); every method forwards to it.
class PyNetwork {
  using Impl = std::variant<NetworkOf<double>, NetworkOf<float>>;
  explicit PyNetwork(Impl impl) : impl_(std::move(impl)) {}
  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit(std::forward<F>(f), impl_);
  }
  template <class F>
  decltype(auto) visit(F&& f) {
    return std::visit(std::forward<F>(f), impl_);
  }

 public:
  PyNetwork(const py::object& config, const py::object& precision)
      : PyNetwork(make(config_to_text(config), precision)) {}

  static Impl make(std::string text, const py::object& precision) {
    NetworkConfig cfg = parse_network_config(text, "<config>", kTrainingSections);
    if (!precision.is_none())
      cfg.precision = parse_precision(py::cast<std::string>(precision), "Network: precision");
    return with_precision(cfg.precision, [&](auto scalar) -> Impl {
      return NetworkOf<decltype(scalar)>(std::move(text), std::move(cfg));
    });
  }

  std::string precision() const {
    return std::holds_alternative<NetworkOf<double>>(impl_) ? "double" : "float";
  }
  const std::string& config() const {
    return std::visit([](const auto& n) -> const std::string& { return n.config(); }, impl_);
  }
  Index input_channels() const {
    return visit([](const auto& n) { return n.input_channels(); });
  }
  Index layers() const {
    return visit([](const auto& n) { return n.layers(); });
  }
  std::vector<Index> units() const {
    return visit([](const auto& n) { return n.units(); });
  }
  std::vector<std::string> layer_types() const {
    return visit([](const auto& n) { return n.layer_types(); });
  }
  Index readout_classes() const {
    return visit([](const auto& n) { return n.readout_classes(); });
  }
  py::dict simulate(const py::object& t, const py::object& channel, const py::object& value,
                    double end_time, const py::object& readout_times, const py::object& windows,
                    const py::object& snapshot_times) {
    return visit([&](auto& n) {
      return n.simulate(t, channel, value, end_time, readout_times, windows, snapshot_times);
    });
  }
  py::list simulate_batch(const py::object& samples, int threads) {
    return visit([&](auto& n) { return n.simulate_batch(samples, threads); });
  }
  ForwardBatch forward(const py::object& samples, const py::object& parameters, int threads) {
    return visit([&](auto& n) { return ForwardBatch(n.forward(samples, parameters, threads)); });
  }
  py::tuple loss_and_gradient(const py::object& samples, const std::string& loss, int threads) {
    return visit([&](auto& n) { return n.loss_and_gradient(samples, loss, threads); });
  }
  py::dict parameter_specs() const {
    return visit([](auto& n) { return n.parameter_specs(); });
  }
  py::dict parameters() const {
    return visit([](auto& n) { return n.parameters(); });
  }
  void set_parameters(const py::dict& values) {
    visit([&](auto& n) { n.set_parameters(values); });
  }
  void save_checkpoint(const std::string& path, int epoch) const {
    visit([&](auto& n) { n.save_checkpoint(path, epoch); });
  }
  // In the precision its configuration names, or `precision` if given.
  static PyNetwork load_checkpoint(const std::string& path, const py::object& precision) {
    const Checkpoint c = read_checkpoint(path);
    NetworkConfig cfg;
    try {
      cfg = parse_network_config(c.config_text, path + " (configuration)", kTrainingSections);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(path +
                                  ": the checkpoint's configuration is not a network or "
                                  "training configuration: " +
                                  e.what());
    }
    if (!precision.is_none())
      cfg.precision = parse_precision(py::cast<std::string>(precision), "precision");
    return PyNetwork(with_precision(cfg.precision, [&](auto scalar) -> Impl {
      return NetworkOf<decltype(scalar)>::load_checkpoint(path, c, cfg);
    }));
  }
  std::uint64_t write_trace(const std::string& path, const py::object& samples,
                            const py::object& labels, const std::string& command_line,
                            const py::object& dense_step) {
    return visit(
        [&](auto& n) { return n.write_trace(path, samples, labels, command_line, dense_step); });
  }

 private:
  Impl impl_;
};

}  // namespace

void bind_network(py::module_& m) {
  py::class_<PySample>(m, "Sample",
                       "One input sequence: input events (time in ms, channel, value), the end of "
                       "the run, readouts (points, then windows) and optional targets.")
      .def(py::init(&make_sample), py::arg("t"), py::arg("channel"), py::arg("value") = py::none(),
           py::kw_only(), py::arg("channels"), py::arg("end_time"),
           py::arg("readout_times") = py::none(), py::arg("readout_windows") = py::none(),
           py::arg("labels") = py::none(), py::arg("targets") = py::none(),
           "labels: one class per readout (an int applies to all readouts), for softmax "
           "cross-entropy; targets: array (readouts, outputs) for binary cross-entropy or MSE.")
      .def_property_readonly("t",
                             [](const PySample& p) {
                               std::vector<double> t;
                               for (const auto& e : p.s.input.events()) t.push_back(e.time);
                               return vector_to_numpy(t);
                             })
      .def_property_readonly("channel",
                             [](const PySample& p) {
                               std::vector<std::int64_t> c;
                               for (const auto& e : p.s.input.events()) c.push_back(e.channel);
                               return vector_to_numpy(c);
                             })
      .def_property_readonly("value",
                             [](const PySample& p) {
                               std::vector<double> v;
                               for (const auto& e : p.s.input.events()) v.push_back(e.value);
                               return vector_to_numpy(v);
                             })
      .def_property_readonly("channels", [](const PySample& p) { return p.s.input.channels(); })
      .def_property_readonly("end_time", [](const PySample& p) { return p.s.end_time; })
      .def_property_readonly("readout_times", [](const PySample& p) { return p.s.readout_times; })
      .def_property_readonly("readout_windows",
                             [](const PySample& p) { return p.s.readout_windows; })
      .def_property_readonly("readouts", &PySample::readouts)
      .def_property_readonly("labels",
                             [](const PySample& p) -> py::object {
                               if (!p.has_labels) return py::none();
                               return py::cast(p.s.targets.labels);
                             })
      .def_property_readonly(
          "targets",
          [](const PySample& p) -> py::object {
            if (!p.has_values) return py::none();
            py::array_t<double> a({static_cast<py::ssize_t>(p.s.targets.values.size()),
                                   static_cast<py::ssize_t>(p.s.targets.values[0].size())});
            auto w = a.mutable_unchecked<2>();
            for (py::ssize_t j = 0; j < a.shape(0); ++j)
              for (py::ssize_t k = 0; k < a.shape(1); ++k)
                w(j, k) =
                    p.s.targets.values[static_cast<std::size_t>(j)][static_cast<std::size_t>(k)];
            return a;
          })
      .def("__len__", [](const PySample& p) { return p.s.input.size(); })
      .def("__repr__", [](const PySample& p) {
        std::ostringstream os;
        os << "<egret.Sample: " << p.s.input.size() << " input events on " << p.s.input.channels()
           << " channels, end_time " << p.s.end_time << " ms, " << p.readouts() << " readouts>";
        return os.str();
      });

  py::class_<ForwardBatch>(m, "ForwardBatch",
                           "A batch's forward pass with its adjoint tapes (Network.forward).")
      .def_property_readonly("traces", &ForwardBatch::traces,
                             "Readouts of the last layer's output trace, array (B, R, units).")
      .def_property_readonly("logits", &ForwardBatch::logits,
                             "Readout logits (B, R, classes), or None without a readout.")
      .def("results", &ForwardBatch::results, "Per-sample statistics (as Network.simulate).")
      .def("__len__", &ForwardBatch::size)
      .def("__repr__",
           [](const ForwardBatch& b) {
             return "<egret.ForwardBatch: " + std::to_string(b.size()) + " samples>";
           })
      .def("backward", &ForwardBatch::backward, py::kw_only(), py::arg("d_traces") = py::none(),
           py::arg("d_logits") = py::none(),
           "Exact gradient summed over the batch, given dL/dtraces or dL/dlogits (B, R, .); "
           "returns {name: array}. Readout gradients only with d_logits.");

  py::class_<PyNetwork>(m, "Network",
                        "A network of event-driven layers (any registered cell family) with an "
                        "optional linear readout.")
      .def(py::init<const py::object&, const py::object&>(), py::arg("config"), py::kw_only(),
           py::arg("precision") = py::none(),
           "A network from a configuration: JSON text or a dict in the format of "
           "`egret simulate --config` (docs/formats.md). precision: 'float' or 'double' "
           "(default: the configuration's \"precision\", float if absent). Arrays in and out "
           "are float64 in both.")
      .def_property_readonly("precision", &PyNetwork::precision,
                             "'float' or 'double': the scalar the network computes in.")
      .def_property_readonly("config", &PyNetwork::config, "The configuration text (JSON).")
      .def_property_readonly("input_channels", &PyNetwork::input_channels)
      .def_property_readonly("layers", &PyNetwork::layers)
      .def_property_readonly("units", &PyNetwork::units)
      .def_property_readonly("layer_types", &PyNetwork::layer_types)
      .def_property_readonly("readout_classes", &PyNetwork::readout_classes)
      .def("__repr__",
           [](const PyNetwork& n) {
             std::ostringstream os;
             os << "<egret.Network: " << n.input_channels() << " inputs";
             const auto types = n.layer_types();
             const auto units = n.units();
             for (std::size_t l = 0; l < types.size(); ++l)
               os << (l ? ", " : "; ") << types[l] << " (" << units[l] << ")";
             if (n.readout_classes() > 0) os << "; readout " << n.readout_classes() << " classes";
             os << ">";
             return os.str();
           })
      .def("simulate", &PyNetwork::simulate, py::arg("t"), py::arg("channel"),
           py::arg("value") = py::none(), py::kw_only(), py::arg("end_time"),
           py::arg("readout_times") = py::none(), py::arg("readout_windows") = py::none(),
           py::arg("snapshot_times") = py::none(),
           "Simulate input events (times in ms, channels, optional values); returns a dict: "
           "emitted events (time, layer, unit, value arrays), readouts, logits, per-layer counts, "
           "and with snapshot_times the state variables (e.g. c, o) at those times.")
      .def("simulate_batch", &PyNetwork::simulate_batch, py::arg("samples"), py::kw_only(),
           py::arg("threads") = 0, "Simulate samples in parallel (TBB); a list of result dicts.")
      .def("forward", &PyNetwork::forward, py::arg("samples"), py::kw_only(),
           py::arg("parameters") = py::none(), py::arg("threads") = 0,
           "Forward pass of a batch with adjoint tapes (optionally with replaced parameters); "
           "returns a ForwardBatch whose backward() gives the exact gradient.")
      .def("loss_and_gradient", &PyNetwork::loss_and_gradient, py::arg("samples"), py::kw_only(),
           py::arg("loss") = "softmax_cross_entropy", py::arg("threads") = 0,
           "Mean loss over the samples (softmax_cross_entropy, binary_cross_entropy, "
           "mean_squared_error), its exact gradient {name: array} and statistics {correct, "
           "total, surrogate_pairs, zero_surrogate_pairs, backward_sparsity, backward_macs}.")
      .def("parameters", &PyNetwork::parameters, "The parameters by name, as numpy arrays.")
      .def("parameter_specs", &PyNetwork::parameter_specs,
           "How training reaches each layer parameter: {name: (constraint, training)}, "
           "constraint 'free', 'softplus' or 'log', training 'trained', 'time_constant' or "
           "'fixed'.")
      .def("set_parameters", &PyNetwork::set_parameters, py::arg("values"),
           "Replace parameters by name (shapes and values checked).")
      .def("save_checkpoint", &PyNetwork::save_checkpoint, py::arg("path"), py::kw_only(),
           py::arg("epoch") = 0, "Write an HDF5 checkpoint (configuration and parameters).")
      .def_static("load_checkpoint", &PyNetwork::load_checkpoint, py::arg("path"), py::kw_only(),
                  py::arg("precision") = py::none(),
                  "A network from a checkpoint of Network.save_checkpoint or `egret train`, in "
                  "the precision of its configuration unless precision is given.")
      .def("write_trace", &PyNetwork::write_trace, py::arg("path"), py::arg("samples"),
           py::kw_only(), py::arg("labels") = py::none(), py::arg("command_line") = "python",
           py::arg("dense_step") = py::none(),
           "Simulate the samples into an HDF5 event trace (SONATA layout, with the NeuroBench "
           "counts per layer and sample); returns the number of events written. dense_step [ms]: "
           "the step of continuous layers' dense comparison (default: the configuration's "
           "simulation.dense_step, 1 ms).");
}

}  // namespace egret::python
