// A NIR graph with its nested graphs resolved, as the importer walks it (io/nir/nir_import.cpp):
// the nodes of a nested graph "g" become "g.<name>", its edges are kept, an edge into "g" goes
// to g's Input nodes and an edge out of "g" leaves from g's Output nodes (the reading of NIR's
// reference implementation and nirtorch). Those inner Input and Output nodes, and Flatten nodes
// (a reshape: egret's channels are the flat, row-major elements), pass their input on: they
// are removed and their edges joined.
#pragma once

#include "io/nir/nir_graph.hpp"

namespace egret::nir {

Graph flattened(const Graph& graph);

}  // namespace egret::nir
