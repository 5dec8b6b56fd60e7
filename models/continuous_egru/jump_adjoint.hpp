// What the two gate kernels' adjoints of a continuous EGRU layer share (box:
// box_dense_adjoint.hpp, exp: exp_dense_adjoint.hpp): the adjoints of
// (c, a_u, a_r, a_z), the adjoint of every jump (inputs, releases, emissions: they are the same
// for both kernels), the parameter gradient, what happens at t = 0, and the replay of the
// forward states (dense_replay.hpp). The derived classes move the adjoints back
// across the intervals between steps (interval_adjoint).
// docs/adjoint.md derives every line.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "models/continuous_egru/box_kernel_cell.hpp"
#include "models/continuous_egru/continuous_egru_params.hpp"
#include "models/continuous_egru/dense_replay.hpp"
#include "models/continuous_egru/tied_crossings.hpp"
#include "models/shared/column_blocks.hpp"
#include "models/shared/subnormals.hpp"
#include "sim/layer_adjoint.hpp"

namespace egret {

template <class Scalar, class Replay = ContinuousEgruReplay<Scalar>>
class ContinuousEgruJumpAdjoint : public LayerAdjoint<Scalar> {
 public:
  using Params = ContinuousEgruParams<Scalar>;
  using Cell = BoxEgruCell<Scalar>;
  using Array = typename Cell::Array;

  explicit ContinuousEgruJumpAdjoint(std::shared_ptr<const Params> p) : p_(std::move(p)) {}

  // The adjoint state zeroed, the gradient sized, the replay of the forward states prepared.
  void begin(const Tape<Scalar>& tape, Index layer) override {
    const Index n = p_->units();
    for (Array* v : {&lam_c_, &lam_u_, &lam_r_, &lam_z_}) v->setZero(n);
    grad_ = collect_parameter_zeros<Scalar>(*p_);
    g_ = Views(grad_, p_->gate_kernel == GateKernel::kExp);
    pending_time_ = 0;
    state_cost_total_ = 0;
    emissions_.clear();
    emissions_done_ = false;
    replay_.begin(tape, layer, *p_);
    position_ = replay_.steps() - 1;
    input_values_discarded_ = layer == 0 && !this->input_time_adjoints();
  }

  // The items latest first: a merged step of simultaneous inputs (sim/tape.hpp) then adds to the
  // gradient in the order of the separate steps it stands for.
  void jump_adjoint(const Tape<Scalar>& tape, const TapeStep<Scalar>& st, Scalar* d_value,
                    Scalar* d_aux) override {
    const Params& p = *p_;
    flush_nearly_subnormal_adjoints();
    const auto lu = lam_u_.matrix(), lr = lam_r_.matrix(), lz = lam_z_.matrix();
    const TapeItem<Scalar>* items = tape.items_of(st);
    const std::int64_t n_items = tape.n_items(st);
    if (input_values_discarded_ && only_inputs(items, n_items))
      return add_input_weight_gradient(items, n_items);
    for (std::int64_t k = n_items - 1; k >= 0; --k) {
      const TapeItem<Scalar>& item = items[k];
      const Index j = item.index;
      const bool applied = item.kind == EventKind::kInput || item.kind == EventKind::kInternal;
      const Scalar sign = applied ? Scalar(1) : Scalar(-1);  // a release removes the contribution
      if (item.kind == EventKind::kInput || item.kind == EventKind::kInputRelease) {
        const Scalar x = sign * item.value;
        g_.U_u->col(j) += x * lu;
        g_.U_r->col(j) += x * lr;
        g_.U_z->col(j) += x * lz;
        if (!input_values_discarded_)
          d_value[k] = sign * (p.U_u.col(j).dot(lu) + p.U_r.col(j).dot(lr) + p.U_z.col(j).dot(lz));
      } else {
        const Scalar y = sign * item.value, r = item.aux;
        g_.V_u->col(j) += y * lu;
        g_.V_r->col(j) += y * lr;
        g_.V_z->col(j) += (r * y) * lz;
        const Scalar dz = p.V_z.col(j).dot(lz);
        d_value[k] = sign * (p.V_u.col(j).dot(lu) + p.V_r.col(j).dot(lr) + r * dz);
        d_aux[k] = sign * item.value * dz;
      }
    }
  }

  // Adjoints of saturated units (u or r near 0) get near the subnormal range, where their
  // products with the weight columns of every step would pay microcode assists
  // (models/shared/subnormals.hpp): those below 2^-100 (float; 2^-996 in double) are set to 0
  // first. What that drops from a gradient entry is below 2^-100 |x| per step (x the event's
  // value); docs/adjoint.md, "Nearly subnormal adjoints".
  void flush_nearly_subnormal_adjoints() {
    for (Array* lam : {&lam_c_, &lam_u_, &lam_r_, &lam_z_}) flush_nearly_subnormal(*lam);
  }

