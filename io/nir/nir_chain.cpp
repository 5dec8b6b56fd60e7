#include "io/nir/nir_chain.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include "io/nir/nir_node_types.hpp"

namespace egret::nir {
// Named, not anonymous: egret_io is a unity build.
namespace nir_chains {

const std::set<std::string>& neuron_types() {
  static const std::set<std::string> s = {"LIF", "CubaLIF", "IF", "LI", "CubaLI", "I"};
  return s;
}
const std::set<std::string>& weight_types() {
  static const std::set<std::string> s = {"Affine", "Linear", "Scale", "SumPool2d"};
  return s;
}

bool is_extension(const std::string& type) {
  return type.rfind("egret.", 0) == 0;
}

std::string named(const Graph& g, const std::string& name) {
  const Node* n = g.find(name);
  return "node '" + name + "' (" + (n ? n->type + ", " + n->path : std::string("?")) + ")";
}

[[noreturn]] void refuse(const Graph& g, const std::string& name, const std::string& why) {
  throw std::invalid_argument(named(g, name) + ": " + why);
}

std::string edge_text(const Edge& e) {
  return "(" + e.from + ", " + e.to + ")";
}

// The chain's view of the graph: node types, edges in and out, and the edges explained so far.
struct Walk {
  const Graph& g;
  std::map<std::string, std::vector<std::string>> in, out;
  std::set<std::pair<std::string, std::string>> explained;

