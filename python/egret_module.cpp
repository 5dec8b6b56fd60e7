// The pybind11 module `egret._egret`: networks from configuration text, simulation of input
// events given as numpy arrays, parameters as numpy arrays, and loss + exact gradients of
// continuous EGRU networks. The GIL is released while C++ runs; C++ errors arrive as Python
// exceptions with the same messages (std::invalid_argument -> ValueError).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "adjoint/continuous_egru_backward.hpp"
#include "adjoint/losses.hpp"
#include "io/network_config.hpp"
#include "sim/engine.hpp"
#include "train/parameters.hpp"

namespace py = pybind11;
using egret::Index;

namespace {

using F64 = py::array_t<double, py::array::c_style | py::array::forcecast>;
using I64 = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

egret::InputStream<double> to_stream(const F64& t, const I64& channel, const py::object& value,
                                     Index channels) {
  if (t.ndim() != 1 || channel.ndim() != 1 || t.shape(0) != channel.shape(0))
    throw std::invalid_argument("input events: t and channel must be 1-D arrays of equal length");
  std::vector<egret::InputEvent<double>> ev(static_cast<std::size_t>(t.shape(0)));
  const double* tp = t.data();
  const std::int64_t* cp = channel.data();
  F64 v;
  if (!value.is_none()) {
    v = value.cast<F64>();
    if (v.ndim() != 1 || v.shape(0) != t.shape(0))
      throw std::invalid_argument("input events: value must be a 1-D array as long as t");
  }
  for (std::size_t i = 0; i < ev.size(); ++i)
    ev[i] = {tp[i], static_cast<Index>(cp[i]), value.is_none() ? 1.0 : v.data()[i]};
  return egret::InputStream<double>(std::move(ev), channels);
}

std::vector<std::pair<double, double>> to_windows(const py::object& w) {
  std::vector<std::pair<double, double>> out;
  if (w.is_none()) return out;
  for (const auto& item : w.cast<py::list>()) {
    const auto pair = item.cast<std::pair<double, double>>();
    out.push_back(pair);
  }
  return out;
}

template <class M>
py::array_t<double> matrix_to_numpy(const M& m) {
  py::array_t<double> a({static_cast<py::ssize_t>(m.rows()), static_cast<py::ssize_t>(m.cols())});
  auto r = a.mutable_unchecked<2>();
  for (Index i = 0; i < m.rows(); ++i)
    for (Index j = 0; j < m.cols(); ++j) r(i, j) = m(i, j);
  return a;
}

template <class V>
py::array_t<double> vector_to_numpy(const V& v) {
  py::array_t<double> a(static_cast<py::ssize_t>(v.size()));
  auto r = a.mutable_unchecked<1>();
  for (Index i = 0; i < v.size(); ++i) r(i) = v(i);
  return a;
}

template <class M>
void numpy_to_matrix(const py::handle& obj, M& m, const std::string& name) {
  const auto a = py::cast<F64>(obj);
  const bool is_vector = m.cols() == 1;
  if ((is_vector && (a.ndim() != 1 || a.shape(0) != m.rows())) ||
      (!is_vector && (a.ndim() != 2 || a.shape(0) != m.rows() || a.shape(1) != m.cols())))
    throw std::invalid_argument(name + ": expected shape (" + std::to_string(m.rows()) +
                                (is_vector ? "" : ", " + std::to_string(m.cols())) + ")");
  const double* d = a.data();
  for (Index i = 0; i < m.rows(); ++i)
    for (Index j = 0; j < m.cols(); ++j) {
      const double x = d[i * m.cols() + j];
      if (!std::isfinite(x)) throw std::invalid_argument(name + ": NaN or infinite entry");
      m(i, j) = x;
    }
}

// The per-layer fields shared by parameters and gradients, into `out` as "<prefix><name>".
template <class T>
void add_layer_fields(py::dict& out, const std::string& prefix, const T& x) {
  out[py::str(prefix + "U_u")] = matrix_to_numpy(x.U_u);
  out[py::str(prefix + "U_r")] = matrix_to_numpy(x.U_r);
  out[py::str(prefix + "U_z")] = matrix_to_numpy(x.U_z);
  out[py::str(prefix + "V_u")] = matrix_to_numpy(x.V_u);
  out[py::str(prefix + "V_r")] = matrix_to_numpy(x.V_r);
  out[py::str(prefix + "V_z")] = matrix_to_numpy(x.V_z);
  out[py::str(prefix + "b_u")] = vector_to_numpy(x.b_u);
  out[py::str(prefix + "b_r")] = vector_to_numpy(x.b_r);
  out[py::str(prefix + "b_z")] = vector_to_numpy(x.b_z);
  out[py::str(prefix + "theta")] = vector_to_numpy(x.theta);
  out[py::str(prefix + "tau_m")] = x.tau_m;
  out[py::str(prefix + "tau_o")] = x.tau_o;
}

class PyNetwork {
 public:
  explicit PyNetwork(const std::string& config_json)
      : cfg_(egret::parse_network_config(config_json, "<config>")),
        net_(egret::build_network<double>(cfg_)) {}

