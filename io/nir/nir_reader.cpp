#include "io/nir/nir_reader.hpp"

#include <cstdio>
#include <stdexcept>

#include "io/hdf5/hdf5.hpp"
#include "io/nir/nir_node_types.hpp"

namespace egret::nir {
// Named, not anonymous: egret_io is a unity build.
namespace nir_reading {

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::invalid_argument(where + ": " + what);
}

struct Reader {
  std::string file;
  std::size_t nodes_read = 0;

  std::string at(const std::string& path) const { return file + ":" + path; }

  bool is_string_dataset(hid_t group, const std::string& name, const std::string& where) {
    h5::QuietErrors quiet;
    h5::Id dset(H5Dopen2(group, name.c_str(), H5P_DEFAULT));
    if (!dset.valid()) fail(where, "cannot open dataset '" + name + "'");
    h5::Id type(H5Dget_type(dset.get()));
    if (!type.valid()) fail(where + "/" + name, "no datatype");
    return H5Tget_class(type.get()) == H5T_STRING;
  }

  std::string read_scalar_string(hid_t group, const std::string& name, const std::string& where) {
    const h5::StringArray s = h5::read_string_array(group, name, where, kMaxNameLength);
    if (s.values.size() != 1) fail(where + "/" + name, "expected one string");
    return s.values[0];
  }

  std::string read_type(hid_t group, const std::string& path) {
    const std::string where = at(path);
    if (h5::exists(group, "type")) {
      if (h5::object_type(group, "type", where + "/type") != H5O_TYPE_DATASET)
        fail(where + "/type", "not a dataset");
      return read_scalar_string(group, "type", where);
    }
    if (h5::has_attribute(group, "type")) return h5::read_string_attribute(group, "type", where);
    fail(where, "missing 'type' (every NIR node names its type)");
  }

  // egret's own metadata (egret_*): scalar strings or numbers; NIR says no backend may rely on
  // anyone else's, so the rest is not read.
  std::map<std::string, std::string> read_metadata(hid_t parent, const std::string& path) {
    std::map<std::string, std::string> out;
    const std::string where = at(path + "/metadata");
    if (h5::object_type(parent, "metadata", where) != H5O_TYPE_GROUP) fail(where, "not a group");
    h5::Id g = h5::open_group(parent, "metadata", file);
    for (const auto& name : h5::group_members(g.get(), where, 4096)) {
      if (name.rfind("egret_", 0) != 0) continue;
      if (h5::object_type(g.get(), name, where + "/" + name) != H5O_TYPE_DATASET)
        fail(where + "/" + name, "not a dataset");
      if (is_string_dataset(g.get(), name, where)) {
        out[name] = read_scalar_string(g.get(), name, where);
      } else {
        const h5::NumericArray a = h5::read_numeric_array(g.get(), name, where);
        if (a.values.size() != 1) fail(where + "/" + name, "expected one value");
        char text[32];
        std::snprintf(text, sizeof text, "%.17g", a.values[0]);
        out[name] = text;
      }
    }
    return out;
  }

  Array read_array(hid_t group, const std::string& name, const std::string& where) {
    h5::NumericArray a = h5::read_numeric_array(group, name, where);
    Array out;
    for (hsize_t d : a.dims) out.shape.push_back(static_cast<std::size_t>(d));
    out.values = std::move(a.values);
    return out;
  }

  Node read_node(hid_t group, const std::string& path, int depth) {
    if (++nodes_read > kMaxNodes)
      fail(at(path), "more than " + std::to_string(kMaxNodes) + " nodes in the file");
    Node node;
    node.path = at(path);
    node.type = read_type(group, path);
    if (node.type == "NIRGraph") {
      node.graph = std::make_shared<Graph>(read_graph(group, path, depth));
      return node;
    }
    const std::string where = at(path);
    for (const auto& name : h5::group_members(group, where, 4096)) {
      if (name == "type") continue;
      if (name == "metadata") {
        node.metadata = read_metadata(group, path);
        continue;
      }
      if (h5::object_type(group, name, where + "/" + name) != H5O_TYPE_DATASET)
        fail(where + "/" + name, "a group inside a " + node.type + " node (expected datasets)");
      if (is_string_dataset(group, name, where))
        node.text[name] = read_scalar_string(group, name, where);
      else
        node.data[name] = read_array(group, name, where);
    }
    check_node(node);
    return node;
  }