  // Inputs and input releases only (layer 0's steps in training, merged per time).
  static bool only_inputs(const TapeItem<Scalar>* items, std::int64_t n) {
    return std::all_of(items, items + n, [](const TapeItem<Scalar>& item) {
      return item.kind == EventKind::kInput || item.kind == EventKind::kInputRelease;
    });
  }

  // jump_adjoint's input gradient, U_X.col(j) += x lambda_X for the items latest first, when
  // nobody reads the inputs' value adjoints: lambda stays in registers while the columns pass
  // (models/shared/column_blocks.hpp), each element bitwise the loop's.
  void add_input_weight_gradient(const TapeItem<Scalar>* items, std::int64_t n) {
    const Scalar* const lam[3] = {lam_u_.data(), lam_r_.data(), lam_z_.data()};
    add_to_columns<3>(lam, p_->units(), n, [&](Index k) {
      const TapeItem<Scalar>& item = items[n - 1 - k];
      const Index j = item.index;
      const Scalar sign = item.kind == EventKind::kInput ? Scalar(1) : Scalar(-1);
      return ColumnTargets<Scalar, 3>{
          {g_.U_u->col(j).data(), g_.U_r->col(j).data(), g_.U_z->col(j).data()}, sign * item.value};
    });
  }

  // y = theta_m and aux = r_m(s-) = sigmoid(a_r,m); c_m(s+) = 0 whatever c_m(s-) was. lam_c_m
  // right after the step and the aux's share of lam_r,m are kept for the step's guards
  // (tied_crossings.hpp).
  void emission_adjoint(const TapeItem<Scalar>& item, Scalar d_value, Scalar d_aux) override {
    const Index m = item.index;
    const Scalar from_aux = d_aux * Cell::sigmoid_derivative(item.aux);
    (*g_.theta)(m, 0) += d_value;
    lam_r_[m] += from_aux;
    if (emissions_done_) emissions_.clear();  // the first emission of a newer step
    emissions_done_ = false;
    emissions_.push_back({double(lam_c_[m]), 0.0, double(from_aux)});
    lam_c_[m] = 0;
  }
  void emission_time_adjoint(const TapeItem<Scalar>&, Scalar d_time) override {
    if (emissions_.empty())
      throw std::logic_error("continuous_egru adjoint: an emission's time before the emission");
    emissions_.back().time_adjoint = double(d_time);
  }

  void add_output_time_constant_gradient(Index unit, Scalar d) override {
    (*g_.tau_o)(unit, 0) += d;
  }

  // The state at t = 0, and the gradients of absent weights cleared.
  void finish() override {
    add_initial_state_gradient();
    if (p_->sparse) {
      keep_connections(p_->U_u, p_->U_r, p_->U_z, *g_.U_u, *g_.U_r, *g_.U_z);
      keep_connections(p_->V_u, p_->V_r, p_->V_z, *g_.V_u, *g_.V_r, *g_.V_z);
    }
    // Without self-recurrence the diagonal of V is no connection (ContinuousEgruParams): the
    // jumps above gave it the gradient of a weight the forward pass never applies.
    if (!p_->self_recurrence)
      for (Matrix<Scalar>* g : {g_.V_u, g_.V_r, g_.V_z}) g->diagonal().setZero();
  }

  const NamedParameters<Scalar>& gradient() const override { return grad_; }
  Scalar state_cost_value() const override { return state_cost_total_; }

  // One fused pass: a sum is finite exactly when no term is NaN or infinite (or the terms are so
  // large that it overflows, which is as unusable); allFinite() on four arrays is four passes,
  // and this check runs at every step of training.
  bool finite() const override {
    return std::isfinite(last_time_adjoint_ + (lam_c_ + lam_u_ + lam_r_ + lam_z_).sum());
  }
  void add_to_report(BackwardReport& r) const override {
    r.simultaneous_crossings += simultaneous_;
    r.grazing_crossings += grazing_;
  }

 protected:
  // At t = 0 the pre-activations are the biases and c is c_init: their adjoints are the
  // gradients of the biases and of c_init.
  void add_initial_state_gradient() {
    g_.c_init->col(0) += lam_c_.matrix();
    *g_.b_u += lam_u_.matrix();
    *g_.b_r += lam_r_.matrix();
    *g_.b_z += lam_z_.matrix();
  }

