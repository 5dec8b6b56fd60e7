// The trainable parameters of a network with a readout, as one flat vector in unconstrained
// coordinates, and the map back to a network. It walks each layer's named parameters
// (sim/parameters.hpp), whatever the family:
//
// Layout, per layer: its parameters in their declared order, those with Training::kTrained, and
// with train_time_constants also those with Training::kTimeConstant; then W_o, b_o. Each matrix
// column-major. Coordinates by constraint: kFree x = value; kSoftplus value = softplus(x) > 0, so
// dL/dx = dL/dvalue sigmoid(x); kLog value = exp(x), so dL/dx = value dL/dvalue.
#pragma once

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "adjoint/gradient.hpp"
#include "sim/network.hpp"

namespace egret {

template <class Scalar>
class ParameterVector {
 public:
  ParameterVector() = default;
  ParameterVector(const Network<Scalar>& net, bool train_time_constants)
      : train_tau_(train_time_constants) {
    if (!net.readout()) throw std::invalid_argument("training: the network needs a readout");
    for (Index l = 0; l < net.size(); ++l) {
      if (!net.layer(l).has_adjoint())
        throw std::invalid_argument("training: layer " + std::to_string(l) + " (" +
                                    net.layer(l).type_name() +
                                    ") has no backward pass, so it cannot train");
      layers_.push_back(std::shared_ptr<const Layer<Scalar>>(net.layer(l).clone()));
      templates_.push_back(net.layer(l).parameters());
    }
    readout_ = *net.readout();
    values_ = pack();
  }

  std::vector<Scalar>& values() { return values_; }
  const std::vector<Scalar>& values() const { return values_; }
  std::size_t size() const { return values_.size(); }

  // Magnitude pruning of every layer whose family has sparse connectivity (Layer::pruned): the
  // layer is replaced by its sparse version and the values of the connections it cut are set to
  // 0. Returns the positions set to 0 (the optimizer forgets their moments) and the number of
  // layers pruned.
  std::pair<std::vector<std::size_t>, int> prune(double keep) {
    const Network<Scalar> current = network();
    std::vector<std::size_t> cut;
    int layers = 0;
    std::size_t pos = 0;
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      std::unique_ptr<Layer<Scalar>> sparse = current.layer(static_cast<Index>(l)).pruned(keep);
      const NamedParameters<Scalar> kept =
          sparse ? sparse->parameters() : NamedParameters<Scalar>();
      for (const auto& e : templates_[l]) {
        if (!trains(e.spec)) continue;
        const Matrix<Scalar>* now = sparse ? kept.find(e.spec.name) : nullptr;
        for (Index i = 0; i < e.value.size(); ++i, ++pos) {
          if (!now || now->data()[i] != Scalar(0) || values_[pos] == Scalar(0)) continue;
          if (e.spec.constraint != Constraint::kFree)
            throw std::logic_error("prune: a pruned parameter must be unconstrained");
          values_[pos] = 0;
          cut.push_back(pos);
        }
      }
      if (sparse) {
        layers_[l] = std::move(sparse);
        ++layers;
      }
    }
    return {cut, layers};
  }