  Graph read_graph(hid_t group, const std::string& path, int depth) {
    const std::string where = at(path);
    if (depth >= kMaxNesting)
      fail(where, "graphs nested more than " + std::to_string(kMaxNesting) + " deep");
    Graph g;
    g.path = path;
    for (const auto& name : h5::group_members(group, where, 8)) {
      if (name != "type" && name != "nodes" && name != "edges" && name != "metadata")
        fail(where + "/" + name,
             "unexpected in a NIRGraph (it holds type, nodes, edges, metadata)");
    }
    if (!h5::exists(group, "nodes")) fail(where, "missing group 'nodes'");
    if (h5::object_type(group, "nodes", where + "/nodes") != H5O_TYPE_GROUP)
      fail(where + "/nodes", "not a group");
    h5::Id nodes = h5::open_group(group, "nodes", file);
    for (const auto& name : h5::group_members(nodes.get(), where + "/nodes", kMaxNodes)) {
      const std::string child = path + "/nodes/" + name;
      if (h5::object_type(nodes.get(), name, at(child)) != H5O_TYPE_GROUP)
        fail(at(child), "not a group (every node is a group)");
      h5::Id node_group = h5::open_group(nodes.get(), name, file);
      g.nodes.emplace_back(name, read_node(node_group.get(), child, depth + 1));
    }
    if (h5::exists(group, "edges")) read_edges(group, g);
    if (h5::exists(group, "metadata")) g.metadata = read_metadata(group, path);
    return g;
  }

  void read_edges(hid_t group, Graph& g) {
    const std::string where = at(g.path) + "/edges";
    const h5::StringArray e = h5::read_string_array(group, "edges", at(g.path), kMaxNameLength);
    const bool empty = !e.dims.empty() && e.dims[0] == 0;
    if (!empty && (e.dims.size() != 2 || e.dims[1] != 2))
      fail(where, "expected an E x 2 table of node names (source, target)");
    if (e.values.size() / 2 > kMaxEdges)
      fail(where, "more than " + std::to_string(kMaxEdges) + " edges");
    for (std::size_t i = 0; i + 1 < e.values.size(); i += 2) {
      Edge edge{e.values[i], e.values[i + 1]};
      for (const std::string& name : {edge.from, edge.to})
        if (!g.find(name))
          fail(where + "[" + std::to_string(i / 2) + "]",
               "the edge (" + edge.from + ", " + edge.to + ") names node '" + name +
                   "', which this graph does not have (its nodes: " + node_names(g) + ")");
      g.edges.push_back(edge);
    }
  }

  static std::string node_names(const Graph& g) {
    std::string s;
    for (const auto& [name, n] : g.nodes) s += (s.empty() ? "" : ", ") + name;
    return s.empty() ? "none" : s;
  }

  File read() {
    h5::QuietErrors quiet;
    h5::Id f = h5::open_file_read(file);
    File out;
    if (!h5::exists(f.get(), "node"))
      fail(file, "no group 'node' at the root: not a NIR graph file");
    if (h5::object_type(f.get(), "node", at("/node")) != H5O_TYPE_GROUP)
      fail(at("/node"), "not a group");
    if (h5::exists(f.get(), "version")) out.version = read_scalar_string(f.get(), "version", file);
    h5::Id node = h5::open_group(f.get(), "node", file);
    Node root = read_node(node.get(), "/node", 0);
    if (root.type != "NIRGraph")
      fail(at("/node"), "the root node is a " + root.type + ", expected a NIRGraph");
    out.graph = std::move(*root.graph);
    return out;
  }
};

}  // namespace nir_reading

File read_nir_file(const std::string& path) {
  return h5::read_untrusted(path, [&] { return nir_reading::Reader{path}.read(); });
}

}  // namespace egret::nir
