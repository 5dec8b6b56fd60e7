// The trainable parameters of a network of continuous EGRU layers with a readout, as one flat
// vector in unconstrained coordinates, and the map back to layer parameters.
//
// Layout, per layer: U_u, U_r, U_z, V_u, V_r, V_z (column-major), b_u, b_r, b_z, rho_theta,
// then (if train_time_constants) log tau_m, log tau_o; then W_o, b_o.
// Positivity: theta = softplus(rho) = log(1 + exp(rho)) > 0, so dL/drho = dL/dtheta sigmoid(rho);
// time constants tau = exp(log tau).
#pragma once

#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "adjoint/gradient.hpp"
#include "models/continuous_egru_layer.hpp"
#include "sim/network.hpp"

namespace egret {

template <class Scalar>
class ParameterVector {
 public:
  using P = ContinuousEgruParams<Scalar>;

  ParameterVector() = default;
  ParameterVector(const Network<Scalar>& net, bool train_time_constants)
      : train_tau_(train_time_constants) {
    if (!net.readout()) throw std::invalid_argument("training: the network needs a readout");
    for (Index l = 0; l < net.size(); ++l) {
      const auto* layer = dynamic_cast<const ContinuousEgruLayer<Scalar>*>(&net.layer(l));
      if (!layer)
        throw std::invalid_argument("training: layer " + std::to_string(l) + " (" +
                                    net.layer(l).type_name() +
                                    ") has no exact gradient; only continuous_egru layers train");
      templates_.push_back(layer->params());
    }
    readout_ = *net.readout();
    values_ = pack_params();
  }

  std::vector<Scalar>& values() { return values_; }
  const std::vector<Scalar>& values() const { return values_; }
  std::size_t size() const { return values_.size(); }

  // The network with the current values (fresh layers; non-trainable settings from the template).
  Network<Scalar> network() const {
    Network<Scalar> net;
    std::size_t pos = 0;
    for (const P& t : templates_) {
      P p = t;
      for (auto* m : {&p.U_u, &p.U_r, &p.U_z, &p.V_u, &p.V_r, &p.V_z}) read(*m, pos);
      for (auto* v : {&p.b_u, &p.b_r, &p.b_z}) read(*v, pos);
      for (Index i = 0; i < p.theta.size(); ++i) p.theta[i] = softplus(values_[pos++]);
      if (train_tau_) {
        p.tau_m = std::exp(values_[pos++]);
        p.tau_o = std::exp(values_[pos++]);
      }
      // A trained threshold may drop below the initial state; keep c_init feasible.
      for (Index i = 0; i < p.c_init.size(); ++i)
        if (!(p.c_init[i] < p.theta[i])) p.c_init[i] = 0;
      net.add_layer(std::make_unique<ContinuousEgruLayer<Scalar>>(std::make_shared<P>(p)));
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
    out.reserve(values_.size());
    std::size_t pos = 0;
    for (std::size_t l = 0; l < templates_.size(); ++l) {
      const auto& gl = g.layers[l];
      for (const auto* m : {&gl.U_u, &gl.U_r, &gl.U_z, &gl.V_u, &gl.V_r, &gl.V_z}) append(out, *m);
      for (const auto* v : {&gl.b_u, &gl.b_r, &gl.b_z}) append(out, *v);
      pos = out.size();
      for (Index i = 0; i < gl.theta.size(); ++i)
        out.push_back(gl.theta[i] * sigmoid(values_[pos + static_cast<std::size_t>(i)]));
      if (train_tau_) {
        const std::size_t k = out.size();
        out.push_back(gl.tau_m * std::exp(values_[k]));  // dL/dlog tau = tau dL/dtau
        out.push_back(gl.tau_o * std::exp(values_[k + 1]));
      }
    }
    append(out, g.W_o);
    append(out, g.b_o);
    return out;
  }

  bool trains_time_constants() const { return train_tau_; }

 private:
  static Scalar softplus(Scalar x) {
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
  static Scalar softplus_inverse(Scalar y) {  // y > 0
    return y > 20 ? y : std::log(std::expm1(y));
  }
  static Scalar sigmoid(Scalar x) { return Scalar(1) / (Scalar(1) + std::exp(-x)); }

  template <class M>
  static void append(std::vector<Scalar>& out, const M& m) {
    out.insert(out.end(), m.data(), m.data() + m.size());
  }
  template <class M>
  void read(M& m, std::size_t& pos) const {
    for (Index i = 0; i < m.size(); ++i) m.data()[i] = values_[pos++];
  }

  std::vector<Scalar> pack_params() const {
    std::vector<Scalar> out;
    for (const P& p : templates_) {
      for (const auto* m : {&p.U_u, &p.U_r, &p.U_z, &p.V_u, &p.V_r, &p.V_z}) append(out, *m);
      for (const auto* v : {&p.b_u, &p.b_r, &p.b_z}) append(out, *v);
      for (Index i = 0; i < p.theta.size(); ++i) out.push_back(softplus_inverse(p.theta[i]));
      if (train_tau_) {
        out.push_back(std::log(p.tau_m));
        out.push_back(std::log(p.tau_o));
      }
    }
    append(out, readout_.W_o);
    append(out, readout_.b_o);
    return out;
  }

  bool train_tau_ = false;
  std::vector<P> templates_;
  Readout<Scalar> readout_;
  std::vector<Scalar> values_;
};

}  // namespace egret
