// The generic, event-based backward pass (EventProp-style): it visits the recorded steps in
// reverse and, per step, lets the layer's family (sim/layer_adjoint.hpp) apply the adjoint of
// its jumps, its emissions and its flow, while the sweep itself owns what is common to every
// family:
//  * the adjoint of the last layer's output trace at the readouts (points and windows);
//  * the activity regularizer (adjoint/activity_regularizer.hpp) and the handing out of the state
//    regulariser to the layers that have one (adjoint/state_regularizer.hpp);
//  * the routing of each item's time and value adjoints: a release's to the contribution it
//    ends, an input of layer l + 1's to the emission of layer l, layer 0's to the input stream.
// Weight gradients accumulate at events only. Cost: O(fan-out) per step, like the forward pass;
// memory: the tape. docs/adjoint.md derives every line.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "adjoint/activity_regularizer.hpp"
#include "adjoint/gradient.hpp"
#include "adjoint/state_regularizer.hpp"
#include "sim/network.hpp"
#include "sim/recorder.hpp"
#include "sim/tape.hpp"

namespace egret {

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

namespace detail {

// The adjoint of the last layer's output trace. A loss that depends on o at points t_j (weights
// g_j) and on its mean over windows [a_k, b_k] (density rho_k = g_k / (b_k - a_k)) sees an event
// of unit n at s with value y through (tau_o: unit n's)
//   sum_j g_j y e^{-(t_j - s)/tau_o} + int rho(t) y e^{-(t - s)/tau_o} dt.
// Per unit it carries, backward in time,
//   Lam(s) = sum_{t_j >= s} g_j e^{-(t_j - s)/tau_o} + int_s rho(t) e^{-(t - s)/tau_o} dt,
//   M(s)   = the same with an extra factor (t - s)          (for dL/dtau_o),
// so that dL/dy = Lam(s), dL/ds = y (Lam(s)/tau_o - rho(s)), dL/dtau_o += y M(s)/tau_o^2.
// Between readout boundaries rho is constant and Lam, M move in closed form.
template <class Scalar>
class ReadoutTraceAdjoint {
 public:
  ReadoutTraceAdjoint(const SimResult<Scalar>& forward, const std::vector<std::vector<Scalar>>& d_o,
                      const Layer<Scalar>& layer)
      : forward_(forward), d_o_(d_o), units_(layer.units()) {
    const Index units = units_;
    for (Index n = 0; n < units; ++n) tau_o_.push_back(layer.output_time_constant(n));
    for (std::size_t j = 0; j < forward.readouts.size(); ++j) {
      const auto& r = forward.readouts[j];
      if (static_cast<Index>(d_o[j].size()) != units)
        throw std::invalid_argument("reverse_sweep: dL/do has the wrong size");
      if (r.is_window()) {
        boundaries_.push_back({r.time, 1, j});
        boundaries_.push_back({r.begin, 2, j});
      } else {
        boundaries_.push_back({r.time, 0, j});
      }
    }
    std::stable_sort(boundaries_.begin(), boundaries_.end(),
                     [](const Boundary& a, const Boundary& b) { return a.time > b.time; });
    const auto n = static_cast<std::size_t>(units);
    const Scalar t_start = boundaries_.empty() ? Scalar(0) : boundaries_.front().time;
    lam_.assign(n, 0);
    m_.assign(n, 0);
    rho_.assign(n, 0);
    t_lam_.assign(n, t_start);
  }

  // Takes in the readout boundaries at or after T (point readouts follow events at equal times;
  // window readouts are continuous in the event times, so their order does not matter).
  void pass_boundaries_after(Scalar T) {
    while (next_ < boundaries_.size() && boundaries_[next_].time >= T) {
      const Boundary& b = boundaries_[next_++];
      const auto& r = forward_.readouts[b.readout];
      const Scalar scale = b.kind == 0 ? Scalar(1) : Scalar(1) / (r.time - r.begin);
      for (Index m = 0; m < units_; ++m) {
        const auto k = static_cast<std::size_t>(m);
        bring(k, b.time);
        const Scalar g = d_o_[b.readout][k] * scale;
        if (b.kind == 0) lam_[k] += g;
        if (b.kind == 1) rho_[k] += g;
        if (b.kind == 2) rho_[k] -= g;
      }
    }
  }
  bool any_passed() const { return next_ > 0; }