  Index input_channels() const { return net_.input_channels(); }
  Index layers() const { return net_.size(); }

  py::dict simulate(const F64& t, const I64& channel, const py::object& value, double end_time,
                    const std::vector<double>& readout_times, const py::object& windows) {
    const auto input = to_stream(t, channel, value, net_.input_channels());
    egret::SimOptions<double> opt;
    opt.end_time = end_time;
    opt.readout_times = readout_times;
    opt.readout_windows = to_windows(windows);
    egret::SimResult<double> r;
    {
      py::gil_scoped_release release;
      r = egret::simulate(net_, input, opt);
    }
    const auto n = static_cast<py::ssize_t>(r.trace.size());
    py::array_t<double> time(n), val(n);
    py::array_t<std::int64_t> layer(n), unit(n);
    for (py::ssize_t i = 0; i < n; ++i) {
      time.mutable_at(i) = r.trace[static_cast<std::size_t>(i)].time;
      layer.mutable_at(i) = r.trace[static_cast<std::size_t>(i)].layer;
      unit.mutable_at(i) = r.trace[static_cast<std::size_t>(i)].unit;
      val.mutable_at(i) = r.trace[static_cast<std::size_t>(i)].value;
    }
    py::list readouts, logits;
    for (const auto& ro : r.readouts) {
      readouts.append(
          py::array_t<double>(static_cast<py::ssize_t>(ro.trace.size()), ro.trace.data()));
      logits.append(
          py::array_t<double>(static_cast<py::ssize_t>(ro.logits.size()), ro.logits.data()));
    }
    py::list events_per_layer;
    for (const auto& l : r.layers) events_per_layer.append(l.events);
    py::dict out;
    out["time"] = time;
    out["layer"] = layer;
    out["unit"] = unit;
    out["value"] = val;
    out["readouts"] = readouts;
    out["logits"] = logits;
    out["events_per_layer"] = events_per_layer;
    out["events_processed"] = r.events_processed;
    return out;
  }

  // Loss and exact gradients (continuous EGRU layers with a readout). Targets: a list of class
  // labels (softmax cross-entropy) or of target vectors (binary cross-entropy, MSE), one per
  // readout (points first, then windows).
  py::tuple loss_and_gradient(const F64& t, const I64& channel, const py::object& value,
                              double end_time, const std::vector<double>& readout_times,
                              const py::object& windows, const std::string& loss,
                              const py::object& targets) {
    const auto input = to_stream(t, channel, value, net_.input_channels());
    const auto kind = egret::parse_loss_kind(loss);
    egret::ReadoutTargets<double> tg;
    if (kind == egret::LossKind::kSoftmaxCrossEntropy)
      tg.labels = targets.cast<std::vector<int>>();
    else
      tg.values = targets.cast<std::vector<std::vector<double>>>();
    egret::SimOptions<double> opt;
    opt.end_time = end_time;
    opt.readout_times = readout_times;
    opt.readout_windows = to_windows(windows);
    egret::Tape<double> tape;
    opt.tape = &tape;
    egret::Gradient<double> g;
    double value_out = 0;
    egret::BackwardReport report;
    {
      py::gil_scoped_release release;
      const auto fwd = egret::simulate(net_, input, opt);
      const auto l = egret::evaluate_loss(kind, fwd.readouts, tg);
      value_out = l.loss;
      g = egret::zero_gradient(net_, input.size());
      const auto d_o = egret::readout_backward(net_, fwd, l.dlogits, g);
      report = egret::continuous_egru_backward(net_, tape, fwd, d_o, g);
    }
    if (!report.ok()) throw std::runtime_error("backward pass: " + report.first_problem);
    py::dict grads;
    for (std::size_t l = 0; l < g.layers.size(); ++l)
      add_layer_fields(grads, "layer" + std::to_string(l) + ".", g.layers[l]);
    grads["readout.W_o"] = matrix_to_numpy(g.W_o);
    grads["readout.b_o"] = vector_to_numpy(g.b_o);
    grads["input.time"] =
        py::array_t<double>(static_cast<py::ssize_t>(g.input_time.size()), g.input_time.data());
    grads["input.value"] =
        py::array_t<double>(static_cast<py::ssize_t>(g.input_value.size()), g.input_value.data());
    return py::make_tuple(value_out, grads);
  }