  explicit Walk(const Graph& graph) : g(graph) {
    std::set<std::pair<std::string, std::string>> seen;
    for (const Edge& e : g.edges) {
      if (!seen.insert({e.from, e.to}).second)
        throw std::invalid_argument(g.path + ": the edge " + edge_text(e) +
                                    " appears twice (NIR does not say whether it counts twice)");
      out[e.from].push_back(e.to);
      in[e.to].push_back(e.from);
    }
  }
  const std::string& type(const std::string& name) const { return g.find(name)->type; }
  bool is(const std::string& name, const std::set<std::string>& types) const {
    return types.count(type(name)) > 0;
  }
  const std::vector<std::string>& preds(const std::string& n) { return in[n]; }
  const std::vector<std::string>& succs(const std::string& n) { return out[n]; }
  void explain(const std::string& from, const std::string& to) { explained.insert({from, to}); }
};

void check_types(const Graph& g) {
  for (const auto& [name, node] : g.nodes) {
    const std::string& t = node.type;
    if (neuron_types().count(t) || weight_types().count(t) || t == "Threshold" || t == "Input" ||
        t == "Output" || is_extension(t))
      continue;
    if (t == "Delay")
      refuse(g, name,
             "egret has no delay on an edge: a recurrent edge carries the previous tick's output "
             "(docs/nir.md, the time step); a Delay node is refused");
    if (find_node_type(t))
      refuse(g, name,
             "egret cannot run a " + t +
                 " node (it runs Input, Output, Affine, Linear, Scale, LIF, CubaLIF, IF, LI, "
                 "CubaLI, I, a Threshold after an LI, SumPool2d on the Input, Flatten and nested "
                 "graphs)");
    refuse(g, name, "'" + t + "' is not a NIR node type (known: " + node_type_names() + ")");
  }
}

std::string single_node(const Graph& g, const std::string& type) {
  std::vector<std::string> found;
  for (const auto& [name, node] : g.nodes)
    if (node.type == type) found.push_back(name);
  if (found.size() != 1)
    throw std::invalid_argument(g.path + ": " + std::to_string(found.size()) + " " + type +
                                " nodes; egret runs graphs with exactly one");
  return found[0];
}

// A cycle through nodes that are not neurons is an instantaneous loop: NIR's equations do not
// define it (nothing holds state along it) and no time step makes it causal.
void check_instantaneous_loops(Walk& w) {
  std::map<std::string, int> state;  // 0 new, 1 on the path, 2 done
  std::vector<std::string> path;
  std::function<void(const std::string&)> visit = [&](const std::string& n) {
    state[n] = 1;
    path.push_back(n);
    for (const auto& s : w.succs(n)) {
      if (w.is(s, neuron_types())) continue;
      if (state[s] == 1) {
        std::string cycle;
        for (auto it = std::find(path.begin(), path.end(), s); it != path.end(); ++it)
          cycle += *it + " -> ";
        throw std::invalid_argument(w.g.path + ": the cycle " + cycle + s +
                                    " has no neuron in it: an instantaneous loop, which NIR's "
                                    "equations leave undefined and egret cannot run");
      }
      if (state[s] == 0) visit(s);
    }
    path.pop_back();
    state[n] = 2;
  };
  for (const auto& [name, node] : w.g.nodes)
    if (!w.is(name, neuron_types()) && state[name] == 0) visit(name);
}

std::string shape_of(const Eigen::MatrixXd& m) {
  return std::to_string(m.rows()) + " x " + std::to_string(m.cols());
}

// The most weights one layer may have (2^24: 128 MB in double).
constexpr Eigen::Index kMaxWeights = Eigen::Index{1} << 24;

// SumPool2d on the Input node's [channels, height, width]: each output (c, i, j) sums the inputs
// (c, i s_h - p_h + a, j s_w - p_w + b), 0 <= a < k_h, 0 <= b < k_w, inside the image.
struct Pooling {
  Eigen::Index channels = 0, height = 0, width = 0, out_h = 0, out_w = 0;
  Eigen::Index k[2] = {0, 0}, stride[2] = {0, 0}, pad[2] = {0, 0};
  Eigen::Index outputs() const { return channels * out_h * out_w; }
  Eigen::Index inputs() const { return channels * height * width; }
};

Pooling pooling_of(const Graph& g, const std::string& name, const Node& input) {
  const Node& n = *g.find(name);
  const Array& shape = input.at("shape");
  if (shape.size() != 3)
    refuse(g, name,
           "egret runs a SumPool2d only on the Input node's [channels, height, width] (a "
           "camera's polarities and pixels); this Input has " +
               std::to_string(shape.size()) + " dimensions");
  Pooling p;
  p.channels = static_cast<Eigen::Index>(shape.values[0]);
  p.height = static_cast<Eigen::Index>(shape.values[1]);
  p.width = static_cast<Eigen::Index>(shape.values[2]);
  const auto pair = [&](const char* field, Eigen::Index* out, double minimum) {
    const Array& a = n.at(field);
    if (a.size() != 1 && a.size() != 2)
      refuse(g, name, std::string("'") + field + "' is not one or two integers");
    for (std::size_t i = 0; i < 2; ++i) {
      const double v = a.values[a.size() == 1 ? 0 : i];
      if (v != std::floor(v) || v < minimum || v > 65536)
        refuse(g, name, std::string("'") + field + "' holds " + std::to_string(v));
      out[i] = static_cast<Eigen::Index>(v);
    }
  };
  pair("kernel_size", p.k, 1);
  pair("stride", p.stride, 1);
  pair("padding", p.pad, 0);
  p.out_h = (p.height + 2 * p.pad[0] - p.k[0]) / p.stride[0] + 1;
  p.out_w = (p.width + 2 * p.pad[1] - p.k[1]) / p.stride[1] + 1;
  if (p.out_h < 1 || p.out_w < 1 || p.pad[0] >= p.k[0] || p.pad[1] >= p.k[1])
    refuse(g, name, "its kernel, stride and padding leave no output of the Input's image");
  return p;
}

// m (rows x outputs) times the pooling (outputs x inputs): each input column gathers the
// columns of the outputs whose window holds it.
Eigen::MatrixXd pooled(const Eigen::MatrixXd& m, const Pooling& p) {
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(m.rows(), p.inputs());
  for (Eigen::Index c = 0; c < p.channels; ++c)
    for (Eigen::Index i = 0; i < p.out_h; ++i)
      for (Eigen::Index j = 0; j < p.out_w; ++j) {
        const Eigen::Index o = (c * p.out_h + i) * p.out_w + j;
        for (Eigen::Index a = 0; a < p.k[0]; ++a)
          for (Eigen::Index b = 0; b < p.k[1]; ++b) {
            const Eigen::Index y = i * p.stride[0] - p.pad[0] + a;
            const Eigen::Index x = j * p.stride[1] - p.pad[1] + b;
            if (y >= 0 && y < p.height && x >= 0 && x < p.width)
              out.col((c * p.height + y) * p.width + x) += m.col(o);
          }
      }
  return out;
}

// The node's own weights and bias: Affine, Linear (bias 0), Scale (diagonal).
Eigen::MatrixXd node_weights(const Node& n, Eigen::VectorXd& bias) {
  if (n.type == "Scale") {
    const Eigen::Index size = static_cast<Eigen::Index>(n.at("scale").size());
    bias = Eigen::VectorXd::Zero(size);
    return Eigen::Map<const Eigen::VectorXd>(n.at("scale").values.data(), size).asDiagonal();
  }
  const Array& w = n.at("weight");
  const auto rows = static_cast<Eigen::Index>(w.shape[0]),
             cols = static_cast<Eigen::Index>(w.shape[1]);
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j)
      m(i, j) = w.values[static_cast<std::size_t>(i * cols + j)];
  bias = n.type == "Affine"
             ? Eigen::Map<const Eigen::VectorXd>(n.at("bias").values.data(), rows).eval()
             : Eigen::VectorXd::Zero(rows);
  return m;
}

std::string path_text(const std::vector<std::string>& path) {
  std::string s;
  for (auto it = path.rbegin(); it != path.rend(); ++it) s += (s.empty() ? "" : " -> ") + *it;
  return s;
}

// The weights of a path of weight nodes (nearest the target first; empty: a plain edge) from a
// source of `inputs` values into `units` units, composed: y = W_1 (W_2 (... x) + b_2) + b_1.
// One node's weights are copied as they are (bit for bit).
Contribution contribution(const Graph& g, const std::vector<std::string>& path,
                          const std::string& source, Eigen::Index units, Eigen::Index inputs,
                          const std::string& input) {
  Contribution c;
  c.node = path.empty() ? source : path.front();
  if (units * inputs > kMaxWeights)
    refuse(g, c.node,
           "it connects " + std::to_string(inputs) + " values to " + std::to_string(units) +
               " units: more than 2^24 weights in one layer");
  c.type = path.empty() ? "" : path.size() == 1 ? g.find(path.front())->type : "composite";
  Eigen::MatrixXd m = Eigen::MatrixXd::Identity(units, units);
  Eigen::VectorXd bias = Eigen::VectorXd::Zero(units);
  const std::string what = path.size() > 1 ? "the weights " + path_text(path) + " compose to "
                           : path.empty()  ? std::string("a plain edge is ")
                                           : std::string("its weights are ");
  for (std::size_t i = 0; i < path.size(); ++i) {
    const Node& n = *g.find(path[i]);
    if (n.type == "SumPool2d") {
      if (i + 1 != path.size() || source != input)
        refuse(g, path[i], "egret runs a SumPool2d only right after the Input node");
      const Pooling p = pooling_of(g, path[i], *g.find(input));
      if (m.cols() != p.outputs())
        refuse(g, path[i],
               "it gives " + std::to_string(p.outputs()) + " values, but " +
                   std::to_string(m.cols()) + " are read from it");
      if (m.rows() * p.inputs() > kMaxWeights)
        refuse(g, path[i], "the layer's weights would exceed 2^24 entries");
      // Each output's window adds a column per pixel: bounded, so that no file makes it hang.
      const double work = static_cast<double>(m.rows()) * static_cast<double>(p.outputs()) *
                          static_cast<double>(p.k[0]) * static_cast<double>(p.k[1]);
      if (work > 1e9)
        refuse(g, path[i], "pooling into these weights takes more than 1e9 operations");
      m = pooled(m, p);
      continue;
    }
    Eigen::VectorXd b;
    const Eigen::MatrixXd w = node_weights(n, b);
    if (i == 0) {
      m = w;
      bias = b;
      c.has_bias = n.type == "Affine";
      continue;
    }
    if (m.cols() != w.rows())
      refuse(g, path[i],
             "it gives " + std::to_string(w.rows()) + " values, but " + std::to_string(m.cols()) +
                 " are read from it");
    if (m.rows() * w.cols() > kMaxWeights)
      refuse(g, path[i], "the layer's weights would exceed 2^24 entries");
    if (n.type == "Affine") {
      bias += m * b;
      c.has_bias = true;
    }
    m = m * w;
  }
  if (m.rows() != units || m.cols() != inputs)
    refuse(g, c.node,
           what + std::to_string(m.rows()) + " x " + std::to_string(m.cols()) +
               ", but it connects " + std::to_string(inputs) + " values to " +
               std::to_string(units) + " units");
  c.weight = std::move(m);
  c.bias = std::move(bias);
  return c;
}

struct Builder {
  Walk w;
  std::string input, output;
  std::vector<ChainLayer> layers;
  std::map<std::string, std::size_t> layer_of_output;  // output node -> layer
  std::map<std::size_t, std::string> source_of;        // layer -> its feedforward source

