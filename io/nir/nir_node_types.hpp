// What each NIR node type holds (NIR's nir/ir/*.py and nir/serialization.py at v1.0.7): its
// datasets, required and optional, and how their shapes agree. The reader checks every node
// against this table (io/nir/nir_reader.cpp); the importer decides which types egret runs
// (io/nir/nir_import.cpp).
#pragma once

#include <string>
#include <vector>

#include "io/nir/nir_graph.hpp"

namespace egret::nir {

enum class ShapeRule {
  kPerUnit,  // every dataset has one shape (a scalar optional one is broadcast to it)
  kWeights,  // "weight" 2-D (outputs x inputs); Affine's "bias" one per output
  kShape,    // "shape": a 1-D list of positive integers (Input, Output)
  kFlatten,  // start_dim, end_dim: integer scalars; input_type: a shape
  kAny,      // not checked (types egret reads but never runs: convolution, pooling)
};

struct NodeType {
  std::string name;
  std::vector<std::string> required;
  std::vector<std::string> optional;  // with their defaults below
  ShapeRule shapes;
};

// Every NIR node type, NIRGraph included (its "nodes" and "edges" are the reader's).
const std::vector<NodeType>& node_types();
const NodeType* find_node_type(const std::string& type);
// The names of all types, for messages.
std::string node_type_names();

// Checks `node` against its type: required datasets present, no dataset the type does not
// have, shapes as the rule says, every value finite; fills NIR's defaults of missing optional
// ones (v_reset = 0, w_in = 1) and broadcasts scalar optional ones. Errors name node.path.
void check_node(Node& node);

// The number of units of a per-unit node (the product of its parameters' shape), or of a
// Scale / Threshold / Delay node.
std::size_t unit_count(const Node& node);

}  // namespace egret::nir
