// What every family's parameters share: the physical floors, the checks of shapes, positive
// values and time scales (each error names the layer and the parameter), and a seeded uniform
// generator that gives the same numbers on every platform.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sim/numeric_types.hpp"
#include "sim/value_range.hpp"

namespace egret {

// Physical floors (docs/model.md): time constants, windows and dt [ms] below a microsecond, or
// thresholds below 1e-6, give event rates with no useful bound, so they are refused.
inline constexpr double kMinTimeScaleMs = 1e-3;
inline constexpr double kMinThreshold = 1e-6;

namespace detail {
template <class Derived>
void check_shape(const Eigen::MatrixBase<Derived>& m, Index rows, Index cols,
                 const std::string& layer, const char* name) {
  if (m.rows() != rows || m.cols() != cols) {
    std::ostringstream os;
    os << layer << ": " << name << " has shape " << m.rows() << "x" << m.cols() << ", expected "
       << rows << "x" << cols;
    throw std::invalid_argument(os.str());
  }
  if (!m.allFinite()) {
    throw std::invalid_argument(layer + ": " + name + " contains NaN or infinite entries");
  }
}
// A value inside `range`, in the wording of the configuration keys' check (sim/value_range.hpp).
template <class Scalar>
void check_in_range(Scalar v, const ValueRange& range, const std::string& layer, const char* name,
                    const char* what = "") {
  if (!range.contains(static_cast<double>(v)))
    throw std::invalid_argument(
        outside_range(layer + ": " + name, static_cast<double>(v), range, what));
}
template <class Scalar>
void check_positive(Scalar v, const std::string& layer, const char* name, bool allow_inf) {
  const double inf = std::numeric_limits<double>::infinity();
  check_in_range(v, ValueRange{0, inf, true, allow_inf}, layer, name);
}
// A time scale [ms] (tau_m, tau_o, a window, dt): at least kMinTimeScaleMs.
template <class Scalar>
void check_time_scale(Scalar v, const std::string& layer, const char* name, bool allow_inf) {
  const double inf = std::numeric_limits<double>::infinity();
  check_in_range(v, ValueRange{kMinTimeScaleMs, inf, false, allow_inf}, layer, name,
                 "a time scale [ms]");
}
// Firing thresholds, one per unit: each at least kMinThreshold, a bad one named by its index.
template <class Derived>
void check_thresholds(const Eigen::MatrixBase<Derived>& theta, const std::string& layer,
                      const char* name) {
  const ValueRange range{kMinThreshold, std::numeric_limits<double>::infinity()};
  for (Index i = 0; i < theta.size(); ++i) {
    const std::string entry = std::string(name) + "[" + std::to_string(i) + "]";
    check_in_range(theta(i), range, layer, entry.c_str(), "a threshold");
  }
}
// Time scales one per unit (tau_m, tau_o, tau_mem, ...): N x 1, each entry a time scale, a bad
// one named by its index ("tau_m[3]").
template <class Derived>
void check_time_scales(const Eigen::MatrixBase<Derived>& v, Index units, const std::string& layer,
                       const char* name) {
  if (v.rows() != units || v.cols() != 1) {
    std::ostringstream os;
    os << layer << ": " << name << " has shape " << v.rows() << "x" << v.cols() << ", expected "
       << units << "x1 (one per unit)";
    throw std::invalid_argument(os.str());
  }
  for (Index i = 0; i < units; ++i) {
    const std::string entry = std::string(name) + "[" + std::to_string(i) + "]";
    check_time_scale(v(i), layer, entry.c_str(), false);
  }
}
}  // namespace detail

// U(lo, hi) from std::mt19937_64 with egret's own mapping (std distributions are not portable):
// a seed gives the same weights on every platform and in both precisions.
template <class Scalar>
class SeededUniform {
 public:
  explicit SeededUniform(std::uint64_t seed) : rng_(seed) {}
  Scalar operator()(Scalar lo, Scalar hi) {
    const double u01 = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    return lo + static_cast<Scalar>(u01) * (hi - lo);
  }
  // Every entry of m from U(-scale, scale), column by column.
  template <class M>
  void fill(M& m, Scalar scale) {
    for (Index j = 0; j < m.cols(); ++j)
      for (Index i = 0; i < m.rows(); ++i) m(i, j) = (*this)(-scale, scale);
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace egret
