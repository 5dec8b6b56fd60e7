// Parameters of one dynamic-sparse GRU layer (DS-GRU, DS-RNN paper Eq. 5-11;
// models/ds_gru/ds_gru_cell.hpp): the GRU's input weights W_z, W_r, W_h (N x D), recurrent weights
// U_z, U_r, U_h (N x N) and biases b_z, b_r, b_h (N), in the seed's symbols; the router (egret's
// names, the seed has none): the projection W_proj (R x D, the seed's c_t = W_proj x_t), the
// hidden-mask logits a_h = W_ah c + b_ah (N) and the input-mask logits a_x = W_ax c + b_ax (D); the
// masks' scalar temperatures tau_h, tau_x and shifts mu_h, mu_x (Eq. 11). Settings: dt, the budgets
// (channels kept per tick) hidden_k and input_k, and the backward treatment of the top-k.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "models/shared/parameter_checks.hpp"
#include "sim/parameters.hpp"

namespace egret {

template <class ScalarT>
struct DsGruParams {
  using Scalar = ScalarT;
  Matrix<Scalar> W_z, W_r, W_h, U_z, U_r, U_h;
  Vector<Scalar> b_z, b_r, b_h;
  Matrix<Scalar> W_proj, W_ah, W_ax;
  Vector<Scalar> b_ah, b_ax;
  Scalar tau_h = 1, tau_x = 1, mu_h = 0, mu_x = 0;  // the seed's initial values
  Scalar dt = 1;
  Index hidden_k = 1, input_k = 1;  // hidden units and input channels kept per tick
  // Backward: true, every channel's sigmoid passes the gradient (the top-k is the identity);
  // false, only the kept channels' do.
  bool straight_through = true;

  Index units() const { return b_z.size(); }
  Index inputs() const { return W_z.cols(); }
  Index router_rank() const { return W_proj.rows(); }
  Scalar output_time_constant() const { return std::numeric_limits<Scalar>::infinity(); }

  // The score a channel is ranked by, tau (a - mu), and its mask value sigmoid(score) (Eq. 11).
  static Scalar score(Scalar logit, Scalar tau, Scalar mu) { return tau * (logit - mu); }
  static Scalar sigmoid(Scalar u) { return Scalar(1) / (Scalar(1) + std::exp(-u)); }

  template <class Self, class F>
  static void visit_parameters(Self& p, F&& f) {
    f(ParameterSpec{"W_z"}, p.W_z);
    f(ParameterSpec{"W_r"}, p.W_r);
    f(ParameterSpec{"W_h"}, p.W_h);
    f(ParameterSpec{"U_z"}, p.U_z);
    f(ParameterSpec{"U_r"}, p.U_r);
    f(ParameterSpec{"U_h"}, p.U_h);
    f(ParameterSpec{"b_z"}, p.b_z);
    f(ParameterSpec{"b_r"}, p.b_r);
    f(ParameterSpec{"b_h"}, p.b_h);
    f(ParameterSpec{"W_proj"}, p.W_proj);
    f(ParameterSpec{"W_ah"}, p.W_ah);
    f(ParameterSpec{"b_ah"}, p.b_ah);
    f(ParameterSpec{"W_ax"}, p.W_ax);
    f(ParameterSpec{"b_ax"}, p.b_ax);
    f(ParameterSpec{"tau_h"}, p.tau_h);
    f(ParameterSpec{"tau_x"}, p.tau_x);
    f(ParameterSpec{"mu_h"}, p.mu_h);
    f(ParameterSpec{"mu_x"}, p.mu_x);
  }

