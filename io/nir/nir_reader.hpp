// Reading a .nir file: NIR's HDF5 layout (nir/serialization.py, `nir.write`): a string dataset
// "version" and a group "node" holding the graph. Every node is a group with a string dataset
// "type" (an attribute "type" is accepted too), its parameters as numeric datasets, and
// optionally a "metadata" group; a NIRGraph node has a group "nodes" (one group per node) and a
// string dataset "edges" (E x 2: source, target). Nested graphs are read as they are
// (io/nir/nir_flatten.hpp resolves them).
//
// The file is untrusted: it is read once in a validating child (io/hdf5/hdf5.hpp), sizes are
// checked against the file before anything is allocated, every node is checked against its
// type (io/nir/nir_node_types.hpp), every edge must name nodes of its graph, and the nesting,
// node count, name length and string length are bounded. Errors name the file, the HDF5 path
// and the problem.
#pragma once

#include <string>

#include "io/nir/nir_graph.hpp"

namespace egret::nir {

inline constexpr std::size_t kMaxNodes = 4096;       // in all graphs together
inline constexpr std::size_t kMaxEdges = 65536;      // per graph
inline constexpr int kMaxNesting = 16;               // graphs inside graphs
inline constexpr std::size_t kMaxNameLength = 1024;  // node names and strings

File read_nir_file(const std::string& path);

}  // namespace egret::nir
