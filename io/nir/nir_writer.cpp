#include "io/nir/nir_writer.hpp"

#include "io/hdf5/hdf5.hpp"

namespace egret::nir {
// Named, not anonymous: egret_io is a unity build.
namespace nir_writing {

bool is_integer_field(const Node& node, const std::string& name) {
  return ((node.type == "Input" || node.type == "Output") && name == "shape") ||
         node.type == "Flatten";
}

void write_metadata(hid_t parent, const std::map<std::string, std::string>& metadata) {
  if (metadata.empty()) return;
  h5::Id g = h5::create_group(parent, "metadata");
  for (const auto& [name, value] : metadata) h5::write_string(g.get(), name, value);
}

void write_node(hid_t group, const Node& node);

void write_graph(hid_t group, const Graph& graph) {
  h5::write_string(group, "type", "NIRGraph");
  h5::Id nodes = h5::create_group(group, "nodes");
  for (const auto& [name, node] : graph.nodes) {
    h5::Id g = h5::create_group(nodes.get(), name);
    write_node(g.get(), node);
  }
  std::vector<std::string> table;
  for (const Edge& e : graph.edges) {
    table.push_back(e.from);
    table.push_back(e.to);
  }
  h5::write_string_table(group, "edges", {static_cast<hsize_t>(graph.edges.size()), 2}, table);
  write_metadata(group, graph.metadata);
}

void write_node(hid_t group, const Node& node) {
  if (node.graph) {
    write_graph(group, *node.graph);
    return;
  }
  h5::write_string(group, "type", node.type);
  for (const auto& [name, a] : node.data) {
    const std::vector<hsize_t> dims(a.shape.begin(), a.shape.end());
    if (is_integer_field(node, name))
      h5::write_int_array(group, name, dims,
                          std::vector<std::int64_t>(a.values.begin(), a.values.end()));
    else
      h5::write_array(group, name, dims, a.values);
  }
  for (const auto& [name, s] : node.text) h5::write_string(group, name, s);
  write_metadata(group, node.metadata);
}

}  // namespace nir_writing

void write_nir_file(const std::string& path, const Graph& graph) {
  h5::OutputFile out(path);
  h5::write_string(out.get(), "version", kNirVersion);
  h5::Id node = h5::create_group(out.get(), "node");
  nir_writing::write_graph(node.get(), graph);
  out.check();
  node.reset();
  out.commit();
}

}  // namespace egret::nir
