// A NIR graph (the Neuromorphic Intermediate Representation, github.com/neuromorphs/NIR;
// docs/nir.md) as egret holds it between the file and a network: typed nodes with their
// datasets, and edges between node names. The file layout is io/nir/nir_reader.hpp's and
// nir_writer.hpp's; what a node type holds is io/nir/nir_node_types.hpp's.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace egret::nir {

// An n-dimensional array of a node (row-major); an empty shape is a scalar.
struct Array {
  std::vector<std::size_t> shape;
  std::vector<double> values;
  std::size_t size() const { return values.size(); }
};

struct Graph;

struct Node {
  std::string type;                             // "LIF", "Affine", "NIRGraph", ...
  std::map<std::string, Array> data;            // its numeric datasets, by name
  std::map<std::string, std::string> text;      // its string datasets other than "type"
  std::map<std::string, std::string> metadata;  // egret's own metadata entries (egret_*)
  std::shared_ptr<Graph> graph;                 // a NIRGraph's nodes and edges
  std::string path;                             // where it is: "/node/nodes/lif1" (messages)

  const Array& at(const std::string& name) const;  // a dataset the node type requires
  bool has(const std::string& name) const { return data.count(name) > 0; }
};

struct Edge {
  std::string from, to;
};

struct Graph {
  std::vector<std::pair<std::string, Node>> nodes;  // in the file's (name) order
  std::vector<Edge> edges;
  std::map<std::string, std::string> metadata;  // egret's own metadata entries (egret_*)
  std::string path;                             // "/node", "/node/nodes/lif1"

  const Node* find(const std::string& name) const;
  Node& add(const std::string& name, Node node);
  void connect(const std::string& from, const std::string& to) { edges.push_back({from, to}); }
};

// NIR's version egret writes, and the file's own when read.
inline constexpr const char* kNirVersion = "1.0.7";

struct File {
  std::string version;
  Graph graph;
};

}  // namespace egret::nir
