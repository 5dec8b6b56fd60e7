#include "io/nir/nir_flatten.hpp"

#include <set>
#include <stdexcept>

#include "io/nir/nir_reader.hpp"

namespace egret::nir {
// Named, not anonymous: egret_io is a unity build.
namespace nir_flattening {

constexpr const char* kPassThrough = "egret.pass_through";  // internal only, never written

std::vector<std::string> nodes_of_type(const Graph& g, const std::string& type) {
  std::vector<std::string> names;
  for (const auto& [name, node] : g.nodes)
    if (node.type == type) names.push_back(name);
  return names;
}

// The nested graph `inner` (the node `name` of its parent) as nodes "name.*" of `out`, with its
// Input and Output nodes passing through.
void inline_graph(const std::string& name, const Node& node, Graph& out) {
  const Graph inner = flattened(*node.graph);
  for (const auto& [n, child] : inner.nodes) {
    Node copy = child;
    if (copy.type == "Input" || copy.type == "Output") copy.type = kPassThrough;
    const std::string full = name + "." + n;
    if (out.find(full))
      throw std::invalid_argument(node.path + ": the nested node '" + n + "' becomes '" + full +
                                  "', which the outer graph already has");
    out.nodes.emplace_back(full, std::move(copy));
  }
  for (const Edge& e : inner.edges) out.connect(name + "." + e.from, name + "." + e.to);
}

// Edges into a nested graph go to its Input nodes, edges out of it leave from its Outputs.
std::vector<std::string> ends_of(const Graph& original, const std::string& name, bool into) {
  const Node* node = original.find(name);
  if (!node || !node->graph) return {name};
  std::vector<std::string> ends;
  for (const auto& n : nodes_of_type(*node->graph, into ? "Input" : "Output"))
    ends.push_back(name + "." + n);
  if (ends.empty())
    throw std::invalid_argument(node->path + ": a nested graph without " +
                                (into ? "an Input" : "an Output") + " node has an edge " +
                                (into ? "into" : "out of") + " it");
  return ends;
}

// Removes the pass-through nodes (nested Input / Output, Flatten), joining their edges.
Graph without_pass_through(Graph g) {
  for (;;) {
    std::string name;
    for (const auto& [n, node] : g.nodes)
      if (node.type == kPassThrough || node.type == "Flatten") name = n;
    if (name.empty()) return g;
    std::vector<std::string> sources, targets;
    std::vector<Edge> kept;
    for (const Edge& e : g.edges) {
      if (e.to == name && e.from == name)
        throw std::invalid_argument(g.find(name)->path + ": an edge from the node to itself");
      if (e.to == name)
        sources.push_back(e.from);
      else if (e.from == name)
        targets.push_back(e.to);
      else
        kept.push_back(e);
    }
    if (sources.size() * targets.size() > kMaxEdges)
      throw std::invalid_argument(g.find(name)->path +
                                  ": joining the edges through it makes more " + "than " +
                                  std::to_string(kMaxEdges) + " edges");
    for (const auto& s : sources)
      for (const auto& t : targets) kept.push_back({s, t});
    if (kept.size() > kMaxEdges)
      throw std::invalid_argument(g.path + ": more than " + std::to_string(kMaxEdges) +
                                  " edges after joining the pass-through nodes");
    g.edges = std::move(kept);
    for (auto it = g.nodes.begin(); it != g.nodes.end(); ++it)
      if (it->first == name) {
        g.nodes.erase(it);
        break;
      }
  }
}

}  // namespace nir_flattening

Graph flattened(const Graph& graph) {
  Graph out;
  out.path = graph.path;
  out.metadata = graph.metadata;
  for (const auto& [name, node] : graph.nodes) {
    if (node.graph)
      nir_flattening::inline_graph(name, node, out);
    else if (out.find(name))
      throw std::invalid_argument(node.path + ": the node name '" + name +
                                  "' is also a nested graph's node");
    else
      out.nodes.emplace_back(name, node);
  }
  for (const Edge& e : graph.edges)
    for (const auto& from : nir_flattening::ends_of(graph, e.from, false))
      for (const auto& to : nir_flattening::ends_of(graph, e.to, true)) out.connect(from, to);
  return nir_flattening::without_pass_through(std::move(out));
}

}  // namespace egret::nir