  explicit Builder(const Graph& g) : w(g) {}

  Eigen::Index size_of(const std::string& source) {
    if (source == input) {
      double n = 1;
      for (double d : w.g.find(input)->at("shape").values) n *= d;
      return static_cast<Eigen::Index>(n);
    }
    return layers[layer_of_output.at(source)].units;
  }

  void find_layers() {
    for (const auto& [name, node] : w.g.nodes) {
      if (!neuron_types().count(node.type) && !is_extension(node.type)) continue;
      ChainLayer l;
      l.neuron_name = name;
      l.neuron = &node;
      l.extension = is_extension(node.type);
      l.units = l.extension ? extension_units(name) : static_cast<Eigen::Index>(unit_count(node));
      if (!l.extension) attach_threshold(l);
      layer_of_output[l.output_name()] = layers.size();
      layers.push_back(l);
    }
    for (const auto& [name, node] : w.g.nodes)
      if (node.type == "Threshold" && !layer_of_output.count(name))
        refuse(w.g, name,
               "egret runs a Threshold only right after an LI node that sends to nothing else "
               "(its lif layer)");
    if (layers.empty()) throw std::invalid_argument(w.g.path + ": no neuron nodes");
  }

  Eigen::Index extension_units(const std::string& name) {
    const Node& node = *w.g.find(name);
    if (!node.has("units") || node.at("units").size() != 1)
      refuse(w.g, name, "an egret extension node without its 'units' (one integer)");
    const double units = node.at("units").values[0];
    if (!(units >= 1 && units <= 1e7 && units == std::floor(units)))
      refuse(w.g, name, "'units' = " + std::to_string(units) + " is not an integer in [1, 1e7]");
    return static_cast<Eigen::Index>(units);
  }