  // Parameters of the continuous EGRU layers and the readout, by name.
  py::dict parameters() const {
    py::dict out;
    for (Index l = 0; l < net_.size(); ++l) {
      const auto* layer = dynamic_cast<const egret::ContinuousEgruLayer<double>*>(&net_.layer(l));
      if (!layer) continue;
      add_layer_fields(out, "layer" + std::to_string(l) + ".", layer->params());
    }
    if (const auto* ro = net_.readout()) {
      out["readout.W_o"] = matrix_to_numpy(ro->W_o);
      out["readout.b_o"] = vector_to_numpy(ro->b_o);
    }
    return out;
  }

  // Replaces the named parameters (shapes and values checked; the layer is rebuilt and
  // validated, so e.g. a non-positive threshold is a ValueError).
  void set_parameters(const py::dict& values) {
    const py::dict known = parameters();
    for (const auto& item : values) {
      const std::string key = py::str(item.first);
      if (!known.contains(key))
        throw std::invalid_argument("set_parameters: unknown parameter '" + key + "'");
    }
    egret::Network<double> fresh;
    for (Index l = 0; l < net_.size(); ++l) {
      const auto* layer = dynamic_cast<const egret::ContinuousEgruLayer<double>*>(&net_.layer(l));
      if (!layer)
        throw std::invalid_argument("set_parameters: layer " + std::to_string(l) +
                                    " is not a continuous EGRU layer");
      auto p = layer->params();
      const std::string n = "layer" + std::to_string(l) + ".";
      auto set = [&](const char* name, auto& m) {
        if (values.contains(n + name)) numpy_to_matrix(values[py::str(n + name)], m, n + name);
      };
      set("U_u", p.U_u);
      set("U_r", p.U_r);
      set("U_z", p.U_z);
      set("V_u", p.V_u);
      set("V_r", p.V_r);
      set("V_z", p.V_z);
      set("b_u", p.b_u);
      set("b_r", p.b_r);
      set("b_z", p.b_z);
      set("theta", p.theta);
      if (values.contains(n + "tau_m")) p.tau_m = values[py::str(n + "tau_m")].cast<double>();
      if (values.contains(n + "tau_o")) p.tau_o = values[py::str(n + "tau_o")].cast<double>();
      p.validate("layer " + std::to_string(l));
      fresh.add_layer(std::make_unique<egret::ContinuousEgruLayer<double>>(
          std::make_shared<egret::ContinuousEgruParams<double>>(std::move(p))));
    }
    if (const auto* ro = net_.readout()) {
      egret::Readout<double> r = *ro;
      if (values.contains("readout.W_o"))
        numpy_to_matrix(values["readout.W_o"], r.W_o, "readout.W_o");
      if (values.contains("readout.b_o"))
        numpy_to_matrix(values["readout.b_o"], r.b_o, "readout.b_o");
      fresh.set_readout(std::move(r));
    }
    net_ = std::move(fresh);
  }

 private:
  egret::NetworkConfig cfg_;
  egret::Network<double> net_;
};

}  // namespace

PYBIND11_MODULE(_egret, m) {
  m.doc() = "egret: event-driven simulation and exact gradients of continuous-time EGRU networks";
  py::class_<PyNetwork>(m, "Network")
      .def(py::init<const std::string&>(), py::arg("config_json"),
           "A network from a JSON configuration (the format of `egret simulate --config`).")
      .def_property_readonly("input_channels", &PyNetwork::input_channels)
      .def_property_readonly("layers", &PyNetwork::layers)
      .def("simulate", &PyNetwork::simulate, py::arg("t"), py::arg("channel"),
           py::arg("value") = py::none(), py::arg("end_time"),
           py::arg("readout_times") = std::vector<double>{},
           py::arg("readout_windows") = py::none(),
           "Simulate input events (times in ms, channels, optional values); returns the emitted "
           "events (time, layer, unit, value arrays), readouts and logits.")
      .def("loss_and_gradient", &PyNetwork::loss_and_gradient, py::arg("t"), py::arg("channel"),
           py::arg("value") = py::none(), py::arg("end_time"),
           py::arg("readout_times") = std::vector<double>{},
           py::arg("readout_windows") = py::none(), py::arg("loss") = "softmax_cross_entropy",
           py::arg("targets"),
           "Loss at the readouts and its exact gradient: (loss, {name: array}).")
      .def("parameters", &PyNetwork::parameters, "The parameters by name, as numpy arrays.")
      .def("set_parameters", &PyNetwork::set_parameters, py::arg("values"),
           "Replace parameters by name (shapes and values checked).");
}
