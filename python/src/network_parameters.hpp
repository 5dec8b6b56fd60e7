// A network's parameters by name, as Python sees them: "layer<l>.<name>" and "readout.W_o",
// "readout.b_o", as numpy arrays; how training reaches each; and a network with some replaced.
#pragma once

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

#include "python/src/numpy_conversions.hpp"
#include "python/src/result_dicts.hpp"
#include "sim/network.hpp"

namespace egret::python {

template <class Scalar>
py::dict named_parameters(const Network<Scalar>& net) {
  py::dict out;
  for (Index l = 0; l < net.size(); ++l)
    add_named_parameters(out, "layer" + std::to_string(l) + ".", net.layer(l).parameters());
  if (const auto* ro = net.readout()) {
    out["readout.W_o"] = eigen_to_numpy(ro->W_o);
    out["readout.b_o"] = eigen_to_numpy(ro->b_o);
  }
  return out;
}

// {name: (constraint, training)}, constraint "free", "softplus" or "log" and training "trained",
// "time_constant" or "fixed".
template <class Scalar>
py::dict parameter_specs(const Network<Scalar>& net) {
  py::dict out;
  for (Index l = 0; l < net.size(); ++l) {
    for (const auto& e : net.layer(l).parameters()) {
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

// The readout with "readout.W_o" and "readout.b_o" replaced where given; returns how many were.
template <class Scalar>
std::size_t replace_readout(Readout<Scalar>& r, const py::dict& values) {
  std::size_t used = 0;
  if (values.contains("readout.W_o")) {
    numpy_to_matrix(values["readout.W_o"], r.W_o, "readout.W_o");
    ++used;
  }
  if (values.contains("readout.b_o")) {
    numpy_to_matrix(values["readout.b_o"], r.b_o, "readout.b_o");
    ++used;
  }
  return used;
}

// The network with the named parameters replaced (shapes and values checked, layers rebuilt and
// validated by their family, so e.g. a non-positive threshold is a ValueError). A name the
// network does not have is an error; nothing changes unless every value is accepted.
template <class Scalar>
Network<Scalar> with_parameters(const Network<Scalar>& net, const py::dict& values) {
  std::size_t used = 0;
  Network<Scalar> fresh;
  for (Index l = 0; l < net.size(); ++l) {
    const std::string prefix = "layer" + std::to_string(l) + ".";
    NamedParameters<Scalar> p = net.layer(l).parameters();
    for (auto& e : p) {
      const std::string key = prefix + e.spec.name;
      if (!values.contains(key)) continue;
      parameter_from_python(values[py::str(key)], e, key);
      ++used;
    }
    try {
      fresh.add_layer(net.layer(l).with_parameters(p));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("layer " + std::to_string(l) + ": " + e.what());
    }
  }
  if (const auto* ro = net.readout()) {
    Readout<Scalar> r = *ro;
    used += replace_readout(r, values);
    fresh.set_readout(std::move(r));
  }
  if (used != values.size()) {
    const py::dict known = named_parameters(net);
    for (const auto& item : values) {
      const std::string key = py::str(item.first);
      if (!known.contains(key))
        throw std::invalid_argument("parameters: unknown parameter '" + key + "'");
    }
  }
  return fresh;
}

}  // namespace egret::python
