// A layer's named parameters: what a cell family exposes to everything generic (configuration
// overrides, the flat training vector, checkpoints, the Python module, gradients). Each entry has
// a name (the seed paper's symbol or egret's U/V/b names), a shape, how training moves it and
// whether it trains at all. A scalar parameter is a 1 x 1 matrix.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/numeric_types.hpp"

namespace egret {

// How training reaches a parameter from an unconstrained coordinate x.
enum class Constraint {
  kFree,      // the value is x
  kSoftplus,  // value = softplus(x) = log(1 + e^x) > 0 (thresholds)
  kLog,       // value = e^x > 0 (time constants)
};

enum class Training {
  kTrained,       // always in the training vector
  kTimeConstant,  // only with train_time_constants
  kFixed,         // configuration only (initial states, ...)
};

// A scalar is stored as 1 x 1, a vector as N x 1; files and Python keep the distinction.
enum class Rank { kScalar, kVector, kMatrix };

struct ParameterSpec {
  std::string name;
  Constraint constraint = Constraint::kFree;
  Training training = Training::kTrained;
  Rank rank = Rank::kMatrix;  // set from the field by collect_parameters
  // A per-unit vector that was one scalar for the whole layer before checkpoint format 4
  // (docs/formats.md): a single value (an old checkpoint's attribute or training value, a number
  // in a configuration or from Python) is broadcast to every unit.
  bool was_scalar = false;
};

template <class Scalar>
class NamedParameters {
 public:
  struct Entry {
    ParameterSpec spec;
    Matrix<Scalar> value;
  };

  void add(ParameterSpec spec, Matrix<Scalar> value) {
    entries_.push_back({std::move(spec), std::move(value)});
  }
  std::size_t size() const { return entries_.size(); }
  Entry& operator[](std::size_t i) { return entries_[i]; }
  const Entry& operator[](std::size_t i) const { return entries_[i]; }
  auto begin() { return entries_.begin(); }
  auto end() { return entries_.end(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }

  const Matrix<Scalar>* find(const std::string& name) const {
    for (const auto& e : entries_)
      if (e.spec.name == name) return &e.value;
    return nullptr;
  }
  Matrix<Scalar>* find(const std::string& name) {
    for (auto& e : entries_)
      if (e.spec.name == name) return &e.value;
    return nullptr;
  }
  // The parameter `name`; an unknown name is an error that lists the known ones.
  Matrix<Scalar>& at(const std::string& name, const std::string& where) {
    if (auto* m = find(name)) return *m;
    throw std::invalid_argument(where + ": unknown parameter '" + name + "' (known: " + names() +
                                ")");
  }
  const Matrix<Scalar>& at(const std::string& name, const std::string& where) const {
    return const_cast<NamedParameters*>(this)->at(name, where);
  }
  std::string names() const {
    std::string s;
    for (const auto& e : entries_) s += (s.empty() ? "" : ", ") + e.spec.name;
    return s;
  }

  // Same names and shapes, all zero: the shape of a gradient.
  NamedParameters zeros_like() const {
    NamedParameters z;
    for (const auto& e : entries_)
      z.add(e.spec, Matrix<Scalar>::Zero(e.value.rows(), e.value.cols()));
    return z;
  }
  // Every value zero in place (a gradient buffer reused for the next sample).
  void set_zero() {
    for (auto& e : entries_) e.value.setZero();
  }
  NamedParameters& operator+=(const NamedParameters& o) {
    for (std::size_t i = 0; i < entries_.size(); ++i) entries_[i].value += o.entries_[i].value;
    return *this;
  }
  NamedParameters& operator*=(Scalar s) {
    for (auto& e : entries_) e.value *= s;
    return *this;
  }

 private:
  std::vector<Entry> entries_;
};

// A family's parameter struct lists its fields once, as
//   template <class Self, class F> static void visit_parameters(Self& p, F&& f)
// calling f(spec, field) for each (field: an Eigen matrix or vector, or a scalar). These two
// helpers turn that list into NamedParameters and back.
namespace detail {
template <class Scalar, class Field>
Matrix<Scalar> parameter_as_matrix(const Field& field) {
  if constexpr (std::is_arithmetic_v<Field>) {
    Matrix<Scalar> m(1, 1);
    m(0, 0) = field;
    return m;
  } else {
    return field;
  }
}
// A field's shape, all zero.
template <class Scalar, class Field>
Matrix<Scalar> zeros_shaped_as(const Field& field) {
  if constexpr (std::is_arithmetic_v<Field>)
    return Matrix<Scalar>::Zero(1, 1);
  else
    return Matrix<Scalar>::Zero(field.rows(), field.cols());
}
// Every field's spec (its rank set from the field) and value(field), in the family's order.
template <class Scalar, class Params, class Value>
NamedParameters<Scalar> collect_named(const Params& p, Value value) {
  NamedParameters<Scalar> out;
  Params::visit_parameters(p, [&](ParameterSpec spec, const auto& field) {
    using Field = std::decay_t<decltype(field)>;
    if constexpr (std::is_arithmetic_v<Field>)
      spec.rank = Rank::kScalar;
    else
      spec.rank = Field::ColsAtCompileTime == 1 ? Rank::kVector : Rank::kMatrix;
    out.add(spec, value(field));
  });
  return out;
}
template <class Scalar, class Field>
void parameter_from_matrix(Field& field, const Matrix<Scalar>& m, const std::string& name,
                           const std::string& where) {
  Index rows = 1, cols = 1;
  if constexpr (!std::is_arithmetic_v<Field>) {
    rows = field.rows();
    cols = field.cols();
  }
  if (m.rows() != rows || m.cols() != cols) {
    std::ostringstream os;
    os << where << ": " << name << " has shape " << m.rows() << "x" << m.cols() << ", expected "
       << rows << "x" << cols;
    throw std::invalid_argument(os.str());
  }
  if constexpr (std::is_arithmetic_v<Field>)
    field = m(0, 0);
  else
    field = m;
}
}  // namespace detail

template <class Scalar, class Params>
NamedParameters<Scalar> collect_parameters(const Params& p) {
  return detail::collect_named<Scalar>(
      p, [](const auto& field) { return detail::parameter_as_matrix<Scalar>(field); });
}

// The same names and shapes, all zero (a gradient's), without copying the values first: every
// sample's backward pass makes one per layer.
template <class Scalar, class Params>
NamedParameters<Scalar> collect_parameter_zeros(const Params& p) {
  return detail::collect_named<Scalar>(
      p, [](const auto& field) { return detail::zeros_shaped_as<Scalar>(field); });
}

// Writes every named value into `p` (shapes must match; a missing name is an error).
template <class Scalar, class Params>
void assign_parameters(Params& p, const NamedParameters<Scalar>& values, const std::string& where) {
  Params::visit_parameters(p, [&](const ParameterSpec& spec, auto& field) {
    detail::parameter_from_matrix(field, values.at(spec.name, where), spec.name, where);
  });
}

}  // namespace egret
