#include "io/nir/nir_node_types.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace egret::nir {
// Named, not anonymous: egret_io is a unity build.
namespace node_type_checks {

[[noreturn]] void fail(const Node& node, const std::string& what) {
  throw std::invalid_argument(node.path + " (" + node.type + "): " + what);
}

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

double default_of(const std::string& name) {
  return name == "w_in" ? 1.0 : 0.0;  // NIR: w_in = 1, v_reset = 0
}

void check_finite(const Node& node) {
  for (const auto& [name, a] : node.data)
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!std::isfinite(a.values[i]))
        fail(node, "'" + name + "' holds " + std::to_string(a.values[i]) + " at index " +
                       std::to_string(i) + " (NaN and infinity are not parameter values)");
}

void check_per_unit(Node& node, const NodeType& type) {
  const std::vector<std::size_t> shape = node.at(type.required.front()).shape;
  for (const auto& name : type.required)
    if (node.at(name).shape != shape)
      fail(node, "'" + name + "' has shape " + shape_text(node.at(name).shape) + ", '" +
                     type.required.front() + "' " + shape_text(shape) +
                     " (every parameter has one value per unit)");
  std::size_t units = 1;
  for (std::size_t d : shape) units *= d;
  for (const auto& name : type.optional) {
    auto it = node.data.find(name);
    if (it == node.data.end()) {
      node.data[name] = Array{shape, std::vector<double>(units, default_of(name))};
    } else if (it->second.size() == 1 && it->second.shape != shape) {
      it->second = Array{shape, std::vector<double>(units, it->second.values[0])};
    } else if (it->second.shape != shape) {
      fail(node, "'" + name + "' has shape " + shape_text(it->second.shape) + ", the other " +
                     "parameters " + shape_text(shape));
    }
  }
}

void check_weights(const Node& node) {
  const Array& w = node.at("weight");
  if (w.shape.size() != 2)
    fail(node, "'weight' has shape " + shape_text(w.shape) +
                   "; egret reads 2-D weights (outputs x inputs)");
  if (node.has("bias") && node.at("bias").shape != std::vector<std::size_t>{w.shape[0]})
    fail(node, "'bias' has shape " + shape_text(node.at("bias").shape) + ", expected [" +
                   std::to_string(w.shape[0]) + "] (one per row of 'weight' " +
                   shape_text(w.shape) + ")");
}

void check_integers(const Node& node, const std::string& name, double minimum) {
  for (double v : node.at(name).values)
    if (v != std::floor(v) || v < minimum)
      fail(node, "'" + name + "' holds " + std::to_string(v) +
                     ", expected integers >= " + std::to_string(static_cast<long long>(minimum)));
}

void check_shape_list(const Node& node, const std::string& name) {
  if (node.at(name).shape.size() != 1) fail(node, "'" + name + "' is not a 1-D list of sizes");
  check_integers(node, name, 1);
  double product = 1;
  for (double v : node.at(name).values) product *= v;
  if (product > 1e9) fail(node, "'" + name + "' claims more than 1e9 elements");
}

void check_flatten(const Node& node) {
  for (const char* name : {"start_dim", "end_dim"}) {
    if (node.at(name).size() != 1) fail(node, std::string("'") + name + "' is not one integer");
    check_integers(node, name, -64);
  }
  if (node.has("input_type")) check_shape_list(node, "input_type");
}

}  // namespace node_type_checks

const std::vector<NodeType>& node_types() {
  static const std::vector<NodeType> types = {
      {"Input", {"shape"}, {}, ShapeRule::kShape},
      {"Output", {"shape"}, {}, ShapeRule::kShape},
      {"Affine", {"weight", "bias"}, {}, ShapeRule::kWeights},
      {"Linear", {"weight"}, {}, ShapeRule::kWeights},
      {"Scale", {"scale"}, {}, ShapeRule::kPerUnit},
      {"Threshold", {"threshold"}, {}, ShapeRule::kPerUnit},
      {"Delay", {"delay"}, {}, ShapeRule::kPerUnit},
      {"Flatten", {"start_dim", "end_dim"}, {"input_type"}, ShapeRule::kFlatten},
      {"LIF", {"tau", "r", "v_leak", "v_threshold"}, {"v_reset"}, ShapeRule::kPerUnit},
      {"CubaLIF",
       {"tau_syn", "tau_mem", "r", "v_leak", "v_threshold"},
       {"v_reset", "w_in"},
       ShapeRule::kPerUnit},
      {"LI", {"tau", "r", "v_leak"}, {}, ShapeRule::kPerUnit},
      {"CubaLI", {"tau_syn", "tau_mem", "r", "v_leak"}, {"w_in"}, ShapeRule::kPerUnit},
      {"IF", {"r", "v_threshold"}, {"v_reset"}, ShapeRule::kPerUnit},
      {"I", {"r"}, {}, ShapeRule::kPerUnit},
      {"Conv1d",
       {"weight"},
       {"input_shape", "stride", "padding", "dilation", "groups", "bias"},
       ShapeRule::kAny},
      {"Conv2d",
       {"weight"},
       {"input_shape", "stride", "padding", "dilation", "groups", "bias"},
       ShapeRule::kAny},
      {"SumPool2d", {"kernel_size", "stride", "padding"}, {}, ShapeRule::kAny},
      {"AvgPool2d", {"kernel_size", "stride", "padding"}, {}, ShapeRule::kAny},
      {"NIRGraph", {}, {}, ShapeRule::kAny},
  };
  return types;
}

const NodeType* find_node_type(const std::string& type) {
  for (const auto& t : node_types())
    if (t.name == type) return &t;
  return nullptr;
}

std::string node_type_names() {
  std::string s;
  for (const auto& t : node_types()) s += (s.empty() ? "" : ", ") + t.name;
  return s;
}

void check_node(Node& node) {
  const NodeType* type = find_node_type(node.type);
  if (!type) return;  // an extension or unknown type: the importer names it
  for (const auto& name : type->required)
    if (!node.has(name))
      node_type_checks::fail(
          node, "missing dataset '" + name + "' (a " + node.type + " node needs " + [&] {
            std::string s;
            for (const auto& r : type->required) s += (s.empty() ? "" : ", ") + r;
            return s;
          }() + ")");
  if (type->shapes != ShapeRule::kAny) {
    for (const auto& [name, a] : node.data)
      if (!node_type_checks::listed(type->required, name) &&
          !node_type_checks::listed(type->optional, name))
        node_type_checks::fail(
            node, "unexpected dataset '" + name + "' (NIR's " + node.type + " has no such field)");
    if (!node.text.empty())
      node_type_checks::fail(node, "'" + node.text.begin()->first + "' is text, expected numbers");
  }
  node_type_checks::check_finite(node);
  switch (type->shapes) {
    case ShapeRule::kPerUnit:
      node_type_checks::check_per_unit(node, *type);
      break;
    case ShapeRule::kWeights:
      node_type_checks::check_weights(node);
      break;
    case ShapeRule::kShape:
      node_type_checks::check_shape_list(node, "shape");
      break;
    case ShapeRule::kFlatten:
      node_type_checks::check_flatten(node);
      break;
    case ShapeRule::kAny:
      break;
  }
}

std::size_t unit_count(const Node& node) {
  const NodeType* type = find_node_type(node.type);
  if (!type || type->shapes != ShapeRule::kPerUnit)
    throw std::logic_error("unit_count: " + node.type + " is not a per-unit node");
  return node.at(type->required.front()).size();
}

}  // namespace egret::nir
