// egret.Sample: one input sequence with its readouts and targets, as the trainer's Sample plus
// which targets were given. Built from numpy arrays (make_sample) or by C++ task generators.
#pragma once

#include <pybind11/pybind11.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "python/src/numpy_conversions.hpp"
#include "sim/engine.hpp"
#include "train/trainer.hpp"

namespace egret::python {

// One input sequence: events, end time, readouts (points, then windows) and optional targets.
struct PySample {
  Sample<double> s;
  bool has_labels = false, has_values = false;

  Index readouts() const {
    return static_cast<Index>(s.readout_times.size() + s.readout_windows.size());
  }
  SimOptions<double> options() const {
    SimOptions<double> o;
    o.end_time = s.end_time;
    o.readout_times = s.readout_times;
    o.readout_windows = s.readout_windows;
    return o;
  }
};

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
  if (!readout_times.is_none()) {
    const F64 rt = as_f64_vector(readout_times, "Sample: readout_times");
    p.s.readout_times.assign(rt.data(), rt.data() + rt.shape(0));
  }
  p.s.readout_windows = to_windows(readout_windows);
  const Index r = p.readouts();
  if (!labels.is_none()) {
    if (py::isinstance<py::int_>(labels)) {
      p.s.targets.labels.assign(static_cast<std::size_t>(r), labels.cast<int>());
    } else {
      const std::vector<Index> l = as_channels(labels, "Sample: labels");
      p.s.targets.labels.assign(l.begin(), l.end());
    }
    if (static_cast<Index>(p.s.targets.labels.size()) != r)
      throw std::invalid_argument("Sample: " + std::to_string(p.s.targets.labels.size()) +
                                  " labels for " + std::to_string(r) + " readouts");
    for (int l : p.s.targets.labels)
      if (l < 0) throw std::invalid_argument("Sample: labels must be >= 0");
    p.has_labels = true;
  }
  if (!targets.is_none()) {
    const F64 a = py::cast<F64>(py::array::ensure(targets));
    if (!a) throw std::invalid_argument("Sample: targets must be an array of numbers");
    if (a.ndim() != 2 || a.shape(0) != r)
      throw std::invalid_argument(
          "Sample: targets must have shape (readouts = " + std::to_string(r) + ", outputs)");
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
