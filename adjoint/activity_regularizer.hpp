// An optional activity regularizer with an exact gradient. Event counts are piecewise constant
// (no gradient), so the activity of unit n is measured by its output trace's integral,
// normalised so that each event counts about one:
//   A_n = (1/T) sum_k (1 - exp(-(T - s_k)/tau_o))        [events per ms; events well before the
//                                                          end T count 1, an event at T counts 0]
// (the integral of o_n over [0, T] divided by theta_n tau_o T; theta_n cancels since y = theta_n).
//   R = weight * mean over all units of all layers of (1000 A_n - target_hz)^2 / target_scale
// with target_scale = max(target_hz, 1)^2 so that `weight` is dimensionless. Its gradient moves
// event times only: dA_n/ds_k = -exp(-(T - s_k)/tau_o) / (tau_o T), plus a tau_o term.
//
// A clocked layer's event times are tick times: they carry no gradient, and continuity in them
// is not needed, so there every event counts 1 (A_n = events / T; a held-output family's output
// trace has no time constant to weigh with). The count is reached through the emitted values
// instead, by a straight-through estimate: each event counts |v_k| / nu_l, with nu_l the mean |v|
// of the layer's events in the sample (held constant), so the value is still the count and
// dA_n/dv_k = sign(v_k) / (nu_l T). For binary spikes (nu = 1) that is the count's surrogate
// gradient; for state changes it shrinks the changes (docs/adjoint.md section 4).
#pragma once

#include <cmath>
#include <vector>

#include "sim/network.hpp"
#include "sim/tape.hpp"

namespace egret {

struct ActivityRegularizer {
  double weight = 0;     // 0: off
  double target_hz = 0;  // events per unit per second
};

// The regularizer's value and dR/dA per layer and unit (what the backward pass needs).
template <class Scalar>
struct ActivityTerm {
  Scalar value = 0;
  Scalar end_time = 0;
  std::vector<std::vector<Scalar>> dR_dA;  // per layer, per unit; empty when off
  std::vector<Scalar> mean_event_size;     // per layer: nu_l (clocked layers; else 0)
  bool active() const { return !dR_dA.empty(); }
};

template <class Scalar>
ActivityTerm<Scalar> activity_term(const Network<Scalar>& net, const Tape<Scalar>& tape,
                                   Scalar end_time, const ActivityRegularizer& reg) {
  ActivityTerm<Scalar> term;
  if (reg.weight <= 0 || !(end_time > 0)) return term;
  term.end_time = end_time;
  std::vector<std::vector<Scalar>> A;
  std::vector<std::size_t> events(static_cast<std::size_t>(net.size()), 0);
  term.mean_event_size.assign(static_cast<std::size_t>(net.size()), Scalar(0));
  std::size_t units = 0;
  for (Index l = 0; l < net.size(); ++l) {
    A.emplace_back(static_cast<std::size_t>(net.layer(l).units()), Scalar(0));
    units += static_cast<std::size_t>(net.layer(l).units());
  }
  for (const auto& st : tape.steps) {
    if (st.kind != EventKind::kInternal) continue;
    const auto l = static_cast<std::size_t>(st.layer);
    const bool clocked = net.layer(st.layer).clocked();
    for (std::int64_t it = st.first_item, end = it + tape.n_items(st); it < end; ++it) {
      const auto& item = tape.items[static_cast<std::size_t>(it)];
      if (item.surrogate) continue;  // not an event
      const Scalar tau_o = net.layer(st.layer).output_time_constant(item.index);
      const Scalar weight =
          clocked ? Scalar(1) : Scalar(1) - std::exp(-(end_time - st.time) / tau_o);
      A[l][static_cast<std::size_t>(item.index)] += weight / end_time;
      term.mean_event_size[l] += std::abs(item.value);
      ++events[l];
    }
  }
  for (std::size_t l = 0; l < events.size(); ++l)
    term.mean_event_size[l] = net.layer(static_cast<Index>(l)).clocked() && events[l] > 0
                                  ? term.mean_event_size[l] / static_cast<Scalar>(events[l])
                                  : Scalar(0);
  const Scalar scale =
      static_cast<Scalar>(std::max(reg.target_hz, 1.0) * std::max(reg.target_hz, 1.0));
  const Scalar w = static_cast<Scalar>(reg.weight) / (static_cast<Scalar>(units) * scale);
  term.dR_dA.resize(A.size());
  for (std::size_t l = 0; l < A.size(); ++l) {
    term.dR_dA[l].resize(A[l].size());
    for (std::size_t n = 0; n < A[l].size(); ++n) {
      const Scalar diff = Scalar(1000) * A[l][n] - static_cast<Scalar>(reg.target_hz);
      term.value += w * diff * diff;
      term.dR_dA[l][n] = w * 2 * diff * Scalar(1000);
    }
  }
  return term;
}

}  // namespace egret