  // An extension node holds its layer's weights: it receives the layer below on a plain edge.
  void find_extension_input(std::size_t index) {
    ChainLayer& l = layers[index];
    const auto& preds = w.preds(l.neuron_name);
    if (preds.size() != 1 || w.is(preds.front(), weight_types()) || preds.front() == l.neuron_name)
      refuse(w.g, l.neuron_name,
             "an egret extension node receives one plain edge, from the layer below (it holds "
             "its own weights)");
    check_source(preds.front(), l.neuron_name);
    w.explain(preds.front(), l.neuron_name);
    source_of[index] = preds.front();
    l.inputs = size_of(preds.front());
  }

  void attach_threshold(ChainLayer& l) {
    const auto& succs = w.succs(l.neuron_name);
    bool any = false;
    for (const auto& s : succs) any = any || w.type(s) == "Threshold";
    if (!any) return;
    const std::string& t = succs.front();
    if (succs.size() != 1 || w.preds(t).size() != 1)
      refuse(w.g, l.neuron_name,
             "its Threshold must be all it sends to, and receive from it alone (egret's lif "
             "layer: an LI and its Threshold)");
    if (l.neuron->type != "LI")
      refuse(w.g, t,
             "a Threshold after a " + l.neuron->type +
                 ": egret runs a Threshold only after an LI (its lif layer); a CubaLI or I "
                 "followed by a Threshold has no egret family");
    if (unit_count(*w.g.find(t)) != static_cast<std::size_t>(l.units))
      refuse(w.g, t, "its size differs from the LI's " + std::to_string(l.units) + " units");
    l.threshold_name = t;
    l.threshold = w.g.find(t);
    w.explain(l.neuron_name, t);
  }

