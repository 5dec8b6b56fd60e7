// A network: a stack of layers (each layer's events are the next layer's input) and an optional
// linear readout of the last layer's output trace.
#pragma once

#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "sim/layer.hpp"
#include "sim/numeric_types.hpp"

namespace egret {

// logits = W_o o(t) + b_o over the last layer's output trace o.
template <class Scalar>
struct Readout {
  Matrix<Scalar> W_o;  // classes x units of the last layer
  Vector<Scalar> b_o;  // classes
  Index classes() const { return W_o.rows(); }
};

template <class Scalar>
class Network {
 public:
  Network() = default;

  void add_layer(std::unique_ptr<Layer<Scalar>> layer) {
    if (!layer) throw std::invalid_argument("network: null layer");
    if (!layers_.empty() && layer->inputs() != layers_.back()->units()) {
      std::ostringstream os;
      os << "network: layer " << layers_.size() << " (" << layer->type_name() << ") expects "
         << layer->inputs() << " inputs but layer " << layers_.size() - 1 << " has "
         << layers_.back()->units() << " units";
      throw std::invalid_argument(os.str());
    }
    if (!layers_.empty()) {
      try {
        layer->set_input_held(layers_.back()->output_is_held());
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("network: layer " + std::to_string(layers_.size()) +
                                    " after a " + layers_.back()->type_name() +
                                    " layer: " + e.what());
      }
    }
    layers_.push_back(std::move(layer));
  }

  void set_readout(Readout<Scalar> readout) {
    if (layers_.empty()) throw std::invalid_argument("network: add layers before the readout");
    const Index n = layers_.back()->units();
    if (readout.W_o.cols() != n || readout.b_o.size() != readout.W_o.rows() ||
        readout.W_o.rows() <= 0) {
      std::ostringstream os;
      os << "network: readout W_o is " << readout.W_o.rows() << "x" << readout.W_o.cols()
         << " and b_o has " << readout.b_o.size() << " entries; expected C x " << n
         << " and C entries (C > 0)";
      throw std::invalid_argument(os.str());
    }
    if (!readout.W_o.allFinite() || !readout.b_o.allFinite())
      throw std::invalid_argument("network: readout contains NaN or infinite entries");
    readout_ = std::make_shared<const Readout<Scalar>>(std::move(readout));
  }

  // Same parameters (shared), fresh state: one copy per worker thread.
  Network clone() const {
    Network copy;
    for (const auto& l : layers_) copy.layers_.push_back(l->clone());
    copy.readout_ = readout_;
    return copy;
  }

  Index size() const { return static_cast<Index>(layers_.size()); }
  bool empty() const { return layers_.empty(); }
  Layer<Scalar>& layer(Index i) { return *layers_.at(static_cast<std::size_t>(i)); }
  const Layer<Scalar>& layer(Index i) const { return *layers_.at(static_cast<std::size_t>(i)); }
  Index input_channels() const { return layers_.empty() ? 0 : layers_.front()->inputs(); }
  const Readout<Scalar>* readout() const { return readout_.get(); }

 private:
  std::vector<std::unique_ptr<Layer<Scalar>>> layers_;
  std::shared_ptr<const Readout<Scalar>> readout_;
};

}  // namespace egret