  struct RandomInit {
    Scalar weight_scale = 1, recurrent_scale = 1, bias_z = 0, router_scale = 1;
    Index router_rank = 4, hidden_k = 1, input_k = 1;
  };
  static DsGruParams random(Index units, Index inputs, std::uint64_t seed, const RandomInit& init) {
    DsGruParams p;
    SeededUniform<Scalar> uniform(seed);
    const Scalar sw = init.weight_scale / std::sqrt(static_cast<Scalar>(inputs));
    const Scalar su = init.recurrent_scale / std::sqrt(static_cast<Scalar>(units));
    for (Matrix<Scalar>* w : {&p.W_z, &p.W_r, &p.W_h}) fill(*w, units, inputs, sw, uniform);
    for (Matrix<Scalar>* u : {&p.U_z, &p.U_r, &p.U_h}) fill(*u, units, units, su, uniform);
    p.b_z.setConstant(units, init.bias_z);
    p.b_r.setZero(units);
    p.b_h.setZero(units);
    // The router as torch.nn.Linear layers: weights and biases ~ U(-s/sqrt(fan_in), same).
    const Index rank = init.router_rank;
    const Scalar sp = init.router_scale / std::sqrt(static_cast<Scalar>(inputs));
    const Scalar sa = init.router_scale / std::sqrt(static_cast<Scalar>(rank));
    fill(p.W_proj, rank, inputs, sp, uniform);
    fill(p.W_ah, units, rank, sa, uniform);
    fill(p.b_ah, units, 1, sa, uniform);
    fill(p.W_ax, inputs, rank, sa, uniform);
    fill(p.b_ax, inputs, 1, sa, uniform);
    p.hidden_k = init.hidden_k;
    p.input_k = init.input_k;
    return p;
  }

  void validate(const std::string& layer = "ds_gru layer") const {
    const Index n = units(), d = inputs(), rank = router_rank();
    if (n < 1 || d < 1) throw std::invalid_argument(layer + ": needs units >= 1 and inputs >= 1");
    if (rank < 1) throw std::invalid_argument(layer + ": W_proj needs at least one row");
    detail::check_shape(W_z, n, d, layer, "W_z");
    detail::check_shape(W_r, n, d, layer, "W_r");
    detail::check_shape(W_h, n, d, layer, "W_h");
    detail::check_shape(U_z, n, n, layer, "U_z");
    detail::check_shape(U_r, n, n, layer, "U_r");
    detail::check_shape(U_h, n, n, layer, "U_h");
    detail::check_shape(b_z, n, 1, layer, "b_z");
    detail::check_shape(b_r, n, 1, layer, "b_r");
    detail::check_shape(b_h, n, 1, layer, "b_h");
    detail::check_shape(W_proj, rank, d, layer, "W_proj");
    detail::check_shape(W_ah, n, rank, layer, "W_ah");
    detail::check_shape(b_ah, n, 1, layer, "b_ah");
    detail::check_shape(W_ax, d, rank, layer, "W_ax");
    detail::check_shape(b_ax, d, 1, layer, "b_ax");
    for (auto [name, v] :
         {std::pair{"tau_h", tau_h}, {"tau_x", tau_x}, {"mu_h", mu_h}, {"mu_x", mu_x}})
      if (!std::isfinite(v)) throw std::invalid_argument(layer + ": " + name + " must be finite");
    check_budget(hidden_k, n, layer, "router.hidden_k", "units");
    check_budget(input_k, d, layer, "router.input_k", "input channels");
    detail::check_time_scale(dt, layer, "dt", false);
  }

 private:
  template <class M>
  static void fill(M& m, Index rows, Index cols, Scalar scale, SeededUniform<Scalar>& uniform) {
    m.resize(rows, cols);
    uniform.fill(m, scale);
  }
  static void check_budget(Index k, Index channels, const std::string& layer, const char* key,
                           const char* what) {
    if (k < 1 || k > channels)
      throw std::invalid_argument(layer + ": " + key + " = " + std::to_string(k) +
                                  " is impossible: it must lie in [1, " + std::to_string(channels) +
                                  "], the layer's " + what);
  }
};

// Where each quantity sits in one tick's tape record (written by DsGruCell::record, read by
// DsGruAdjoint::tick): the router's logits a_h (N) and a_x (D), the kept hidden units (hidden_k)
// and input channels (input_k) in ascending order, z, h_hat, r (N each, every unit), the
// router's context c (R) and h_k (N).
struct DsGruRecordLayout {
  Index n, d, hidden_k, input_k, rank;
  template <class P>
  explicit DsGruRecordLayout(const P& p)
      : n(p.units()),
        d(p.inputs()),
        hidden_k(p.hidden_k),
        input_k(p.input_k),
        rank(p.router_rank()) {}
  Index logits_h() const { return 0; }
  Index logits_x() const { return n; }
  Index kept_h() const { return n + d; }
  Index kept_x() const { return kept_h() + hidden_k; }
  Index update_gate() const { return kept_x() + input_k; }
  Index candidate() const { return update_gate() + n; }
  Index reset_gate() const { return candidate() + n; }
  Index context() const { return reset_gate() + n; }
  Index state() const { return context() + rank; }
  std::size_t size() const { return static_cast<std::size_t>(state() + n); }
};

}  // namespace egret
