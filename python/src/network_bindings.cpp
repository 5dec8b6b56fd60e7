// Python bindings of egret.Network (build from a JSON configuration, simulate, exact loss
// gradients, parameters as numpy arrays, checkpoints and HDF5 traces) and egret.ForwardBatch (a
// batch's forward pass with its adjoint tapes, kept for a later backward pass: what egret.torch
// builds on). The work is in python/src/network_of.hpp, one precision at a time; this file picks
// the precision and describes the Python surface.
#include <pybind11/stl.h>

#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "io/config/network_config.hpp"
#include "io/hdf5/checkpoint.hpp"
#include "io/hdf5/checkpoint_network.hpp"
#include "python/src/bindings.hpp"
#include "python/src/forward_batch.hpp"
#include "python/src/network_of.hpp"

namespace egret::python {
namespace {

std::string config_to_text(const py::object& config) {
  if (py::isinstance<py::str>(config)) return config.cast<std::string>();
  if (py::isinstance<py::dict>(config))
    return py::module_::import("json").attr("dumps")(config).cast<std::string>();
  throw std::invalid_argument("Network: configuration must be JSON text or a dict");
}

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

  // A training configuration (`egret train --config`) is also a network configuration: its
  // training sections are left to the training code.
  static Impl make(std::string text, const py::object& precision) {
    NetworkConfig cfg = parse_network_config(text, "<config>", checkpoint_training_sections());
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
  py::tuple loss_and_gradient(const py::object& samples, const std::string& loss, int threads,
                              const py::object& state_regularizer,
                              const py::object& activity_regularizer) {
    return visit([&](auto& n) {
      return n.loss_and_gradient(samples, loss, threads, state_regularizer, activity_regularizer);
    });
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
  void export_nir(const std::string& path, bool extension) const {
    visit([&](auto& n) { n.export_nir(path, extension); });
  }
  // In the precision its configuration names, or `precision` if given.
  static PyNetwork load_checkpoint(const std::string& path, const py::object& precision) {
    const Checkpoint c = read_checkpoint(path);
    NetworkConfig cfg = checkpoint_network_config(path, c);
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

namespace {

void bind_forward_batch(py::module_& m) {
  py::class_<ForwardBatch>(m, "ForwardBatch",
                           "A batch's forward pass with its adjoint tapes (Network.forward).")
      .def_property_readonly("traces", &ForwardBatch::traces,
                             "Readouts of the last layer's output trace, array (B, R, units).")
      .def_property_readonly("logits", &ForwardBatch::logits,
                             "Readout logits (B, R, classes), or None without a readout.")
      .def("results", &ForwardBatch::results, "Per-sample statistics (as Network.simulate).")
      .def("activity", &ForwardBatch::activity,
           "Per layer, the batch's mean events_per_unit_per_s and activation_sparsity.")
      .def("__len__", &ForwardBatch::size)
      .def("__repr__",
           [](const ForwardBatch& b) {
             return "<egret.ForwardBatch: " + std::to_string(b.size()) + " samples>";
           })
      .def("regularization", &ForwardBatch::regularization, py::kw_only(),
           py::arg("state_regularizer") = py::none(), py::arg("activity_regularizer") = py::none(),
           "The regularisers' mean over the batch (the arguments of Network.loss_and_gradient); "
           "their gradient is kept for backward(d_regularization=...).")
      .def("backward", &ForwardBatch::backward, py::kw_only(), py::arg("d_traces") = py::none(),
           py::arg("d_logits") = py::none(), py::arg("d_regularization") = 0.0,
           "Exact gradient summed over the batch, given dL/dtraces or dL/dlogits (B, R, .), plus "
           "d_regularization times the gradient of regularization(); returns {name: array}. "
           "Readout gradients only with d_logits.");
}

}  // namespace

void bind_network(py::module_& m) {
  bind_forward_batch(m);
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
           py::arg("state_regularizer") = py::none(), py::arg("activity_regularizer") = py::none(),
           "Mean loss over the samples (softmax_cross_entropy, binary_cross_entropy, "
           "mean_squared_error) plus the regularisers, its exact gradient {name: array} and "
           "statistics {loss, state_regularizer, activity_regularizer (the means of each term), "
           "correct, total, surrogate_pairs, zero_surrogate_pairs, backward_sparsity, "
           "backward_macs}. state_regularizer: {'weight', 'margin' (0.05), 'detach_threshold' "
           "(True)}, the EGRU paper's term keeping c below the threshold; activity_regularizer: "
           "{'weight', 'target_hz'} (docs/model.md).")
      .def("parameters", &PyNetwork::parameters, "The parameters by name, as numpy arrays.")
      .def("parameter_specs", &PyNetwork::parameter_specs,
           "How training reaches each layer parameter: {name: (constraint, training)}, "
           "constraint 'free', 'softplus' or 'log', training 'trained', 'time_constant' or "
           "'fixed'.")
      .def("set_parameters", &PyNetwork::set_parameters, py::arg("values"),
           "Replace parameters by name (shapes and values checked; a per-unit time constant also "
           "takes one number, given to every unit).")
      .def("save_checkpoint", &PyNetwork::save_checkpoint, py::arg("path"), py::kw_only(),
           py::arg("epoch") = 0, "Write an HDF5 checkpoint (configuration and parameters).")
      .def("export_nir", &PyNetwork::export_nir, py::arg("path"), py::kw_only(),
           py::arg("extension") = false,
           "Write the network with its current parameters as a NIR graph (docs/nir.md; "
           "egret.export_nir).")
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
