// Small helpers shared by the family mappings (io/nir/*_nir.cpp): arrays to and from Eigen, the
// JSON of a layer's parameters, and a layer's place in the graph while exporting.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/nir/nir_graph.hpp"

namespace egret::nir {

inline Array vector_array(const Eigen::VectorXd& v) {
  return {{static_cast<std::size_t>(v.size())}, std::vector<double>(v.data(), v.data() + v.size())};
}

inline Array matrix_array(const Eigen::MatrixXd& m) {
  Array a{{static_cast<std::size_t>(m.rows()), static_cast<std::size_t>(m.cols())}, {}};
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) a.values.push_back(m(i, j));
  return a;
}

inline Array constant_array(Eigen::Index n, double value) {
  return {{static_cast<std::size_t>(n)}, std::vector<double>(static_cast<std::size_t>(n), value)};
}

// The values of a per-unit array, flat.
inline Eigen::VectorXd vector_of(const Array& a) {
  return Eigen::Map<const Eigen::VectorXd>(a.values.data(), static_cast<Eigen::Index>(a.size()));
}

inline nlohmann::json json_of_vector(const Eigen::VectorXd& v) {
  return std::vector<double>(v.data(), v.data() + v.size());
}

inline nlohmann::json json_of_matrix(const Eigen::MatrixXd& m) {
  nlohmann::json rows = nlohmann::json::array();
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    const Eigen::VectorXd row = m.row(i).transpose();
    rows.push_back(json_of_vector(row));
  }
  return rows;
}

// Whether every entry is +0.0 (then a weight node may be left out: an absent edge gives +0.0).
inline bool all_positive_zero(const Eigen::MatrixXd& m) {
  for (Eigen::Index i = 0; i < m.size(); ++i)
    if (m.data()[i] != 0 || std::signbit(m.data()[i])) return false;
  return true;
}

inline Node typed_node(const std::string& type) {
  Node n;
  n.type = type;
  return n;
}

// An Input or Output node's shape.
inline Node shape_node(const std::string& type, Eigen::Index size) {
  Node n;
  n.type = type;
  n.data["shape"] = {{1}, {static_cast<double>(size)}};
  return n;
}

inline std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

// A number egret wrote into a node's metadata (key), checked: finite, the whole text.
inline double metadata_number(const Node& node, const std::string& key) {
  const std::string& text = node.metadata.at(key);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    throw std::invalid_argument(node.path + ": metadata " + key + " = '" + text +
                                "' is not a finite number");
  return v;
}

// Where an exported layer sits: the graph, the node it receives from and its size, the prefix
// of its node names.
struct LayerPlace {
  Graph& graph;
  std::string source;
  Eigen::Index source_size = 0;
  std::string prefix;  // "layer0"
};

}  // namespace egret::nir
