#include "io/nir/nir_graph.hpp"

#include <stdexcept>

namespace egret::nir {

const Array& Node::at(const std::string& name) const {
  const auto it = data.find(name);
  if (it == data.end()) throw std::invalid_argument(path + ": missing dataset '" + name + "'");
  return it->second;
}

const Node* Graph::find(const std::string& name) const {
  for (const auto& [n, node] : nodes)
    if (n == name) return &node;
  return nullptr;
}

Node& Graph::add(const std::string& name, Node node) {
  if (find(name)) throw std::logic_error("nir graph: node '" + name + "' added twice");
  node.path = path + "/nodes/" + name;
  nodes.emplace_back(name, std::move(node));
  return nodes.back().second;
}

}  // namespace egret::nir
