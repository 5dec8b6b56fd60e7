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
#include "sim/numeric_types.hpp"
#include "sim/value_range.hpp"

namespace egret {

// One configuration key of a layer. A key inside an object of the layer's configuration is
// named "object.key" (e.g. "init.bias_z" for {"init": {"bias_z": 0.8}}). Its range is every
// bound a single value of it has (docs/model.md states the same): the configuration is checked
// against it before a layer is built, so the family's own validation never refuses a value the
// range admits, nor in other words.
struct SettingKey {
  std::string name;
  double default_value = 0;
  double minimum = -std::numeric_limits<double>::infinity();  // inclusive unless ...
  double maximum = std::numeric_limits<double>::infinity();   // inclusive
  bool allow_infinity = false;                                // "inf" accepted (above maximum)
  std::string doc;                                            // meaning and unit, one line
  bool minimum_exclusive = false;                             // ... this: (minimum, maximum]
  // A yes/no setting: written true or false in the configuration, held as 1 or 0.
  bool boolean = false;
  // The value a configuration saved before the key existed implies (checkpoint format 2 and
  // older; io/hdf5/checkpoint.cpp): the behaviour it was trained with. NaN: the default.
  double legacy_value = std::numeric_limits<double>::quiet_NaN();
  // A named choice: written as one of these strings, held as its index.
  std::vector<std::string> choices = {};
  bool whole_number = false;  // a count (see whole_number_key)
  bool zero_allowed = false;  // 0 besides the range: a value derived from others (see below)

  ValueRange range() const {
    return {minimum, maximum, minimum_exclusive, allow_infinity, zero_allowed};
  }
};

// A key whose values are counts: a fraction is refused.
inline SettingKey whole_number_key(SettingKey k) {
  k.whole_number = true;
  return k;
}
// A yes/no key: written true or false, held as 1 or 0 (its range is [0, 1]).
inline SettingKey boolean_key(SettingKey k) {
  k.boolean = true;
  return k;
}
// A key where 0 means "derive the value" (its doc says from what), besides its range.
inline SettingKey zero_means_derived(SettingKey k) {
  k.zero_allowed = true;
  return k;
}

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

// How a family's layers appear in NIR (docs/nir.md, the mapping table): the NIR neuron node they
// export as, or what NIR lacks to hold them exactly. The NIR exporter (io/nir) reads this and
// names no family; a family that says nothing is refused as having no mapping.
struct NirDescription {
  enum class Neuron {
    kNone,  // refused: `lacks` says why (export --extension writes an egret extension node)
    kLif,   // LI + Threshold + soft reset (io/nir/lif_nir.cpp)
    kCuba,  // CubaLIF, LIF, IF or, without spikes, CubaLI, LI, I (io/nir/cuba_nir.cpp)
  };
  Neuron neuron = Neuron::kNone;
  // Sends unit spikes: a readout reads them through NIR's LI (the output trace).
  bool spikes = false;
  std::string lacks;  // what NIR lacks to express the family (kNone)
  // A family that maps only for some parameter values: empty when the layer's parameters (by
  // name) do, otherwise what NIR lacks for them.
  std::string (*lacks_for)(const std::map<std::string, Eigen::MatrixXd>& params) = nullptr;
  // With lacks_for: the parameter values that map, in words ("whose gates never close"), for
  // the help text of `egret export-nir`.
  std::string maps_when;
};

struct CellFamily {
  std::string type;  // the configuration's "type"
  std::string summary;
  std::vector<SettingKey> keys;
  LayerFactory<double> make_double = nullptr;
  LayerFactory<float> make_float = nullptr;
  NirDescription nir;

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
    if (!k.range().contains(v))
      throw std::invalid_argument(outside_range(where + "." + k.name, v, k.range(), k.doc));
    if (k.whole_number && v != std::floor(v)) {
      std::ostringstream os;
      os << where << "." << k.name << ": must be a whole number, got " << v << " (" << k.doc << ")";
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
