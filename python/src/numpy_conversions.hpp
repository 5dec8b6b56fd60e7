// Conversions between numpy arrays and egret's containers, shared by the binding files. Every
// conversion checks shapes and finiteness and names the offending argument, so that bad input
// from Python is a ValueError with a message, never a silent reinterpretation.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "events/event.hpp"
#include "events/input_stream.hpp"
#include "sim/parameters.hpp"
#include "sim/precision_cast.hpp"

namespace egret::python {

namespace py = pybind11;

using F64 = py::array_t<double, py::array::c_style | py::array::forcecast>;
using I64 = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

// A 1-D float64 array from any array-like (lists, other dtypes); `what` names it in errors.
inline F64 as_f64_vector(const py::handle& obj, const std::string& what) {
  F64 a;
  try {
    a = py::cast<F64>(obj);
  } catch (const py::cast_error&) {
    throw std::invalid_argument(what + ": expected a 1-D array of numbers");
  } catch (const py::error_already_set&) {  // numpy could not convert (e.g. strings)
    throw std::invalid_argument(what + ": expected a 1-D array of numbers");
  }
  if (a.ndim() != 1) throw std::invalid_argument(what + ": expected a 1-D array");
  return a;
}

// Integer channels: float arrays are accepted only if every entry is integral.
inline std::vector<Index> as_channels(const py::handle& obj, const std::string& what) {
  const py::array raw = py::array::ensure(obj);
  if (!raw) throw std::invalid_argument(what + ": expected a 1-D array of integers");
  if (raw.ndim() != 1) throw std::invalid_argument(what + ": expected a 1-D array");
  const auto kind = raw.dtype().kind();
  if (kind != 'i' && kind != 'u' && kind != 'f')
    throw std::invalid_argument(what + ": expected integers, got dtype " +
                                std::string(py::str(raw.dtype())));
  const F64 a = py::cast<F64>(raw);
  std::vector<Index> out(static_cast<std::size_t>(a.shape(0)));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double v = a.data()[i];
    if (!(std::isfinite(v) && v == std::floor(v)))
      throw std::invalid_argument(what + ": entry " + std::to_string(i) + " is not an integer");
    out[i] = static_cast<Index>(v);
  }
  return out;
}

// Input events (time [ms], channel, value = 1 if None) as the engine's validated stream.
inline InputStream<double> to_input_stream(const py::handle& t, const py::handle& channel,
                                           const py::handle& value, Index channels) {
  const F64 times = as_f64_vector(t, "input events: t");
  const std::vector<Index> ch = as_channels(channel, "input events: channel");
  if (static_cast<std::size_t>(times.shape(0)) != ch.size())
    throw std::invalid_argument("input events: t and channel must be 1-D arrays of equal length");
  F64 values;
  const bool has_values = !value.is_none();
  if (has_values) {
    values = as_f64_vector(value, "input events: value");
    if (values.shape(0) != times.shape(0))
      throw std::invalid_argument("input events: value must be a 1-D array as long as t");
  }
  std::vector<InputEvent<double>> ev(ch.size());
  for (std::size_t i = 0; i < ev.size(); ++i)
    ev[i] = {times.data()[i], ch[i], has_values ? values.data()[i] : 1.0};
  return InputStream<double>(std::move(ev), channels);
}

inline std::vector<std::pair<double, double>> to_windows(const py::handle& w) {
  std::vector<std::pair<double, double>> out;
  if (w.is_none()) return out;
  if (!py::isinstance<py::iterable>(w))
    throw std::invalid_argument("readout_windows: expected a sequence of (begin, end) pairs");
  for (const auto& item : w) {
    try {
      out.push_back(item.cast<std::pair<double, double>>());
    } catch (const py::cast_error&) {
      throw std::invalid_argument("readout_windows: expected a sequence of (begin, end) pairs");
    }
  }
  return out;
}

template <class T>
py::array_t<T> vector_to_numpy(const std::vector<T>& v) {
  return py::array_t<T>(static_cast<py::ssize_t>(v.size()), v.data());
}