  // The layer's index of `st`, which the sweep visits latest first, and the step before it
  // (nullptr for the first).
  Index visit_step(const TapeStep<Scalar>& st) {
    const Index i = position_--;
    emissions_done_ = true;  // the step's emissions are all in emissions_
    if (i < 0 || &st != &replay_.step(i))
      throw std::logic_error("continuous_egru adjoint: steps out of order");
    return i;
  }
  const TapeStep<Scalar>* previous_step(Index i) const {
    return i > 0 ? &replay_.step(i - 1) : nullptr;
  }

  // Pointers into grad_ by name, resolved once per sweep.
  struct Views {
    Views() = default;
    Views(NamedParameters<Scalar>& g, bool exp_kernel)
        : U_u(&g.at("U_u", kWhere)),
          U_r(&g.at("U_r", kWhere)),
          U_z(&g.at("U_z", kWhere)),
          V_u(&g.at("V_u", kWhere)),
          V_r(&g.at("V_r", kWhere)),
          V_z(&g.at("V_z", kWhere)),
          b_u(&g.at("b_u", kWhere)),
          b_r(&g.at("b_r", kWhere)),
          b_z(&g.at("b_z", kWhere)),
          theta(&g.at("theta", kWhere)),
          c_init(&g.at("c_init", kWhere)),
          tau_m(&g.at("tau_m", kWhere)),
          tau_o(&g.at("tau_o", kWhere)),
          tau_s(exp_kernel ? &g.at("tau_s", kWhere) : nullptr) {}
    Matrix<Scalar>*U_u = nullptr, *U_r = nullptr, *U_z = nullptr;
    Matrix<Scalar>*V_u = nullptr, *V_r = nullptr, *V_z = nullptr;
    Matrix<Scalar>*b_u = nullptr, *b_r = nullptr, *b_z = nullptr, *theta = nullptr;
    Matrix<Scalar>* c_init = nullptr;
    Matrix<Scalar>*tau_m = nullptr, *tau_o = nullptr, *tau_s = nullptr;
  };
  static constexpr const char* kWhere = "continuous_egru adjoint";

  // A sparse layer's gradient covers its connections only (ContinuousEgruParams::sparse): a
  // position with zero weights in all three gates is no connection and gets no gradient.
  static void keep_connections(const Matrix<Scalar>& w_u, const Matrix<Scalar>& w_r,
                               const Matrix<Scalar>& w_z, Matrix<Scalar>& g_u, Matrix<Scalar>& g_r,
                               Matrix<Scalar>& g_z) {
    const auto absent =
        (w_u.array() == Scalar(0) && w_r.array() == Scalar(0) && w_z.array() == Scalar(0));
    for (Matrix<Scalar>* g : {&g_u, &g_r, &g_z}) g->array() = absent.select(Scalar(0), g->array());
  }

  // An interval of length 0 moves nothing; its flow term lam_c . dc/dt only feeds the time
  // adjoints of the steps at its two ends. Between two external inputs whose time adjoints the
  // sweep does not want (training), neither the gates nor the state are needed: a binned input
  // stream is mostly such intervals.
  bool needs_flow(const Tape<Scalar>& tape, const TapeStep<Scalar>& st,
                  const TapeStep<Scalar>* prev) const {
    if (prev == nullptr || st.time != prev->time) return true;
    return !(this->time_adjoint_discarded(tape, st) && this->time_adjoint_discarded(tape, *prev));
  }

  // The crossing time T = T_a + dt*(c0, u, z, theta, tau_m) of unit m, from its state c0 at an
  // earlier step a and its gates u, z since then (the layer's previous step for a dense layer, the
  // last step that touched m for a sparse one): its adjoint g goes to the gates and the
  // parameters here, to the time of step a (by the caller), and to c0 (returned: the extra
  // adjoint of c0). dt* is recomputed from its arguments rather than T - T_a: the difference of
  // two large absolute times would lose digits (in float badly). A crossing at the anchor's own
  // time (c0 at theta: an input or a tied unit's reset at the time the unit reaches theta; c0
  // above it only by rounding) is the limit c0 -> theta of the formula: dt* moves with c0 and
  // theta by -+(tau_m / u) / (z - theta), not with u, z or tau_m (docs/adjoint.md §6). A rate
  // at or below 0 there has no such limit and no partials.
  Scalar crossing_time_adjoint(Index m, Scalar c0, Scalar u, Scalar z, Scalar g,
                               std::int64_t n_crossing) {
    const Params& p = *p_;
    const Scalar tau_m = p.tau_m[m], theta = p.theta[m];
    const Scalar dt_star = Cell::time_to_crossing(c0, u, z, theta, tau_m);
    const auto d = dt_star > 0 ? Cell::crossing_partials(c0, u, z, theta, tau_m, dt_star)
                   : z > theta ? Cell::crossing_partials(theta, u, z, theta, tau_m, Scalar(0))
                               : typename Cell::CrossingPartials{0, 0, 0, 0, 0};
    lam_u_[m] += g * d.u * Cell::sigmoid_derivative(u);
    lam_z_[m] += g * d.z * Cell::candidate_derivative(z);
    (*g_.theta)(m, 0) += g * d.theta;
    (*g_.tau_m)(m, 0) += g * d.tau_m;
    count_crossing(u * (z - p.theta[m]) / tau_m, n_crossing);
    return g * d.c0;
  }

