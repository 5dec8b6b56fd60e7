// The state regulariser: the EGRU paper's L_act (docs/references.md, Suppl. D.1, Eq. S54), which
// keeps the internal state c of every unit slightly below its threshold. egret reads it as the
// mean over units and time of the excess of c over theta - margin:
//   R = weight / (N T) * sum_(layers l, units i) int_0^T max(0, c_i(t) - (theta_i - margin)) dt
// (continuous time; N: the units of the layers that have the term, T: the run's end), with theta
// in the level detached by default as in the paper (the term then moves c only, not theta). The
// paper's formula is garbled in the text; docs/model.md §7 states this reading and why.
//
// The families compute it in their backward pass, where they replay their state anyway
// (LayerAdjoint::has_state_cost): for the continuous EGRU with the box kernel in closed form per
// interval (BoxEgruCell::excess_integral). Its value is reported with the backward pass
// (BackwardReport::state_cost); a run without gradient does not compute it.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/layer_adjoint.hpp"
#include "sim/network.hpp"

namespace egret {

struct StateRegularizer {
  double weight = 0;  // 0: off; the paper uses 0.05
  double margin = 0.05;
  bool detach_threshold = true;
  bool active() const { return weight > 0; }
};

// Throws (naming `where`) if the regulariser is on but no layer of `net` has the state term:
// checked once where training is configured, before any sample runs.
template <class Scalar>
void check_state_regularizer(const Network<Scalar>& net, const StateRegularizer& reg,
                             const std::string& where) {
  if (!reg.active()) return;
  for (Index l = 0; l < net.size(); ++l) {
    const auto adjoint = net.layer(l).make_adjoint();
    if (adjoint && adjoint->has_state_cost()) return;
  }
  throw std::invalid_argument(where +
                              ": no layer of this network has the state term (continuous_egru "
                              "and discrete_egru have)");
}

// Hands the layers that have the term their share of it; throws if none has.
template <class Scalar>
void set_state_costs(const std::vector<std::unique_ptr<LayerAdjoint<Scalar>>>& adjoints,
                     const Network<Scalar>& net, const StateRegularizer& reg, Scalar end_time) {
  if (!reg.active()) return;
  Index units = 0;
  for (std::size_t l = 0; l < adjoints.size(); ++l)
    if (adjoints[l]->has_state_cost()) units += net.layer(static_cast<Index>(l)).units();
  if (units == 0)
    throw std::invalid_argument(
        "state regularizer: no layer of this network has one (continuous_egru and discrete_egru "
        "have)");
  if (!(end_time > 0))
    throw std::invalid_argument("state regularizer: the run needs an end time > 0");
  StateCost<Scalar> cost;
  cost.weight = static_cast<Scalar>(reg.weight) / (static_cast<Scalar>(units) * end_time);
  cost.margin = static_cast<Scalar>(reg.margin);
  cost.end_time = end_time;
  cost.detach_threshold = reg.detach_threshold;
  for (const auto& a : adjoints)
    if (a->has_state_cost()) a->set_state_cost(cost);
}

}  // namespace egret
