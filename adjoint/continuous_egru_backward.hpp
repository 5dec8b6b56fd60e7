// The exact, event-based backward pass for networks of continuous-time EGRU layers (box
// kernel). It visits the recorded steps in reverse, carries per layer the adjoints of
// (c, a_u, a_r, a_z), moves them across each inter-event interval in closed form
// (BoxEgruCell::flow_adjoint), applies the adjoint of every jump, and routes the adjoint of every
// event time to whatever determined it: the closed-form crossing time of the previous step (for
// crossings), the source event (releases, inputs of layer l + 1), or the input stream (external
// inputs). Weight gradients accumulate at events only. Cost: O(fan-out) per step, like the
// forward pass; memory: the tape. docs/adjoint.md derives every line.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "adjoint/activity_regularizer.hpp"
#include "adjoint/gradient.hpp"
#include "adjoint/tape.hpp"
#include "models/box_egru_cell.hpp"
#include "models/continuous_egru_layer.hpp"
#include "sim/network.hpp"
#include "sim/recorder.hpp"

namespace egret {

// A gradient sized for `net` and `input_events`, all zero.
template <class Scalar>
Gradient<Scalar> zero_gradient(const Network<Scalar>& net, std::size_t input_events) {
  Gradient<Scalar> g;
  for (Index l = 0; l < net.size(); ++l) {
    g.layers.emplace_back();
    g.layers.back().set_zero(net.layer(l).units(), net.layer(l).inputs());
  }
  if (const auto* ro = net.readout()) {
    g.W_o.setZero(ro->W_o.rows(), ro->W_o.cols());
    g.b_o.setZero(ro->b_o.size());
  }
  g.input_time.assign(input_events, 0);
  g.input_value.assign(input_events, 0);
  return g;
}

// The readout's part: logits_j = W_o o(t_j) + b_o. Accumulates dW_o, db_o and returns
// dL/do(t_j) = W_o^T dL/dlogits_j for every readout.
template <class Scalar>
std::vector<std::vector<Scalar>> readout_backward(const Network<Scalar>& net,
                                                  const SimResult<Scalar>& forward,
                                                  const std::vector<std::vector<Scalar>>& dlogits,
                                                  Gradient<Scalar>& grad) {
  const auto* ro = net.readout();
  if (!ro) throw std::invalid_argument("readout_backward: the network has no readout");
  if (dlogits.size() != forward.readouts.size())
    throw std::invalid_argument("readout_backward: one dL/dlogits vector per readout expected");
  std::vector<std::vector<Scalar>> d_o(dlogits.size());
  for (std::size_t j = 0; j < dlogits.size(); ++j) {
    if (static_cast<Index>(dlogits[j].size()) != ro->classes())
      throw std::invalid_argument("readout_backward: dL/dlogits has the wrong size");
    const Eigen::Map<const Vector<Scalar>> g(dlogits[j].data(), ro->classes());
    const Eigen::Map<const Vector<Scalar>> o(forward.readouts[j].trace.data(), ro->W_o.cols());
    grad.W_o.noalias() += g * o.transpose();
    grad.b_o += g;
    const Vector<Scalar> back = ro->W_o.transpose() * g;
    d_o[j].assign(back.data(), back.data() + back.size());
  }
  return d_o;
}

// Accumulates into `grad` the gradient of a loss whose direct dependence on the run is through
// the last layer's output trace at the readouts (d_o[j] = dL/d(readout j)) and, optionally,
// through the activity regularizer (adjoint/activity_regularizer.hpp).
template <class Scalar>
BackwardReport continuous_egru_backward(const Network<Scalar>& net, const Tape<Scalar>& tape,
                                        const SimResult<Scalar>& forward,
                                        const std::vector<std::vector<Scalar>>& d_o,
                                        Gradient<Scalar>& grad,
                                        const ActivityTerm<Scalar>* activity = nullptr) {
  using Cell = BoxEgruCell<Scalar>;
  using Array = typename Cell::Array;
  using P = ContinuousEgruParams<Scalar>;
  const Index n_layers = net.size();
  if (static_cast<Index>(grad.layers.size()) != n_layers)
    throw std::invalid_argument("continuous_egru_backward: gradient not sized for the network");
  if (d_o.size() != forward.readouts.size())
    throw std::invalid_argument("continuous_egru_backward: one dL/do vector per readout expected");

  struct LayerAdjoint {
    const P* p = nullptr;
    Index n = 0;
    Array lam_c, lam_u, lam_r, lam_z;  // adjoints of c, a_u, a_r, a_z (right after the step)
    Array a_u, a_r, a_z;               // pre-activations, replayed backward from the end
    Scalar pending_time = 0;           // adjoint of the time of the layer's previous step
  };
  std::vector<LayerAdjoint> adj(static_cast<std::size_t>(n_layers));
  for (Index l = 0; l < n_layers; ++l) {
    const auto* layer = dynamic_cast<const ContinuousEgruLayer<Scalar>*>(&net.layer(l));
    if (!layer)
      throw std::invalid_argument("continuous_egru_backward: layer " + std::to_string(l) + " (" +
                                  net.layer(l).type_name() + ") is not a continuous EGRU layer");
    LayerAdjoint& A = adj[static_cast<std::size_t>(l)];
    A.p = &layer->params();
    A.n = layer->units();
    for (Array* v : {&A.lam_c, &A.lam_u, &A.lam_r, &A.lam_z}) v->setZero(A.n);
    const auto& fin = tape.final_preactivations[static_cast<std::size_t>(l)];
    if (static_cast<Index>(fin.size()) != 3 * A.n)
      throw std::invalid_argument("continuous_egru_backward: tape does not match the network");
    A.a_u = Eigen::Map<const Array>(fin.data(), A.n);
    A.a_r = Eigen::Map<const Array>(fin.data() + A.n, A.n);
    A.a_z = Eigen::Map<const Array>(fin.data() + 2 * A.n, A.n);
  }

  // Adjoints of each item's time, value and (emissions) reset gate, filled by the later events
  // that used them and consumed when the item's own step is reached.
  const std::size_t n_items = tape.items.size();
  std::vector<Scalar> g_time(n_items, 0), g_value(n_items, 0), g_r(n_items, 0);

  // Output trace of the last layer. A loss that depends on o at points t_j (weights g_j) and on
  // its mean over windows [a_k, b_k] (density rho_k = g_k / (b_k - a_k)) sees an event of unit n
  // at s with value y through  sum_j g_j y e^{-(t_j - s)/tau_o} + int rho(t) y e^{-(t - s)/tau_o}.
  // Per unit we carry, backward in time,
  //   Lam(s) = sum_{t_j >= s} g_j e^{-(t_j - s)/tau_o} + int_s rho(t) e^{-(t - s)/tau_o} dt,
  //   M(s)   = the same with an extra factor (t - s)          (for dL/dtau_o),
  // so that dL/dy = Lam(s), dL/ds = y (Lam(s)/tau_o - rho(s)), dL/dtau_o += y M(s)/tau_o^2.
  // Between readout boundaries rho is constant and Lam, M move in closed form.
  const Index last = n_layers - 1;
  const Scalar tau_o = adj[static_cast<std::size_t>(last)].p->tau_o;
  const Index n_last = adj[static_cast<std::size_t>(last)].n;
  struct Boundary {
    Scalar time;
    int kind;  // 0: point impulse, 1: window end (density starts), 2: window begin (it stops)
    std::size_t readout;
  };
  std::vector<Boundary> boundaries;
  for (std::size_t j = 0; j < forward.readouts.size(); ++j) {
    const auto& r = forward.readouts[j];
    if (static_cast<Index>(d_o[j].size()) != n_last)
      throw std::invalid_argument("continuous_egru_backward: dL/do has the wrong size");
    if (r.is_window()) {
      boundaries.push_back({r.time, 1, j});
      boundaries.push_back({r.begin, 2, j});
    } else {
      boundaries.push_back({r.time, 0, j});
    }
  }
  std::stable_sort(boundaries.begin(), boundaries.end(),
                   [](const Boundary& a, const Boundary& b) { return a.time > b.time; });
  const std::size_t nl = static_cast<std::size_t>(n_last);
  const Scalar t_start = boundaries.empty() ? Scalar(0) : boundaries.front().time;
  std::vector<Scalar> Lam(nl, 0), M(nl, 0), rho(nl, 0), t_lam(nl, t_start);
  auto bring = [&](Index n, Scalar t) {
    const auto k = static_cast<std::size_t>(n);
    const Scalar delta = t_lam[k] - t;
    if (delta == 0) return;
    const Scalar e = std::exp(-delta / tau_o);
    M[k] = e * (M[k] + delta * Lam[k]) +
           rho[k] * (tau_o * tau_o - e * (tau_o * tau_o + tau_o * delta));
    Lam[k] = e * Lam[k] + rho[k] * tau_o * (Scalar(1) - e);
    t_lam[k] = t;
  };
  std::size_t next_boundary = 0;

  BackwardReport report;
  Array u, z, c_minus, lam_u_gate, lam_z_gate, lam_c0;

  for (std::size_t si = tape.steps.size(); si-- > 0;) {
    const TapeStep<Scalar>& st = tape.steps[si];
    LayerAdjoint& A = adj[static_cast<std::size_t>(st.layer)];
    LayerGradient<Scalar>& G = grad.layers[static_cast<std::size_t>(st.layer)];
    const P& p = *A.p;
    const Index n = A.n;
    const Scalar T = st.time;
    const Scalar T_prev = st.prev >= 0 ? tape.steps[static_cast<std::size_t>(st.prev)].time : 0;
    ++report.steps;

    // Readout boundaries at or after T (point readouts follow events at equal times; window
    // readouts are continuous in the event times, so their order does not matter).
    while (next_boundary < boundaries.size() && boundaries[next_boundary].time >= T) {
      const Boundary& b = boundaries[next_boundary++];
      const auto& r = forward.readouts[b.readout];
      const Scalar scale = b.kind == 0 ? Scalar(1) : Scalar(1) / (r.time - r.begin);
      for (Index m = 0; m < n_last; ++m) {
        const auto k = static_cast<std::size_t>(m);
        bring(m, b.time);
        const Scalar g = d_o[b.readout][k] * scale;
        if (b.kind == 0) Lam[k] += g;
        if (b.kind == 1) rho[k] += g;
        if (b.kind == 2) rho[k] -= g;
      }
    }

    // (1) Adjoint of the jumps, with lam = adjoint right after the step; replay a to before it.
    const auto lu = A.lam_u.matrix(), lr = A.lam_r.matrix(), lz = A.lam_z.matrix();
    for (std::int64_t it = st.first_item; it < st.first_item + st.n_items; ++it) {
      const TapeItem<Scalar>& item = tape.items[static_cast<std::size_t>(it)];
      const auto ui = static_cast<std::size_t>(it);
      const Index k = item.index;
      switch (item.kind) {
        case EventKind::kInput:
        case EventKind::kInputRelease: {
          const Scalar x = item.kind == EventKind::kInput ? item.value : -item.value;
          G.U_u.col(k) += x * lu;
          G.U_r.col(k) += x * lr;
          G.U_z.col(k) += x * lz;
          const Scalar dot = p.U_u.col(k).dot(lu) + p.U_r.col(k).dot(lr) + p.U_z.col(k).dot(lz);
          if (item.kind == EventKind::kInput)
            g_value[ui] += dot;
          else
            g_value[static_cast<std::size_t>(item.source)] -= dot;
          A.a_u -= x * p.U_u.col(k).array();
          A.a_r -= x * p.U_r.col(k).array();
          A.a_z -= x * p.U_z.col(k).array();
          break;
        }
        case EventKind::kInternal:
        case EventKind::kRecurrentRelease: {
          const Scalar sign = item.kind == EventKind::kInternal ? Scalar(1) : Scalar(-1);
          const Scalar y = sign * item.value, r = item.aux;
          G.V_u.col(k) += y * lu;
          G.V_r.col(k) += y * lr;
          G.V_z.col(k) += (r * y) * lz;
          const Scalar dz = p.V_z.col(k).dot(lz);
          const Scalar dot = p.V_u.col(k).dot(lu) + p.V_r.col(k).dot(lr) + r * dz;
          const std::size_t target =
              item.kind == EventKind::kInternal ? ui : static_cast<std::size_t>(item.source);
          g_value[target] += sign * dot;
          g_r[target] += sign * item.value * dz;
          A.a_u -= y * p.V_u.col(k).array();
          A.a_r -= y * p.V_r.col(k).array();
          A.a_z -= (r * y) * p.V_z.col(k).array();
          break;
        }
        default:
          throw std::logic_error("continuous_egru_backward: unexpected item kind on the tape");
      }
    }

    // (2) Emissions: everything that used them has been visited; finish their adjoints.
    Scalar g_step = A.pending_time;
    if (st.kind == EventKind::kInternal) {
      for (std::int64_t it = st.first_item; it < st.first_item + st.n_items; ++it) {
        const TapeItem<Scalar>& item = tape.items[static_cast<std::size_t>(it)];
        const auto ui = static_cast<std::size_t>(it);
        const Index m = item.index;
        if (st.layer == last && next_boundary > 0) {
          bring(m, T);
          const auto k = static_cast<std::size_t>(m);
          g_value[ui] += Lam[k];
          g_time[ui] += item.value * (Lam[k] / tau_o - rho[k]);
          G.tau_o += item.value * M[k] / (tau_o * tau_o);
        }
        if (activity && activity->active()) {
          // A_m gets (1 - exp(-(T_end - s)/tau_o)) / T_end from this event.
          const Scalar tau = p.tau_o, T_end = activity->end_time;
          const Scalar e = std::exp(-(T_end - T) / tau);
          const Scalar c =
              activity->dR_dA[static_cast<std::size_t>(st.layer)][static_cast<std::size_t>(m)];
          g_time[ui] -= c * e / (tau * T_end);
          G.tau_o -= c * e * (T_end - T) / (tau * tau * T_end);
        }
        G.theta[m] += g_value[ui];  // y = theta_m
        A.lam_r[m] += g_r[ui] * Cell::sigmoid_derivative(item.aux);
        A.lam_c[m] = 0;  // c(s+) = 0 whatever c(s-) was
        g_step += g_time[ui];
      }
    }

    // (3) The interval before the step: gates from a(s-), c at its end recomputed from the tape.
    Cell::gates(A.a_u, A.a_z, u, z);
    if (st.prev >= 0) {
      c_minus = Eigen::Map<const Array>(tape.states[static_cast<std::size_t>(st.layer)].data() +
                                            tape.steps[static_cast<std::size_t>(st.prev)].state,
                                        n);
    } else {
      c_minus = p.c_init.array();
    }
    const Scalar c0_first = st.kind == EventKind::kInternal
                                ? c_minus[tape.items[static_cast<std::size_t>(st.first_item)].index]
                                : Scalar(0);
    const Scalar dt = T - T_prev;
    Cell::advance(c_minus, u, z, dt, p.tau_m);
    // The end of the interval moves with T: dL/dT gets lam_c . dc/dt there.
    const Scalar flow_term = (A.lam_c * u * (z - c_minus)).sum() / p.tau_m;
    g_step += flow_term;

    // (4) Route the adjoint of this step's time to what set it.
    Scalar to_previous = 0;
    Scalar lam_c0_extra = 0;
    Index crossing_unit = -1;
    switch (st.kind) {
      case EventKind::kInput: {
        const auto ui = static_cast<std::size_t>(st.first_item);
        const TapeItem<Scalar>& item = tape.items[ui];
        const Scalar total = g_step + g_time[ui];
        if (item.external >= 0) {
          grad.input_time[static_cast<std::size_t>(item.external)] += total;
          grad.input_value[static_cast<std::size_t>(item.external)] += g_value[ui];
        } else {
          g_time[static_cast<std::size_t>(item.source)] += total;
          g_value[static_cast<std::size_t>(item.source)] += g_value[ui];
        }
        break;
      }
      case EventKind::kInputRelease:
      case EventKind::kRecurrentRelease:
        g_time[static_cast<std::size_t>(
            tape.items[static_cast<std::size_t>(st.first_item)].source)] += g_step;
        break;
      case EventKind::kInternal: {
        // T = T_prev + dt*(c0, u, z, theta, tau_m) of the (first) crossing unit.
        crossing_unit = tape.items[static_cast<std::size_t>(st.first_item)].index;
        const Index m = crossing_unit;
        // dt* recomputed from its arguments rather than T - T_prev: the difference of two large
        // absolute times would lose digits (in float badly). A crossing the forward pass fired at
        // once because rounding left c0 >= theta has no dependence on the state (dt* = 0).
        const Scalar dt_star = Cell::time_to_crossing(c0_first, u[m], z[m], p.theta[m], p.tau_m);
        const auto d = dt_star > 0 ? Cell::crossing_partials(c0_first, u[m], z[m], p.theta[m],
                                                             p.tau_m, dt_star)
                                   : typename Cell::CrossingPartials{0, 0, 0, 0, 0};
        lam_c0_extra = g_step * d.c0;
        A.lam_u[m] += g_step * d.u * Cell::sigmoid_derivative(u[m]);
        A.lam_z[m] += g_step * d.z * Cell::candidate_derivative(z[m]);
        G.theta[m] += g_step * d.theta;
        G.tau_m += g_step * d.tau_m;
        to_previous = g_step;
        if (st.n_items > 1) ++report.simultaneous_crossings;
        if (u[m] * (z[m] - p.theta[m]) / p.tau_m < report.grazing_rate) ++report.grazing_crossings;
        break;
      }
      default:
        throw std::logic_error("continuous_egru_backward: unexpected step kind on the tape");
    }

    // (5) Back across the interval: lam(start) from lam(end) in closed form.
    lam_u_gate.setZero(n);
    lam_z_gate.setZero(n);
    Cell::flow_adjoint(A.lam_c, c_minus, u, z, dt, p.tau_m, lam_c0, lam_u_gate, lam_z_gate,
                       G.tau_m);
    A.lam_u += lam_u_gate * u * (Scalar(1) - u);
    A.lam_z += lam_z_gate * (Scalar(1) - z * z);
    A.lam_c = lam_c0;
    if (crossing_unit >= 0) A.lam_c[crossing_unit] += lam_c0_extra;
    // The start of the interval moves with T_prev.
    A.pending_time = st.prev >= 0 ? to_previous - flow_term : Scalar(0);

    if (!std::isfinite(g_step) || !std::isfinite(flow_term) || !A.lam_c.allFinite() ||
        !A.lam_u.allFinite() || !A.lam_z.allFinite() || !A.lam_r.allFinite()) {
      if (report.nonfinite_steps++ == 0) {
        std::ostringstream os;
        os << "non-finite adjoint at step " << si << " (t = " << T << " ms, layer " << st.layer
           << ", " << to_string(st.kind) << ")";
        report.first_problem = os.str();
      }
    }
  }

  // At t = 0 the pre-activations are the biases: their adjoints are the bias gradients.
  for (Index l = 0; l < n_layers; ++l) {
    const LayerAdjoint& A = adj[static_cast<std::size_t>(l)];
    LayerGradient<Scalar>& G = grad.layers[static_cast<std::size_t>(l)];
    G.b_u += A.lam_u.matrix();
    G.b_r += A.lam_r.matrix();
    G.b_z += A.lam_z.matrix();
  }
  return report;
}

}  // namespace egret
