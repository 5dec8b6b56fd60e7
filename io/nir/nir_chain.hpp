// The layers of a (flattened) NIR graph, as egret runs them (docs/nir.md, Import): a chain
// from the Input node to the Output node in which every layer is one neuron node (LIF, CubaLIF,
// IF, LI, CubaLI, I; or an LI followed by a Threshold) fed by weights from the layer below
// (Affine, Linear, Scale, several of them in a row, composed; SumPool2d right after the Input;
// or a plain edge), and optionally by weights from its own output (recurrent edges: they carry
// the previous tick's output), and the last layer's output goes to the Output node, directly or
// through weights (egret's readout). Anything else is refused with the node named: other node
// types, branches, edges between layers that are not neighbours, cycles without a neuron (an
// instantaneous loop). An egret extension node ("egret.<family>", written by
// `egret export-nir --extension`) is a whole layer, fed by a plain edge.
#pragma once

#include <Eigen/Core>
#include <optional>
#include <string>
#include <vector>

#include "io/nir/nir_graph.hpp"

namespace egret::nir {

// What one weight node (or a plain edge) adds to a layer's input: weight (units x inputs) times
// the source, plus bias.
struct Contribution {
  std::string node;  // the weight node (nearest the target), or the source of a plain edge
  // "Affine", "Linear", "Scale", "SumPool2d", "composite" (several weight nodes in a row,
  // composed), or "" (a plain edge: identity)
  std::string type;
  Eigen::MatrixXd weight;
  Eigen::VectorXd bias;   // zero without an Affine on the path
  bool has_bias = false;  // an Affine on the path
};

struct ChainLayer {
  std::string neuron_name, threshold_name;  // threshold: an LI's Threshold, else empty
  const Node* neuron = nullptr;
  const Node* threshold = nullptr;
  Eigen::Index units = 0, inputs = 0;
  std::vector<Contribution> feedforward, recurrent;
  bool extension = false;  // an egret extension node (io/nir/extension_nir.cpp): a whole layer
  const std::string& output_name() const { return threshold ? threshold_name : neuron_name; }
  bool spiking() const;  // LIF, CubaLIF, IF, or LI + Threshold
};

struct Chain {
  Eigen::Index input_channels = 0;
  std::vector<ChainLayer> layers;
  std::optional<Contribution> readout;  // between the last layer and the Output node
  std::string output_name;
};

// `flat` must be flattened (io/nir/nir_flatten.hpp).
Chain find_chain(const Graph& flat);

// The sum of some of the contributions' weights (the first one copied, so that -0.0 stays
// -0.0), zero (rows x cols) without any: all of them, only the Scale nodes, or the others.
enum class WeightParts { kAll, kScales, kOthers };
Eigen::MatrixXd summed_weights(const std::vector<Contribution>& parts, Eigen::Index rows,
                               Eigen::Index cols, WeightParts which);
// The sum of the layer's Affine biases (feedforward and recurrent: both are constant inputs),
// zero without one.
Eigen::VectorXd summed_bias(const ChainLayer& layer);

}  // namespace egret::nir
