// egret.Sample: one input sequence with its readouts and targets, as the trainer's Sample plus
// which targets were given. Built from numpy arrays (make_sample) or by C++ task generators.
#pragma once

#include <pybind11/pybind11.h>

#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "python/src/numpy_conversions.hpp"
#include "train/sample.hpp"

namespace egret::python {

// One input sequence: events, end time, readouts (points, then windows) and optional targets.
struct PySample {
  Sample<double> s;
  bool has_labels = false, has_values = false;
  // The sample in float, made on first use by a float network (with the GIL held).
  mutable std::shared_ptr<const Sample<float>> in_float;

  template <class Scalar>
  const Sample<Scalar>& sample() const {
    if constexpr (std::is_same_v<Scalar, double>) {
      return s;
    } else {
      if (!in_float) in_float = std::make_shared<const Sample<float>>(cast_sample<float>(s));
      return *in_float;
    }
  }

  Index readouts() const {
    return static_cast<Index>(s.readout_times.size() + s.readout_windows.size());
  }
  SimOptions<double> options(const RunSettings& run) const { return s.options(run); }
};

// A class label: a Python or numpy integer (or a 0-d integer array) in [0, INT_MAX].
inline int label_value(const py::handle& obj, const std::string& what) {
  const py::array a = py::array::ensure(obj);
  const bool integral =
      py::isinstance<py::int_>(obj) ||
      (a && a.ndim() == 0 && (a.dtype().kind() == 'i' || a.dtype().kind() == 'u'));
  if (!integral || py::isinstance<py::bool_>(obj))
    throw std::invalid_argument(what + ": expected an integer class label");
  const py::int_ as_int(py::reinterpret_borrow<py::object>(obj));
  long long v = -1;
  try {
    v = as_int.cast<long long>();
  } catch (const py::cast_error&) {  // beyond 64 bits
  }
  if (v < 0 || v > std::numeric_limits<int>::max())
    throw std::invalid_argument(
        what + ": label " + py::str(static_cast<const py::object&>(as_int)).cast<std::string>() +
        " out of range [0, 2^31)");
  return static_cast<int>(v);
}

inline PySample make_sample(const py::object& t, const py::object& channel, const py::object& value,
                            Index channels, double end_time, const py::object& readout_times,
                            const py::object& readout_windows, const py::object& labels,
                            const py::object& targets) {
  if (channels <= 0) throw std::invalid_argument("Sample: channels must be > 0");
  if (!std::isfinite(end_time) || end_time <= 0)
    throw std::invalid_argument("Sample: end_time must be finite and > 0");
  PySample p;
  p.s.input = to_input_stream(t, channel, value, channels);
  if (!p.s.input.events().empty() && p.s.input.events().back().time > end_time)
    throw std::invalid_argument("Sample: input events after end_time");
  p.s.end_time = end_time;
  auto check_time = [end_time](double x, const std::string& what) {
    if (!(std::isfinite(x) && x >= 0 && x <= end_time))
      throw std::invalid_argument("Sample: " + what + " " + std::to_string(x) +
                                  " is outside [0, end_time = " + std::to_string(end_time) + "]");
  };
  if (!readout_times.is_none()) {
    const F64 rt = as_f64_vector(readout_times, "Sample: readout_times");
    p.s.readout_times.assign(rt.data(), rt.data() + rt.shape(0));
    for (double x : p.s.readout_times) check_time(x, "readout time");
  }
  p.s.readout_windows = to_windows(readout_windows);
  for (const auto& [a, b] : p.s.readout_windows) {
    check_time(a, "readout window begin");
    check_time(b, "readout window end");
    if (!(a < b))
      throw std::invalid_argument("Sample: readout window [" + std::to_string(a) + ", " +
                                  std::to_string(b) + "] must have begin < end");
  }
  const Index r = p.readouts();
  if ((!labels.is_none() || !targets.is_none()) && r == 0)
    throw std::invalid_argument("Sample: labels or targets given but no readouts");
  if (!labels.is_none()) {
    const py::array la = py::array::ensure(labels);
    if (py::isinstance<py::int_>(labels) || (la && la.ndim() == 0)) {
      p.s.targets.labels.assign(static_cast<std::size_t>(r), label_value(labels, "Sample: labels"));
    } else {
      py::sequence seq;
      try {
        seq = py::reinterpret_borrow<py::sequence>(py::list(labels));
      } catch (const py::error_already_set&) {
        throw std::invalid_argument("Sample: labels must be an integer or a sequence of integers");
      }
      for (const auto& item : seq)
        p.s.targets.labels.push_back(label_value(item, "Sample: labels"));
    }
    if (static_cast<Index>(p.s.targets.labels.size()) != r)
      throw std::invalid_argument("Sample: " + std::to_string(p.s.targets.labels.size()) +
                                  " labels for " + std::to_string(r) + " readouts");
    p.has_labels = true;
  }
  if (!targets.is_none()) {
    F64 a;
    try {
      a = py::cast<F64>(targets);
    } catch (const std::exception&) {
      throw std::invalid_argument("Sample: targets must be an array of numbers");
    }
    if (a.ndim() != 2 || a.shape(0) != r || a.shape(1) == 0)
      throw std::invalid_argument(
          "Sample: targets must have shape (readouts = " + std::to_string(r) + ", outputs >= 1)");
    for (py::ssize_t j = 0; j < a.shape(0); ++j) {
      std::vector<double> row(a.data() + j * a.shape(1), a.data() + (j + 1) * a.shape(1));
      for (double v : row)
        if (!std::isfinite(v)) throw std::invalid_argument("Sample: targets contain NaN or inf");
      p.s.targets.values.push_back(std::move(row));
    }
    p.has_values = true;
  }
  return p;
}

}  // namespace egret::python
