// The training regularisers as Python passes them: None (off) or a dict of their settings, every
// key checked (an unknown key is an error, not ignored).
#pragma once

#include <pybind11/pybind11.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

#include "adjoint/activity_regularizer.hpp"
#include "adjoint/state_regularizer.hpp"

namespace egret::python {

namespace detail {

inline py::dict regularizer_dict(const py::object& o, const std::string& name,
                                 const std::set<std::string>& keys) {
  if (!py::isinstance<py::dict>(o)) throw std::invalid_argument(name + ": expected None or a dict");
  const py::dict d = o.cast<py::dict>();
  for (const auto& item : d) {
    const std::string key = py::str(item.first);
    if (!keys.count(key)) throw std::invalid_argument(name + ": unknown key '" + key + "'");
  }
  return d;
}

inline double non_negative(const py::dict& d, const char* key, double fallback,
                           const std::string& name) {
  if (!d.contains(key)) return fallback;
  const double v = finite_scalar(d[key], name + "." + key);
  if (v < 0) throw std::invalid_argument(name + "." + key + " must be >= 0");
  return v;
}

}  // namespace detail

// {"weight": w, "margin": 0.05, "detach_threshold": True} (adjoint/state_regularizer.hpp).
inline StateRegularizer state_regularizer_from(const py::object& o) {
  StateRegularizer r;
  if (o.is_none()) return r;
  const std::string name = "state_regularizer";
  const py::dict d = detail::regularizer_dict(o, name, {"weight", "margin", "detach_threshold"});
  r.weight = detail::non_negative(d, "weight", 0, name);
  r.margin = detail::non_negative(d, "margin", r.margin, name);
  if (d.contains("detach_threshold")) {
    if (!py::isinstance<py::bool_>(d["detach_threshold"]))
      throw std::invalid_argument(name + ".detach_threshold: expected True or False");
    r.detach_threshold = d["detach_threshold"].cast<bool>();
  }
  return r;
}

// {"weight": w, "target_hz": rate} (adjoint/activity_regularizer.hpp).
inline ActivityRegularizer activity_regularizer_from(const py::object& o) {
  ActivityRegularizer r;
  if (o.is_none()) return r;
  const std::string name = "activity_regularizer";
  const py::dict d = detail::regularizer_dict(o, name, {"weight", "target_hz"});
  r.weight = detail::non_negative(d, "weight", 0, name);
  r.target_hz = detail::non_negative(d, "target_hz", 0, name);
  return r;
}

}  // namespace egret::python