  // The state regulariser over one interval of unit i's flow (box kernel; c from c0 to c_end over
  // dt with the gates u, z): its value, and its partial derivatives into the adjoints of the gates,
  // tau_m, and theta unless detached (BoxEgruCell::excess_integral; docs/adjoint.md §4b). Returns
  // the weighted partials by c0 and by dt, which the caller places: at the interval's start, and
  // into the time adjoints of its two ends.
  struct StateCostPartials {
    Scalar c0 = 0, dt = 0;
  };
  StateCostPartials add_state_cost(Index i, Scalar c0, Scalar c_end, Scalar u, Scalar z,
                                   Scalar dt) {
    const StateCost<Scalar>& cost = this->state_cost_;
    const Scalar level = p_->theta[i] - cost.margin;
    if (c0 <= level && c_end <= level) return {};  // below the level throughout
    const auto g = Cell::excess_integral(c0, c_end, u, z, dt, p_->tau_m[i], level);
    const Scalar w = cost.weight;
    state_cost_total_ += w * g.value;
    lam_u_[i] += w * g.u * Cell::sigmoid_derivative(u);
    lam_z_[i] += w * g.z * Cell::candidate_derivative(z);
    (*g_.tau_m)(i, 0) += w * g.tau_m;
    if (!cost.detach_threshold) (*g_.theta)(i, 0) += w * g.level;
    return {w * g.c0, w * g.dt};
  }

  // The state cost's rate w max(0, c - (theta_i - margin)) of unit i at c: its part of lam . f,
  // which an interval of length 0 adds to the time adjoints at its ends.
  Scalar state_cost_rate(Index i, Scalar c) const {
    const StateCost<Scalar>& cost = this->state_cost_;
    return cost.weight * std::max(Scalar(0), c - (p_->theta[i] - cost.margin));
  }

  // One crossing counted for the report: several units at one time, or a grazing rate.
  void count_crossing(Scalar rate, std::int64_t n_crossing) {
    if (n_crossing > 1) ++simultaneous_;
    if (rate < BackwardReport{}.grazing_rate) ++grazing_;
  }

  // The latest internal step's emissions, as the sweep finished them (emission_adjoint,
  // emission_time_adjoint), in item order; complete once its interval_adjoint has begun.
  std::vector<typename TiedCrossingGuards<Scalar>::Emission> emissions_;
  bool emissions_done_ = false;
  TiedCrossingGuards<Scalar> tied_;

  // Several (k) units crossing in one step: the guards of its sub-steps 1 .. k-1
  // (tied_crossings.hpp) from the listed units the caller filled into tied_ (units, c, a_u, a_z,
  // lam_c at T-) and `later` (what the later steps route to the step's time). The caller adds
  // tied_.guard(s) to lam_c of items[s]'s unit at T-.
  void solve_tied_crossings(
      const TapeItem<Scalar>* items, std::int64_t k, double later,
      const typename TiedCrossingGuards<Scalar>::Relaxation& relaxation = {}) {
    if (static_cast<std::int64_t>(emissions_.size()) != k)
      throw std::logic_error("continuous_egru adjoint: a step's emissions were not all finished");
    tied_.solve(*p_, items, k, emissions_.data(), later, this->state_cost_, relaxation, *g_.theta);
    for (std::int64_t s = 1; s < k; ++s)
      count_crossing(static_cast<Scalar>(tied_.crossing_rate(s)), k);
  }

  std::shared_ptr<const Params> p_;
  Replay replay_;       // the forward states, recomputed
  Index position_ = 0;  // the layer's step being visited (forward index)
  NamedParameters<Scalar> grad_;
  Views g_;
  Array lam_c_, lam_u_, lam_r_, lam_z_;  // adjoints of c, a_u, a_r, a_z (right after the step)
  Scalar pending_time_ = 0;              // adjoint of the time of the layer's previous step
  Scalar last_time_adjoint_ = 0;         // of the last interval, for the finiteness check
  Scalar state_cost_total_ = 0;          // the state regulariser's value so far
  // Layer 0 without input adjoints: an input's value adjoint goes to the input stream, which
  // the sweep then does not report (adjoint/reverse_sweep.hpp), so it is not computed.
  bool input_values_discarded_ = false;
  std::size_t simultaneous_ = 0, grazing_ = 0;
};

}  // namespace egret
