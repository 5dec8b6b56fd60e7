// C++ results as the Python dicts the module returns: a simulation (emitted events, readouts,
// per-layer counts and metrics, state snapshots) and a gradient ({"layer<l>.<name>": array}).
// Arrays are float64 in both precisions.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "adjoint/gradient.hpp"
#include "python/src/numpy_conversions.hpp"
#include "sim/layer_metrics.hpp"
#include "sim/recorder.hpp"

namespace egret::python {

template <class T>
py::array_t<double> f64_numpy(const std::vector<T>& v) {
  return vector_to_numpy(std::vector<double>(v.begin(), v.end()));
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

// The emitted events as four arrays: time, layer, unit, value.
template <class Scalar>
void add_emitted_events(py::dict& out, const SimResult<Scalar>& r) {
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
  out["time"] = time;
  out["layer"] = layer;
  out["unit"] = unit;
  out["value"] = val;
}

// Layer k's counts: events, exact operation counts (sim/operation_counts.hpp) and the
// NeuroBench-named metrics of this sample.
template <class Scalar>
py::dict layer_counts(const SimResult<Scalar>& r, std::size_t k) {
  const auto& l = r.layers[k];
  py::dict c;
  c["units"] = l.units;
  c["events"] = l.events;
  c["inputs_received"] = l.inputs_received;
  c["releases"] = l.releases;
  c["internal_steps"] = l.internal_steps;
  c["events_per_unit_per_s"] = r.rate_per_unit(k);
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
  return c;
}

// The state snapshots as {time: (K,), layers: [{variable: (K, N)}]}.
template <class Scalar>
py::dict snapshots_to_dict(const SimResult<Scalar>& r) {
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
  return snap;
}

template <class Scalar>
py::dict result_to_dict(const SimResult<Scalar>& r) {
  py::dict out;
  add_emitted_events(out, r);
  py::list readouts, logits, events_per_layer, counts;
  for (const auto& ro : r.readouts) {
    readouts.append(f64_numpy(ro.trace));
    logits.append(f64_numpy(ro.logits));
  }
  for (std::size_t k = 0; k < r.layers.size(); ++k) {
    events_per_layer.append(r.layers[k].events);
    counts.append(layer_counts(r, k));
  }
  out["readouts"] = readouts;
  out["logits"] = logits;
  out["events_per_layer"] = events_per_layer;
  out["layer_counts"] = counts;
  out["events_processed"] = r.events_processed;
  out["end_time"] = static_cast<double>(r.end_time);
  if (!r.snapshots.empty()) out["snapshots"] = snapshots_to_dict(r);
  return out;
}

}  // namespace egret::python