  // A source of a layer's input: the Input node or a layer's output.
  void check_source(const std::string& source, const std::string& via) {
    if (source != input && !layer_of_output.count(source))
      refuse(w.g, via,
             "it receives from " + named(w.g, source) +
                 ", which is neither the Input node nor a layer's output (egret's layers are "
                 "fed by weights from the layer below or from themselves)");
  }

  // The weight nodes between `from` (a predecessor of `to`) and the source they read: a path
  // of single-source, single-target weight nodes, nearest `to` first.
  std::vector<std::string> weight_path(std::string from, std::string& source) {
    std::vector<std::string> path;
    while (w.is(from, weight_types())) {
      if (w.preds(from).size() != 1 || w.succs(from).size() != 1)
        refuse(w.g, from,
               "weights with more than one source or target (egret's weights connect one layer "
               "to one layer)");
      if (path.size() >= 64) refuse(w.g, from, "more than 64 weight nodes in a row");
      path.push_back(from);
      w.explain(w.preds(from).front(), from);
      from = w.preds(from).front();
    }
    source = from;
    return path;
  }

  void find_inputs(std::size_t index) {
    if (layers[index].extension) return find_extension_input(index);
    ChainLayer& l = layers[index];
    for (const auto& p : w.preds(l.neuron_name)) {
      std::string source;
      const std::vector<std::string> path = weight_path(p, source);
      w.explain(p, l.neuron_name);
      check_source(source, path.empty() ? l.neuron_name : path.back());
      const bool recurrent = source == l.output_name();
      if (!recurrent) {
        if (source_of.count(index) && source_of[index] != source)
          refuse(w.g, l.neuron_name,
                 "it receives from both " + source_of[index] + " and " + source +
                     " (egret's layers receive from the layer below and from themselves only)");
        source_of[index] = source;
        l.inputs = size_of(source);
      }
      const Eigen::Index from = recurrent ? l.units : size_of(source);
      (recurrent ? l.recurrent : l.feedforward)
          .push_back(contribution(w.g, path, source, l.units, from, input));
    }
    if (!source_of.count(index))
      refuse(w.g, l.neuron_name, "it receives from no layer below and not from the Input node");
  }

  std::vector<ChainLayer> ordered() {
    std::vector<ChainLayer> chain;
    std::string below = input;
    for (;;) {
      std::vector<std::size_t> next;
      for (const auto& [i, s] : source_of)
        if (s == below) next.push_back(i);
      if (next.empty()) break;
      if (next.size() > 1)
        refuse(w.g, below,
               "both " + layers[next[0]].neuron_name + " and " + layers[next[1]].neuron_name +
                   " receive from it (egret's layers form one chain)");
      chain.push_back(layers[next[0]]);
      below = layers[next[0]].output_name();
      if (chain.size() > layers.size()) break;
    }
    for (const auto& l : layers) {
      bool in_chain = false;
      for (const auto& c : chain) in_chain = in_chain || c.neuron_name == l.neuron_name;
      if (!in_chain)
        refuse(w.g, l.neuron_name, "it is not on the chain of layers from the Input node");
    }
    return chain;
  }

