// The physics of one discrete-time EGRU step in EvNN's convention (docs/model.md §4, EvNN
// convention; the layer of evnn_pytorch.EGRU, docs/evnn_egru.md), for all N units of one sequence:
//   a = W^T x_t + b_x,  q = R^T y_{t-1} + b_r              (3N each, gate order [z, r, g])
//   z = sigmoid(a_z + q_z)   r = sigmoid(a_r + q_r)   g = tanh(a_g + r * q_g)
//   c_hat = z h_{t-1} + (1 - z) g,   c = w c_hat + (1 - w) h_{t-1}   (zoneout: w = mask or 1 - p)
//   o = H(c - thr) (strict),  y = o c,  h = c - o thr,  trace = 0.9 trace + 0.1 y
// The recurrent input is y (event-sparse: only units with o = 1 send), the memory is h. The
// backward of one step (step_adjoint) uses the pseudo-derivative
// dH/dv ~ gamma max(0, 1 - eps |v|) wherever o appears, as EvNN does.
#pragma once

#include <Eigen/Core>
#include <cmath>

#include "events/event.hpp"

namespace egret {

template <class Scalar>
struct EvnnEgruEquations {
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  using ConstMap = Eigen::Map<const Array>;
  using Map = Eigen::Map<Array>;
  static constexpr Scalar kTraceDecay = Scalar(0.9);

  static Scalar pseudo_derivative(Scalar v, Scalar gamma, Scalar eps) {
    const Scalar h = Scalar(1) - eps * std::abs(v);
    return h > 0 ? gamma * h : Scalar(0);
  }

  // What the backward pass of a step needs, per unit: z, r, g, q_g and v = c - thr.
  template <class M>
  struct Record {
    M z, r, g, q_g, v;
  };
  using StepRecord = Record<Map>;
  using ConstStepRecord = Record<ConstMap>;

  // One step from the summed pre-activations a, q (3N each) and h_{t-1}; w is the zoneout
  // weight of the new value (1 without zoneout). Writes the record and y, h, trace (in place).
  template <class A, class Q, class Thr>
  static void step(const A& a, const Q& q, const Scalar* h_prev, const Scalar* w, const Thr& thr,
                   StepRecord& s, Scalar* y, Scalar* h, Scalar* trace) {
    const Index n = thr.size();
    s.z = sigmoid(a.head(n) + q.head(n));
    s.r = sigmoid(a.segment(n, n) + q.segment(n, n));
    s.q_g = q.tail(n);
    s.g = (a.tail(n) + s.r * s.q_g).tanh();
    const ConstMap hp(h_prev, n);
    Array c = s.z * hp + (Scalar(1) - s.z) * s.g;
    if (w) c = ConstMap(w, n) * c + (Scalar(1) - ConstMap(w, n)) * hp;
    s.v = c - thr;
    const Array o = (s.v > Scalar(0)).template cast<Scalar>();
    Map(y, n) = o * c;
    Map(h, n) = c - o * thr;
    Map(trace, n) = kTraceDecay * Map(trace, n) + (Scalar(1) - kTraceDecay) * Map(y, n);
  }

  // The adjoint of one step. In: dL/dy_t and dL/dh_t (upstream plus carried), dL/do_t (the
  // caller's, or null), the record.
  // Out: dL/dthr (added), the pre-activation adjoints p = dL/da and qbar = dL/dq (3N each), and
  // dL/dh_{t-1} through the cell (the carry; h_{t-1} also reaches a and q only through y).
  template <class ThrBar>
  static void step_adjoint(const Array& y_bar, const Array& h_bar, const Scalar* o_up,
                           const ConstStepRecord& s, const Scalar* h_prev, const Scalar* w,
                           const Array& thr, Scalar gamma, Scalar eps, ThrBar&& thr_bar, Array& p,
                           Array& qbar, Array& h_prev_bar) {
    const Index n = thr.size();
    const Array c = s.v + thr;
    const Array o = (s.v > Scalar(0)).template cast<Scalar>();
    Array o_bar = c * y_bar - thr * h_bar;
    if (o_up) o_bar += ConstMap(o_up, n);
    const Array v_bar =
        s.v.unaryExpr([&](Scalar v) { return pseudo_derivative(v, gamma, eps); }) * o_bar;
    thr_bar -= v_bar + o * h_bar;
    const Array c_bar = o * y_bar + h_bar + v_bar;
    const ConstMap hp(h_prev, n);
    Array c_hat_bar = c_bar;
    h_prev_bar.setZero(n);
    if (w) {
      const ConstMap wm(w, n);
      c_hat_bar = wm * c_bar;
      h_prev_bar = (Scalar(1) - wm) * c_bar;
    }
    h_prev_bar += s.z * c_hat_bar;
    const Array g_pre_bar = (Scalar(1) - s.g * s.g) * (Scalar(1) - s.z) * c_hat_bar;
    const Array z_bar = (hp - s.g) * c_hat_bar;
    const Array r_bar = s.q_g * g_pre_bar;
    p.head(n) = s.z * (Scalar(1) - s.z) * z_bar;
    p.segment(n, n) = s.r * (Scalar(1) - s.r) * r_bar;
    p.tail(n) = g_pre_bar;
    qbar.head(2 * n) = p.head(2 * n);
    qbar.tail(n) = s.r * g_pre_bar;
  }

 private:
  template <class E>
  static Array sigmoid(const E& a) {
    return (Scalar(1) + (-a).exp()).inverse();
  }
};

}  // namespace egret