// An Eigen matrix as a 2-D array, an Eigen (column) vector as a 1-D array.
template <class M>
py::array_t<double> eigen_to_numpy(const M& m) {
  if constexpr (M::ColsAtCompileTime == 1) {
    py::array_t<double> a(static_cast<py::ssize_t>(m.size()));
    auto r = a.mutable_unchecked<1>();
    for (Index i = 0; i < m.size(); ++i) r(i) = m(i);
    return a;
  } else {
    py::array_t<double> a({static_cast<py::ssize_t>(m.rows()), static_cast<py::ssize_t>(m.cols())});
    auto r = a.mutable_unchecked<2>();
    for (Index i = 0; i < m.rows(); ++i)
      for (Index j = 0; j < m.cols(); ++j) r(i, j) = m(i, j);
    return a;
  }
}

// Fills an Eigen matrix (2-D array) or vector (1-D array) from an array of exactly its shape.
template <class M>
void numpy_to_matrix(const py::handle& obj, M& m, const std::string& name) {
  F64 a;
  try {
    a = py::cast<F64>(obj);
  } catch (const py::cast_error&) {
    throw std::invalid_argument(name + ": expected an array of numbers");
  } catch (const py::error_already_set& e) {  // e.g. strings, or a tensor that requires grad
    throw std::invalid_argument(name + ": expected an array of numbers (" + e.what() + ")");
  }
  constexpr bool is_vector = M::ColsAtCompileTime == 1;
  if ((is_vector && (a.ndim() != 1 || a.shape(0) != m.rows())) ||
      (!is_vector && (a.ndim() != 2 || a.shape(0) != m.rows() || a.shape(1) != m.cols())))
    throw std::invalid_argument(name + ": expected shape (" + std::to_string(m.rows()) +
                                (is_vector ? "" : ", " + std::to_string(m.cols())) + ")");
  const double* d = a.data();
  for (Index i = 0; i < m.rows(); ++i)
    for (Index j = 0; j < m.cols(); ++j) {
      const double x = d[i * m.cols() + j];
      if (!std::isfinite(x))
        throw std::invalid_argument(name + ": NaN or infinite entry at index " +
                                    std::to_string(i * m.cols() + j));
      m(i, j) = narrow_checked<typename M::Scalar>(
          x, name + " entry " + std::to_string(i * m.cols() + j));
    }
}

// A named parameter (sim/parameters.hpp) as a float, a 1-D or a 2-D array, by its rank.
template <class Entry>
py::object parameter_to_python(const Entry& e) {
  switch (e.spec.rank) {
    case Rank::kScalar:
      return py::float_(static_cast<double>(e.value(0, 0)));
    case Rank::kVector:
      return eigen_to_numpy(e.value.col(0).eval());
    default:
      return eigen_to_numpy(e.value);
  }
}

double finite_scalar(const py::handle& obj, const std::string& name);

// The inverse of parameter_to_python: shape (by rank) and finiteness checked.
template <class Entry>
void parameter_from_python(const py::handle& obj, Entry& e, const std::string& name) {
  using Scalar = typename std::decay_t<decltype(e.value)>::Scalar;
  const bool number = py::isinstance<py::float_>(obj) || py::isinstance<py::int_>(obj) ||
                      (py::isinstance<py::array>(obj) && obj.cast<py::array>().ndim() == 0);
  if (e.spec.rank == Rank::kScalar) {
    e.value(0, 0) = narrow_checked<Scalar>(finite_scalar(obj, name), name);
  } else if (e.spec.was_scalar && number) {  // a per-unit time constant given as one number
    e.value.setConstant(narrow_checked<Scalar>(finite_scalar(obj, name), name));
  } else if (e.spec.rank == Rank::kVector) {
    Vector<Scalar> v(e.value.rows());
    numpy_to_matrix(obj, v, name);
    e.value.col(0) = v;
  } else {
    numpy_to_matrix(obj, e.value, name);
  }
}

inline double finite_scalar(const py::handle& obj, const std::string& name) {
  double v = 0;
  try {
    v = py::cast<double>(obj);
  } catch (const py::cast_error&) {
    throw std::invalid_argument(name + ": expected a number");
  } catch (const py::error_already_set&) {
    throw std::invalid_argument(name + ": expected a number");
  }
  if (!std::isfinite(v)) throw std::invalid_argument(name + ": NaN or infinite");
  return v;
}

}  // namespace egret::python