  // The network with the current values (fresh layers; the other parameters and the settings
  // from the template).
  Network<Scalar> network() const {
    Network<Scalar> net;
    std::size_t pos = 0;
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      NamedParameters<Scalar> p = templates_[l];
      for (auto& e : p) {
        if (!trains(e.spec)) continue;
        for (Index i = 0; i < e.value.size(); ++i)
          e.value.data()[i] = to_value(e.spec.constraint, values_[pos++]);
      }
      net.add_layer(layers_[l]->with_parameters(p));
    }
    Readout<Scalar> ro = readout_;
    read(ro.W_o, pos);
    read(ro.b_o, pos);
    net.set_readout(std::move(ro));
    return net;
  }

  // dL/d(values) from a gradient in natural coordinates, at the current values.
  std::vector<Scalar> flatten(const Gradient<Scalar>& g) const {
    std::vector<Scalar> out;
    flatten(g, out);
    return out;
  }
  // The same into `out`, whose storage is reused (the trainer flattens every sample's gradient).
  void flatten(const Gradient<Scalar>& g, std::vector<Scalar>& out) const {
    out.clear();
    out.reserve(values_.size());
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      const NamedParameters<Scalar>& gl = g.layers[l];
      for (std::size_t k = 0; k < gl.size(); ++k) {
        const auto& e = gl[k];
        if (!trains(e.spec)) continue;
        for (Index i = 0; i < e.value.size(); ++i) {
          const std::size_t pos = out.size();
          out.push_back(e.value.data()[i] * value_derivative(e.spec.constraint, values_[pos]));
        }
      }
    }
    append(out, g.W_o);
    append(out, g.b_o);
  }

  bool trains_time_constants() const { return train_tau_; }

  // Checkpoints before format 4 (docs/formats.md) held one value per layer for a parameter that
  // is now per unit (ParameterSpec::was_scalar): their layout has that many fewer values.
  std::size_t format3_size() const {
    std::size_t n = values_.size();
    for (const auto& p : templates_)
      for (const auto& e : p)
        if (trains(e.spec) && e.spec.was_scalar) n -= static_cast<std::size_t>(e.value.size()) - 1;
    return n;
  }
  // Values in the format-3 layout (format3_size() of them) in today's: such a layer's one value
  // repeated for every unit. `moments`: Adam's moments, which restart at 0 there instead (the
  // shared value's moments are not any one unit's).
  std::vector<double> from_format3(const std::vector<double>& old, bool moments,
                                   const std::string& where) const {
    if (old.size() != format3_size())
      throw std::invalid_argument(where + ": " + std::to_string(old.size()) +
                                  " values, a format-3 checkpoint of this network has " +
                                  std::to_string(format3_size()));
    std::vector<double> out;
    out.reserve(values_.size());
    std::size_t pos = 0;
    for (const auto& p : templates_) {
      for (const auto& e : p) {
        if (!trains(e.spec)) continue;
        if (!e.spec.was_scalar) {
          const auto n = static_cast<std::ptrdiff_t>(e.value.size());
          out.insert(out.end(), old.begin() + static_cast<std::ptrdiff_t>(pos),
                     old.begin() + static_cast<std::ptrdiff_t>(pos) + n);
          pos += static_cast<std::size_t>(n);
          continue;
        }
        out.insert(out.end(), static_cast<std::size_t>(e.value.size()), moments ? 0.0 : old[pos]);
        ++pos;
      }
    }
    out.insert(out.end(), old.begin() + static_cast<std::ptrdiff_t>(pos), old.end());  // readout
    return out;
  }

  static Scalar softplus(Scalar x) {
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
  static Scalar softplus_inverse(Scalar y) {  // y > 0
    return y > 20 ? y : std::log(std::expm1(y));
  }

 private:
  bool trains(const ParameterSpec& s) const {
    return s.training == Training::kTrained ||
           (train_tau_ && s.training == Training::kTimeConstant);
  }
  static Scalar sigmoid(Scalar x) { return Scalar(1) / (Scalar(1) + std::exp(-x)); }
  static Scalar to_value(Constraint c, Scalar x) {
    switch (c) {
      case Constraint::kSoftplus:
        return softplus(x);
      case Constraint::kLog:
        return std::exp(x);
      default:
        return x;
    }
  }
  static Scalar to_coordinate(Constraint c, Scalar v) {
    switch (c) {
      case Constraint::kSoftplus:
        return softplus_inverse(v);
      case Constraint::kLog:
        return std::log(v);
      default:
        return v;
    }
  }
  // d value / d x at coordinate x.
  static Scalar value_derivative(Constraint c, Scalar x) {
    switch (c) {
      case Constraint::kSoftplus:
        return sigmoid(x);
      case Constraint::kLog:
        return std::exp(x);
      default:
        return Scalar(1);
    }
  }

  template <class M>
  static void append(std::vector<Scalar>& out, const M& m) {
    out.insert(out.end(), m.data(), m.data() + m.size());
  }
  template <class M>
  void read(M& m, std::size_t& pos) const {
    for (Index i = 0; i < m.size(); ++i) m.data()[i] = values_[pos++];
  }

  std::vector<Scalar> pack() const {
    std::vector<Scalar> out;
    for (const auto& p : templates_) {
      for (const auto& e : p) {
        if (!trains(e.spec)) continue;
        for (Index i = 0; i < e.value.size(); ++i)
          out.push_back(to_coordinate(e.spec.constraint, e.value.data()[i]));
      }
    }
    append(out, readout_.W_o);
    append(out, readout_.b_o);
    return out;
  }

  bool train_tau_ = false;
  std::vector<std::shared_ptr<const Layer<Scalar>>> layers_;  // family and settings
  std::vector<NamedParameters<Scalar>> templates_;
  Readout<Scalar> readout_;
  std::vector<Scalar> values_;
};

}  // namespace egret
