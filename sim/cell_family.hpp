// What a cell family registers, once (models/cell_families.hpp lists them): its type name, its
// configuration keys with their defaults and bounds, and a factory. Configuration parsing,
// build_network, checkpoints and the Python module walk this description and the layers'
// named parameters (sim/parameters.hpp); none of them names a family.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/layer.hpp"

namespace egret {

// One configuration key of a layer. A key inside an object of the layer's configuration is
// named "object.key" (e.g. "init.bias_z" for {"init": {"bias_z": 0.8}}).
struct SettingKey {
  std::string name;
  double default_value = 0;
  double minimum = -std::numeric_limits<double>::infinity();  // inclusive
  double maximum = std::numeric_limits<double>::infinity();   // inclusive
  bool allow_infinity = false;                                // "inf" accepted (above maximum)
  std::string doc;                                            // meaning and unit, one line
  // A physical floor: a positive value below it is refused (time scales far below any physical
  // one give event rates with no useful bound). Values <= 0 are left to the family's validation.
  double floor = 0;
  // A yes/no setting: written true or false in the configuration, held as 1 or 0.
  bool boolean = false;
  // The value a configuration saved before the key existed implies (checkpoint format 2 and
  // older; io/hdf5/checkpoint.cpp): the behaviour it was trained with. NaN: the default.
  double legacy_value = std::numeric_limits<double>::quiet_NaN();
  // A named choice: written as one of these strings, held as its index.
  std::vector<std::string> choices = {};
};

// A layer's settings: every key of its family, with the configured value or the default.
class LayerSettings {
 public:
  void set(const std::string& key, double v) { values_[key] = v; }
  double get(const std::string& key) const {
    const auto it = values_.find(key);
    if (it == values_.end())
      throw std::logic_error("layer settings: no key '" + key + "' (not registered)");
    return it->second;
  }
  template <class Scalar>
  Scalar as(const std::string& key) const {
    return static_cast<Scalar>(get(key));
  }
  bool flag(const std::string& key) const { return get(key) != 0; }
  std::size_t choice(const std::string& key) const { return static_cast<std::size_t>(get(key)); }

 private:
  std::map<std::string, double> values_;
};

// Everything a factory needs to build one layer.
struct LayerRecipe {
  std::string name;  // "layer 0 (<type>)", for messages
  Index units = 0;
  Index inputs = 0;
  std::uint64_t seed = 1;  // of the random initialisation
  LayerSettings settings;
};

template <class Scalar>
using LayerFactory = std::unique_ptr<Layer<Scalar>> (*)(const LayerRecipe&);

struct CellFamily {
  std::string type;  // the configuration's "type"
  std::string summary;
  std::vector<SettingKey> keys;
  LayerFactory<double> make_double = nullptr;
  LayerFactory<float> make_float = nullptr;

  template <class Scalar>
  std::unique_ptr<Layer<Scalar>> make(const LayerRecipe& r) const {
    if constexpr (std::is_same_v<Scalar, double>)
      return make_double(r);
    else
      return make_float(r);
  }
  const SettingKey* key(const std::string& name) const {
    for (const auto& k : keys)
      if (k.name == name) return &k;
    return nullptr;
  }
  std::string key_names() const {
    std::string s;
    for (const auto& k : keys) s += (s.empty() ? "" : ", ") + k.name;
    return s;
  }
  // The settings with every default, then `given` checked against the bounds and applied.
  LayerSettings settings(const std::map<std::string, double>& given,
                         const std::string& where) const {
    LayerSettings s;
    for (const auto& k : keys) s.set(k.name, k.default_value);
    for (const auto& [name, v] : given) {
      const SettingKey* k = key(name);
      if (!k)
        throw std::invalid_argument(where + ": unknown key '" + name + "' for a " + type +
                                    " layer (known: units, params, " + key_names() + ")");
      check(*k, v, where);
      s.set(name, v);
    }
    return s;
  }

 private:
  static void check(const SettingKey& k, double v, const std::string& where) {
    if (v > 0 && v < k.floor) {
      const char* unit = k.doc.find("[ms]") != std::string::npos ? " ms" : "";
      std::ostringstream os;
      os << where << "." << k.name << ": " << v << unit << " is below the documented minimum "
         << k.floor << unit << " (the event rate would have no useful bound)";
      throw std::invalid_argument(os.str());
    }
    if (std::isnan(v) || (std::isinf(v) && !(k.allow_infinity && v > 0)) ||
        (std::isfinite(v) && (v < k.minimum || v > k.maximum))) {
      std::ostringstream os;
      os << where << "." << k.name << ": " << v << " is outside [" << k.minimum << ", " << k.maximum
         << "]" << (k.allow_infinity ? " (or inf)" : "") << " (" << k.doc << ")";
      throw std::invalid_argument(os.str());
    }
  }
};

// An explicit value for one named parameter: a number (fills it), a list (a vector), or a list
// of rows (a matrix). Shapes are checked against the parameter when applied.
struct ParameterValue {
  std::string name;
  std::vector<std::vector<double>> rows;  // a number is 1x1, a vector is 1 row
  enum class Shape { kScalar, kVector, kMatrix } shape = Shape::kScalar;
};

template <class M>
void apply_parameter_value(M& target, const ParameterValue& o, const std::string& where) {
  using S = typename M::Scalar;
  const Index rows = target.rows(), cols = target.cols();
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument(where + ": " + o.name + ": " + what + " (expected " +
                                std::to_string(rows) + "x" + std::to_string(cols) + ")");
  };
  if (o.shape == ParameterValue::Shape::kScalar) {
    target.setConstant(static_cast<S>(o.rows[0][0]));
  } else if (o.shape == ParameterValue::Shape::kVector) {
    if (cols != 1 || static_cast<Index>(o.rows[0].size()) != rows)
      fail("a list of " + std::to_string(o.rows[0].size()) + " values does not fit");
    for (Index i = 0; i < rows; ++i)
      target(i, 0) = static_cast<S>(o.rows[0][static_cast<std::size_t>(i)]);
  } else {
    if (static_cast<Index>(o.rows.size()) != rows) fail(std::to_string(o.rows.size()) + " rows");
    for (Index i = 0; i < rows; ++i) {
      const auto& r = o.rows[static_cast<std::size_t>(i)];
      if (static_cast<Index>(r.size()) != cols)
        fail("row " + std::to_string(i) + " has " + std::to_string(r.size()) + " values");
      for (Index j = 0; j < cols; ++j)
        target(i, j) = static_cast<S>(r[static_cast<std::size_t>(j)]);
    }
  }
}

// A layer with the given parameter values applied by name (unknown names are errors).
template <class Scalar>
std::unique_ptr<Layer<Scalar>> with_parameter_values(const Layer<Scalar>& layer,
                                                     const std::vector<ParameterValue>& values,
                                                     const std::string& where) {
  NamedParameters<Scalar> p = layer.parameters();
  for (const auto& v : values) apply_parameter_value(p.at(v.name, where), v, where);
  try {
    return layer.with_parameters(p);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + ": " + e.what());
  }
}

}  // namespace egret