  // An emission of unit n at T with value y: adds dL/dy, dL/ds; returns dL/dtau_o.
  Scalar emission(Index n, Scalar T, Scalar y, Scalar& d_value, Scalar& d_time) {
    const auto k = static_cast<std::size_t>(n);
    bring(k, T);
    d_value += lam_[k];
    const Scalar tau = tau_o_[k];
    d_time += y * (lam_[k] / tau - rho_[k]);
    return y * m_[k] / (tau * tau);
  }

 private:
  struct Boundary {
    Scalar time;
    int kind;  // 0: point impulse, 1: window end (density starts), 2: window begin (it stops)
    std::size_t readout;
  };
  void bring(std::size_t k, Scalar t) {
    const Scalar delta = t_lam_[k] - t;
    if (delta == 0) return;
    const Scalar tau = tau_o_[k];
    if (std::isinf(tau)) {  // a held trace: no decay; M only serves dL/dtau_o, which is 0
      lam_[k] += rho_[k] * delta;
      t_lam_[k] = t;
      return;
    }
    const Scalar e = std::exp(-delta / tau);
    m_[k] = e * (m_[k] + delta * lam_[k]) + rho_[k] * (tau * tau - e * (tau * tau + tau * delta));
    lam_[k] = e * lam_[k] + rho_[k] * tau * (Scalar(1) - e);
    t_lam_[k] = t;
  }

