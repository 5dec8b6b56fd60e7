// Gradients of a loss with respect to everything the backward pass differentiates: per layer its
// named parameters (shaped like Layer::parameters(), whatever the family), the readout (W_o,
// b_o), and the external input events (times and values).
#pragma once

#include <vector>

#include "sim/layer_adjoint.hpp"
#include "sim/network.hpp"
#include "sim/parameters.hpp"

namespace egret {

template <class Scalar>
struct Gradient {
  std::vector<NamedParameters<Scalar>> layers;
  Matrix<Scalar> W_o;  // empty without a readout
  Vector<Scalar> b_o;
  std::vector<Scalar> input_time;   // dL/ds_i per event of the (sorted) input stream
  std::vector<Scalar> input_value;  // dL/dx_i

  Gradient& operator+=(const Gradient& o) {
    for (std::size_t l = 0; l < layers.size(); ++l) layers[l] += o.layers[l];
    if (W_o.size()) {
      W_o += o.W_o;
      b_o += o.b_o;
    }
    return *this;  // input gradients are per sample and are not summed
  }
  Gradient& operator*=(Scalar s) {
    for (auto& l : layers) l *= s;
    W_o *= s;
    b_o *= s;
    return *this;
  }
};

// A gradient sized for `net` and `input_events`, all zero.
template <class Scalar>
Gradient<Scalar> zero_gradient(const Network<Scalar>& net, std::size_t input_events) {
  Gradient<Scalar> g;
  for (Index l = 0; l < net.size(); ++l) g.layers.push_back(net.layer(l).parameter_zeros());
  if (const auto* ro = net.readout()) {
    g.W_o.setZero(ro->W_o.rows(), ro->W_o.cols());
    g.b_o.setZero(ro->b_o.size());
  }
  g.input_time.assign(input_events, 0);
  g.input_value.assign(input_events, 0);
  return g;
}

// `g` made zero_gradient(net, input_events), in place where it is a gradient of `net` already (a
// buffer of an earlier sample of the same batch, train/ordered_gradient_sum.hpp): no allocation,
// hence none of the page faults that a fresh 1.6 MB gradient per sample costs on the main job.
template <class Scalar>
void make_zero_gradient(Gradient<Scalar>& g, const Network<Scalar>& net, std::size_t input_events) {
  const auto* ro = net.readout();
  const bool same_shape =
      g.layers.size() == static_cast<std::size_t>(net.size()) &&
      (ro ? g.W_o.rows() == ro->W_o.rows() && g.W_o.cols() == ro->W_o.cols() : g.W_o.size() == 0);
  if (!same_shape) {
    g = zero_gradient(net, input_events);
    return;
  }
  for (auto& l : g.layers) l.set_zero();
  g.W_o.setZero();
  g.b_o.setZero();
  g.input_time.assign(input_events, 0);
  g.input_value.assign(input_events, 0);
}

}  // namespace egret