  std::optional<Contribution> readout(const ChainLayer& last) {
    const auto& preds = w.preds(output);
    if (preds.size() != 1)
      refuse(w.g, output,
             "it receives from " + std::to_string(preds.size()) +
                 " nodes; egret's Output is the last layer's (or its readout's)");
    std::string source;
    const std::vector<std::string> path = weight_path(preds.front(), source);
    if (source != last.output_name())
      refuse(w.g, preds.front(),
             "the Output node must receive the last layer's output, directly or through weights "
             "(egret's readout)");
    w.explain(preds.front(), output);
    std::optional<Contribution> out;
    Eigen::Index size = last.units;
    if (!path.empty()) {
      Eigen::VectorXd unused;
      const Node& front = *w.g.find(path.front());
      if (front.type == "SumPool2d") refuse(w.g, path.front(), "a SumPool2d before the Output");
      size = node_weights(front, unused).rows();
      out = contribution(w.g, path, source, size, last.units, input);
    }
    double claimed = 1;
    for (double d : w.g.find(output)->at("shape").values) claimed *= d;
    if (claimed != static_cast<double>(size))
      refuse(w.g, output,
             "its shape holds " + std::to_string(static_cast<long long>(claimed)) +
                 " values, but " + std::to_string(size) + " reach it");
    return out;
  }

  void check_everything_explained() {
    for (const Edge& e : w.g.edges)
      if (!w.explained.count({e.from, e.to}))
        throw std::invalid_argument(w.g.path + ": the edge " + edge_text(e) +
                                    " is not part of egret's chain of layers (" +
                                    named(w.g, e.from) + " to " + named(w.g, e.to) + ")");
    for (const auto& [name, node] : w.g.nodes)
      if (w.preds(name).empty() && w.succs(name).empty()) refuse(w.g, name, "it has no edges");
  }

  Chain build() {
    check_types(w.g);
    input = single_node(w.g, "Input");
    output = single_node(w.g, "Output");
    check_instantaneous_loops(w);
    find_layers();
    for (std::size_t i = 0; i < layers.size(); ++i) find_inputs(i);
    Chain c;
    c.layers = ordered();
    c.input_channels = size_of(input);
    c.readout = readout(c.layers.back());
    c.output_name = output;
    check_everything_explained();
    return c;
  }
};

}  // namespace nir_chains

bool ChainLayer::spiking() const {
  if (extension) return false;
  return threshold ||
         (neuron && (neuron->type == "LIF" || neuron->type == "CubaLIF" || neuron->type == "IF"));
}

Chain find_chain(const Graph& flat) {
  return nir_chains::Builder(flat).build();
}

Eigen::MatrixXd summed_weights(const std::vector<Contribution>& parts, Eigen::Index rows,
                               Eigen::Index cols, WeightParts which) {
  Eigen::MatrixXd sum;
  for (const auto& c : parts) {
    if (which != WeightParts::kAll && (c.type == "Scale") != (which == WeightParts::kScales))
      continue;
    if (sum.size() == 0)
      sum = c.weight;
    else
      sum += c.weight;
  }
  return sum.size() ? sum : Eigen::MatrixXd::Zero(rows, cols);
}

Eigen::VectorXd summed_bias(const ChainLayer& layer) {
  Eigen::VectorXd b;
  for (const auto* parts : {&layer.feedforward, &layer.recurrent})
    for (const auto& c : *parts) {
      if (!c.has_bias) continue;
      if (b.size() == 0)
        b = c.bias;
      else
        b += c.bias;
    }
  return b.size() ? b : Eigen::VectorXd::Zero(layer.units);
}

}  // namespace egret::nir