  const SimResult<Scalar>& forward_;
  const std::vector<std::vector<Scalar>>& d_o_;
  Index units_;
  std::vector<Scalar> tau_o_;  // per unit
  std::vector<Boundary> boundaries_;
  std::size_t next_ = 0;
  std::vector<Scalar> lam_, m_, rho_, t_lam_;
};

// The regularizer's A_m gets (1 - exp(-(T_end - s)/tau_o)) / T_end from an event at s, whose
// gradient moves the event's time; in a clocked layer 1 / T_end, reached through the emitted
// value straight through |v| / nu (adjoint/activity_regularizer.hpp).
template <class Scalar>
void activity_emission(const ActivityTerm<Scalar>& activity, Scalar tau, const TapeStep<Scalar>& st,
                       const TapeItem<Scalar>& item, Scalar& d_time, Scalar& d_value,
                       LayerAdjoint<Scalar>& A) {
  const Scalar T_end = activity.end_time;
  const auto l = static_cast<std::size_t>(st.layer);
  const Scalar c = activity.dR_dA[l][static_cast<std::size_t>(item.index)];
  const Scalar nu = activity.mean_event_size[l];
  if (nu > Scalar(0)) {
    d_value += c * (item.value > Scalar(0) ? Scalar(1) : Scalar(-1)) / (nu * T_end);
    return;
  }
  const Scalar e = std::exp(-(T_end - st.time) / tau);
  d_time -= c * e / (tau * T_end);
  A.add_output_time_constant_gradient(item.index, -c * e * (T_end - st.time) / (tau * tau * T_end));
}

// An input step's time and value belong to the input stream (layer 0) or to the emission of the
// layer below; a release step's time to the contribution it ends. A step of several merged
// inputs or releases (sim/tape.hpp) exists only when their time adjoints are discarded: its
// time adjoint goes to none of them.
template <class Scalar>
void route_step_time(const TapeStep<Scalar>& st, const Tape<Scalar>& tape, Scalar routed,
                     std::vector<Scalar>& g_time, std::vector<Scalar>& g_value,
                     Gradient<Scalar>& grad) {
  const std::int64_t n = tape.n_items(st);
  const Scalar step_time = n == 1 ? routed : Scalar(0);
  for (std::int64_t k = 0; k < n; ++k) {
    const auto ui = static_cast<std::size_t>(st.first_item + k);
    const TapeItem<Scalar>& item = tape.items[ui];
    const auto link = static_cast<std::size_t>(item.link);
    switch (st.kind) {
      case EventKind::kInput: {
        const Scalar total = step_time + g_time[ui];
        if (item.external) {
          if (!grad.input_time.empty()) grad.input_time[link] += total;
          if (!grad.input_value.empty()) grad.input_value[link] += g_value[ui];
        } else {
          g_time[link] += total;
          g_value[link] += g_value[ui];
        }
        break;
      }
      case EventKind::kInputRelease:
      case EventKind::kRecurrentRelease:
        g_time[link] += step_time;
        break;
      default:
        return;
    }
  }
}

// One adjoint per layer, each with its share of the state regulariser and begun on the tape;
// every layer must have a backward pass.
template <class Scalar>
std::vector<std::unique_ptr<LayerAdjoint<Scalar>>> begin_layer_adjoints(
    const Network<Scalar>& net, const Tape<Scalar>& tape, const SimResult<Scalar>& forward,
    bool input_time_adjoints, const StateRegularizer& state) {
  std::vector<std::unique_ptr<LayerAdjoint<Scalar>>> adj;
  for (Index l = 0; l < net.size(); ++l) {
    adj.push_back(net.layer(l).make_adjoint());
    if (!adj.back())
      throw std::invalid_argument("reverse_sweep: layer " + std::to_string(l) + " (" +
                                  net.layer(l).type_name() + ") has no backward pass");
    adj.back()->set_input_time_adjoints(input_time_adjoints);
  }
  set_state_costs(adj, net, state, forward.end_time);
  for (Index l = 0; l < net.size(); ++l) adj[static_cast<std::size_t>(l)]->begin(tape, l);
  return adj;
}

// A step of layer 0's inputs or input releases: its items' values and times are the input
// stream's, and their adjoints end in Gradient::input_value and input_time.
template <class Scalar>
bool input_stream_step(const TapeStep<Scalar>& st) {
  return st.layer == 0 && (st.kind == EventKind::kInput || st.kind == EventKind::kInputRelease);
}

// Step 1's routing: each item's value and aux adjoints from its jump go to the item that carries
// the value (a release to the arrival it releases, anything else to itself).
template <class Scalar>
void route_jump_adjoints(const Tape<Scalar>& tape, const TapeStep<Scalar>& st,
                         const std::vector<Scalar>& d_value, const std::vector<Scalar>& d_aux,
                         std::vector<Scalar>& g_value, std::vector<Scalar>& g_aux) {
  const std::int64_t step_items = tape.n_items(st);
  for (std::int64_t k = 0; k < step_items; ++k) {
    const TapeItem<Scalar>& item = tape.items[static_cast<std::size_t>(st.first_item + k)];
    const bool release =
        item.kind == EventKind::kInputRelease || item.kind == EventKind::kRecurrentRelease;
    const auto target = static_cast<std::size_t>(release ? item.link : st.first_item + k);
    g_value[target] += d_value[static_cast<std::size_t>(k)];
    g_aux[target] += d_aux[static_cast<std::size_t>(k)];
  }
}

// The first problem a sweep meets, for BackwardReport::first_problem.
template <class Scalar>
std::string nonfinite_step_message(std::size_t si, const TapeStep<Scalar>& st) {
  std::ostringstream os;
  os << "non-finite adjoint at step " << si << " (t = " << st.time << " ms, layer " << st.layer
     << ", " << to_string(st.kind) << ")";
  return os.str();
}

}  // namespace detail

// Accumulates into `grad` the gradient of a loss whose direct dependence on the run is through
// the last layer's output trace at the readouts (d_o[j] = dL/d(readout j)) and, optionally,
// through the activity regularizer. Every layer must have a backward pass.
template <class Scalar>
BackwardReport reverse_sweep(const Network<Scalar>& net, const Tape<Scalar>& tape,
                             const SimResult<Scalar>& forward,
                             const std::vector<std::vector<Scalar>>& d_o, Gradient<Scalar>& grad,
                             const ActivityTerm<Scalar>* activity = nullptr,
                             bool input_time_adjoints = true, const StateRegularizer& state = {}) {
  const Index n_layers = net.size();
  if (static_cast<Index>(grad.layers.size()) != n_layers)
    throw std::invalid_argument("reverse_sweep: gradient not sized for the network");
  if (d_o.size() != forward.readouts.size())
    throw std::invalid_argument("reverse_sweep: one dL/do vector per readout expected");
  if (!input_time_adjoints) {  // per-event input adjoints not computed: not reported
    grad.input_time.clear();
    grad.input_value.clear();
  }
  if (input_time_adjoints && tape.merged_inputs)
    throw std::logic_error(
        "reverse_sweep: the tape merged simultaneous inputs, whose time adjoints were asked for "
        "(SimOptions::tape_merge_simultaneous_inputs)");
  const auto adj = detail::begin_layer_adjoints(net, tape, forward, input_time_adjoints, state);
  const Index last = n_layers - 1;
  detail::ReadoutTraceAdjoint<Scalar> trace(forward, d_o, net.layer(last));

  // Adjoints of each item's time, value and aux, filled by the later events that used them and
  // consumed when the item's own step is reached.
  const std::size_t n_items = tape.items.size();
  std::vector<Scalar> g_time(n_items, 0), g_value(n_items, 0), g_aux(n_items, 0);
  std::vector<Scalar> d_value, d_aux;
  BackwardReport report;

  for (std::size_t si = tape.steps.size(); si-- > 0;) {
    const TapeStep<Scalar>& st = tape.steps[si];
    const std::int64_t step_items = tape.n_items(st);
    LayerAdjoint<Scalar>& A = *adj[static_cast<std::size_t>(st.layer)];
    ++report.steps;
    trace.pass_boundaries_after(st.time);

    // 1. The jumps; each item's value adjoint goes to the item that carries the value. Layer
    // 0's inputs and input releases carry values of the input stream, whose adjoints go nowhere
    // else than the per-event input gradient: without it (training) they are not routed.
    d_value.assign(static_cast<std::size_t>(step_items), 0);
    d_aux.assign(static_cast<std::size_t>(step_items), 0);
    A.jump_adjoint(tape, st, d_value.data(), d_aux.data());
    const bool routed_items = input_time_adjoints || !detail::input_stream_step(st);
    if (routed_items) detail::route_jump_adjoints(tape, st, d_value, d_aux, g_value, g_aux);

    // 2. Emissions: everything that used them has been visited; finish their adjoints.
    Scalar d_time = 0;
    if (st.kind == EventKind::kInternal) {
      for (std::int64_t it = st.first_item; it < st.first_item + step_items; ++it) {
        const TapeItem<Scalar>& item = tape.items[static_cast<std::size_t>(it)];
        const auto ui = static_cast<std::size_t>(it);
        if (st.layer == last && trace.any_passed())
          A.add_output_time_constant_gradient(
              item.index, trace.emission(item.index, st.time, item.value, g_value[ui], g_time[ui]));
        if (activity && activity->active() && !item.surrogate)
          detail::activity_emission(*activity, net.layer(st.layer).output_time_constant(item.index),
                                    st, item, g_time[ui], g_value[ui], A);
        A.emission_adjoint(item, g_value[ui], g_aux[ui]);
        A.emission_time_adjoint(item, g_time[ui]);
        d_time += g_time[ui];
      }
    }

    // 3. The interval before the step, and the routing of the step time's adjoint.
    const Scalar routed = A.interval_adjoint(tape, st, d_time);
    if (routed_items) detail::route_step_time(st, tape, routed, g_time, g_value, grad);

    if ((!std::isfinite(routed) || !A.finite()) && report.nonfinite_steps++ == 0)
      report.first_problem = detail::nonfinite_step_message(si, st);
  }

  for (Index l = 0; l < n_layers; ++l) {
    LayerAdjoint<Scalar>& A = *adj[static_cast<std::size_t>(l)];
    A.finish();
    grad.layers[static_cast<std::size_t>(l)] += A.gradient();
    A.add_to_report(report);
    report.state_cost += static_cast<double>(A.state_cost_value());
  }
  return report;
}

}  // namespace egret
