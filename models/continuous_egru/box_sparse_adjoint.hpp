// The backward side of a sparsely connected continuous EGRU layer (ContinuousEgruParams::sparse,
// box kernel), at the cost of the forward pass: per step, the connections of its columns and the
// units they touch, not the layer's size.
//
// The dense adjoint (box_dense_adjoint.hpp) moves every unit's adjoints across every
// interval of the layer. Here each unit's adjoints move across its own pieces of trajectory
// (box_sparse_replay.hpp): a piece ends at a step that touches the unit and is moved
// back, in one closed-form step, when the backward pass reaches that step. Between the ends of its
// pieces nothing changes a unit's adjoints: no jump reads or writes them, and the flow over
// several intervals with the same gates composes to the flow over their union.
//
// The time adjoints follow the same split. A piece of unit m from step a to step e contributes
// q = lam_c,m(T_e-) u_m (z_m - c_m(T_e-)) / tau_m,m to the time adjoint of e and -q to that of a
// (lam_c (z - c) is constant along the piece); a unit untouched at a step has no term there,
// since its two terms would cancel. A crossing's time depends on the crossing unit's anchor
// (T = T_a + dt*(c_m(T_a+), u_m, z_m)): its time adjoint goes to step a, and its dependence on c
// at the anchor into lam_c,m there. docs/adjoint.md §2 (Sparse layers) derives this from the dense
// adjoint.
#pragma once

#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "models/continuous_egru/box_sparse_replay.hpp"
#include "models/continuous_egru/jump_adjoint.hpp"

namespace egret {

template <class Scalar>
class SparseEgruAdjoint final : public ContinuousEgruJumpAdjoint<Scalar, SparseEgruReplay<Scalar>> {
 public:
  using Base = ContinuousEgruJumpAdjoint<Scalar, SparseEgruReplay<Scalar>>;
  using typename Base::Cell;
  using typename Base::Params;
  using Piece = typename SparseEgruReplay<Scalar>::Piece;

  // `connections`: the layer's (SparseEgruConnections::of its parameters).
  SparseEgruAdjoint(std::shared_ptr<const Params> p,
                    std::shared_ptr<const SparseEgruConnections<Scalar>> connections)
      : Base(std::move(p)) {
    replay_.use_connections(std::move(connections));
  }

  // The state regulariser (adjoint/state_regularizer.hpp) in closed form per piece.
  bool has_state_cost() const override { return true; }

  void begin(const Tape<Scalar>& tape, Index layer) override {
    Base::begin(tape, layer);
    anchor_time_adjoint_.assign(static_cast<std::size_t>(replay_.steps()), Scalar(0));
    input_grad_.assign(replay_.input_connections().connections.size(), WeightGradient{});
    recurrent_grad_.assign(replay_.recurrent_connections().connections.size(), WeightGradient{});
    touched_sum_ = 0;
    if (this->state_cost_.active()) add_final_pieces_cost();
  }

  void finish() override {
    scatter(replay_.input_connections(), input_grad_, *g_.U_u, *g_.U_r, *g_.U_z);
    scatter(replay_.recurrent_connections(), recurrent_grad_, *g_.V_u, *g_.V_r, *g_.V_z);
    // Only connections were written: no absent weight (nor, without self-recurrence, the
    // diagonal of V) has a gradient to clear.
    this->add_initial_state_gradient();
  }

  // The jumps of the dense adjoint (ContinuousEgruJumpAdjoint::jump_adjoint) on the connections
  // only: the receivers' adjoints are complete at the step (their later pieces were moved back
  // when the backward pass met their ends).
  void jump_adjoint(const Tape<Scalar>& tape, const TapeStep<Scalar>& st, Scalar* d_value,
                    Scalar* d_aux) override {
    const TapeItem<Scalar>* items = tape.items_of(st);
    for (std::int64_t k = 0, n = tape.n_items(st); k < n; ++k) {
      const TapeItem<Scalar>& item = items[k];
      const bool applied = item.kind == EventKind::kInput || item.kind == EventKind::kInternal;
      const Scalar sign = applied ? Scalar(1) : Scalar(-1);  // a release removes the contribution
      if (item.kind == EventKind::kInput || item.kind == EventKind::kInputRelease)
        d_value[k] = sign * input_jump(item.index, sign * item.value);
      else
        recurrent_jump(item, sign, d_value[k], d_aux[k]);
    }
  }

  Scalar interval_adjoint(const Tape<Scalar>& tape, const TapeStep<Scalar>& st,
                          Scalar d_time) override {
    const Index i = this->visit_step(st);
    const auto pieces = replay_.pieces_ending_at(i);
    const Scalar later = anchor_time_adjoint_[static_cast<std::size_t>(i)];
    Scalar g = d_time + later;
    const bool crossing = st.kind == EventKind::kInternal;
    const std::int64_t n_items = tape.n_items(st);
    if (crossing && n_items > 1) add_tied_guards(tape.items_of(st), n_items, i, pieces, later);
    const bool cost = this->state_cost_.active();
    if (cost) cost_c0_.clear();
    for (const Piece& pc : pieces) {  // the ends and starts of the pieces move with the steps
      Scalar q = lam_c_[pc.unit] * pc.u * (pc.z - pc.c_end) / p_->tau_m[pc.unit];
      if (cost) q += pc.dt != 0 ? piece_cost(pc) : this->state_cost_rate(pc.unit, pc.c_end);
      g += q;
      if (q != 0) add_to_anchor(pc.anchor, -q);
    }
    Scalar routed = g, lam_c0_extra = 0;
    if (crossing) {  // the (first) crossing unit's piece comes first
      const Piece& pc = *pieces.begin();
      lam_c0_extra = this->crossing_time_adjoint(pc.unit, pc.c_start, pc.u, pc.z, g, n_items);
      add_to_anchor(pc.anchor, g);
      routed = 0;
    }
    move_back(pieces);
    if (crossing) lam_c_[pieces.begin()->unit] += lam_c0_extra;
    touched_sum_ += lam_c0_extra;
    if (cost) add_cost_at_anchors();
    last_time_adjoint_ = g;
    return routed;
  }

  // Only the units this step touched changed: their adjoints' sum is finite exactly when each
  // is (see the base's finite()). A non-finite adjoint is reported at the step where it arises
  // (the dense adjoint reports every later step too: BackwardReport::nonfinite_steps differs,
  // ok() and first_problem do not).
  bool finite() const override { return std::isfinite(last_time_adjoint_ + touched_sum_); }

 private:
  using Base::g_;
  using Base::lam_c_;
  using Base::lam_r_;
  using Base::lam_u_;
  using Base::lam_z_;
  using Base::last_time_adjoint_;
  using Base::p_;
  using Base::replay_;

  // An input x on channel j: the gradient of its weights and the adjoint of x (per unit x).
  Scalar input_jump(Index j, Scalar x) {
    const auto& conn = replay_.input_connections();
    auto* g = input_grad_.data() + conn.start[static_cast<std::size_t>(j)];
    Scalar d = 0;
    for (const auto& w : conn.column(j)) {
      const Index m = w.row;
      const Scalar lu = lam_u_[m], lr = lam_r_[m], lz = lam_z_[m];
      g->u += x * lu;
      g->r += x * lr;
      g->z += x * lz;
      ++g;
      d += w.u * lu + w.r * lr + w.z * lz;
    }
    return d;
  }
  // An emission (or its release) of unit j with value y and reset gate r: the z column is scaled
  // by r y.
  void recurrent_jump(const TapeItem<Scalar>& item, Scalar sign, Scalar& d_value, Scalar& d_aux) {
    const auto& conn = replay_.recurrent_connections();
    const Index j = item.index;
    auto* g = recurrent_grad_.data() + conn.start[static_cast<std::size_t>(j)];
    const Scalar y = sign * item.value, r = item.aux;
    Scalar d_ur = 0, d_z = 0;
    for (const auto& w : conn.column(j)) {
      const Index m = w.row;
      const Scalar lu = lam_u_[m], lr = lam_r_[m], lz = lam_z_[m];
      g->u += y * lu;
      g->r += y * lr;
      g->z += (r * y) * lz;
      ++g;
      d_ur += w.u * lu + w.r * lr;
      d_z += w.z * lz;
    }
    d_value = sign * (d_ur + r * d_z);
    d_aux = sign * item.value * d_z;
  }

  // Units crossing together: the guards of the step's sub-steps after the first
  // (tied_crossings.hpp), the units whose pieces end at the step listed with their state at T-
  // (the others' terms do not change within the step).
  void add_tied_guards(const TapeItem<Scalar>* items, std::int64_t k, Index i,
                       typename SparseEgruReplay<Scalar>::Pieces pieces, Scalar later) {
    const auto [a_u, a_z] = replay_.pre_activations_before(i);
    auto& t = this->tied_;
    t.list(static_cast<Index>(pieces.size()));
    Index q = 0;
    for (const Piece& pc : pieces) {
      t.unit[static_cast<std::size_t>(q)] = pc.unit;
      t.c[q] = double(pc.c_end);
      t.a_u[q] = double(a_u[q]);
      t.a_z[q] = double(a_z[q]);
      t.lam_c[q] = double(lam_c_[pc.unit]);
      ++q;
    }
    this->solve_tied_crossings(items, k, double(later));
    for (std::int64_t s = 1; s < k; ++s) lam_c_[items[s].index] += Scalar(t.guard(s));
  }

  // The state cost over one piece: its value and gate terms (the base's add_state_cost), its
  // partial by c at the anchor kept for after move_back; returns its partial by the piece's
  // length.
  Scalar piece_cost(const Piece& pc) {
    const auto d = Base::add_state_cost(pc.unit, pc.c_start, pc.c_end, pc.u, pc.z, pc.dt);
    if (d.c0 != 0) cost_c0_.push_back({pc.unit, d.c0});
    return d.dt;
  }
  // The kept partials by c at the anchors, once lam_c has been moved back there.
  void add_cost_at_anchors() {
    for (const auto& [m, d] : cost_c0_) {
      lam_c_[m] += d;
      touched_sum_ += d;
    }
  }
  // The pieces after the layer's last step, to the run's end: the first terms of the adjoints
  // (nothing later depends on c) and of their anchors' time adjoints.
  void add_final_pieces_cost() {
    cost_c0_.clear();
    for (const Piece& pc : replay_.pieces_ending_at_end(this->state_cost_.end_time))
      if (pc.dt > 0) add_to_anchor(pc.anchor, -piece_cost(pc));
    add_cost_at_anchors();
  }

  // The gradients kept per connection, in the connections' order (a column's are contiguous,
  // where the N x M matrices would be written at scattered rows), into the named matrices.
  struct WeightGradient {
    Scalar u = 0, r = 0, z = 0;
  };
  static void scatter(const EgruConnections<Scalar>& conn, const std::vector<WeightGradient>& g,
                      Matrix<Scalar>& g_u, Matrix<Scalar>& g_r, Matrix<Scalar>& g_z) {
    for (std::size_t k = 0; k + 1 < conn.start.size(); ++k)
      for (auto e = conn.start[k]; e < conn.start[k + 1]; ++e) {
        const auto row = conn.connections[static_cast<std::size_t>(e)].row;
        const auto col = static_cast<Index>(k);
        g_u(row, col) += g[static_cast<std::size_t>(e)].u;
        g_r(row, col) += g[static_cast<std::size_t>(e)].r;
        g_z(row, col) += g[static_cast<std::size_t>(e)].z;
      }
  }

  // The adjoint of the time of step a (later added to what that step collects); the time 0 of
  // the initial state is no variable.
  void add_to_anchor(Index a, Scalar g) {
    if (a >= 0) anchor_time_adjoint_[static_cast<std::size_t>(a)] += g;
  }

  // Back across each piece (BoxEgruCell::flow_adjoint for one unit, with the replay's decay
  // exp(-u dt / tau_m)): lam_c to the anchor, and the adjoints of the piece's gates. The sums
  // stay in registers: as members they were a chain of loads and stores through memory (a fifth
  // of this function's time).
  void move_back(typename SparseEgruReplay<Scalar>::Pieces pieces) {
    Scalar sum = 0;
    for (const Piece& pc : pieces) {
      const Index m = pc.unit;
      if (pc.dt != 0) {
        const Scalar tau = p_->tau_m[m];
        const Scalar lam_end = lam_c_[m];
        const Scalar gap = lam_end * (pc.z - pc.c_end);
        lam_z_[m] += lam_end * (Scalar(1) - pc.decay) * Cell::candidate_derivative(pc.z);
        lam_u_[m] += gap * (pc.dt / tau) * Cell::sigmoid_derivative(pc.u);
        (*g_.tau_m)(m, 0) -= gap * pc.u * pc.dt / (tau * tau);
        lam_c_[m] = lam_end * pc.decay;
      }
      sum += (lam_c_[m] + lam_u_[m]) + (lam_r_[m] + lam_z_[m]);  // two short chains, not one long
    }
    touched_sum_ = sum;
  }

  // Per step of the layer: the time adjoint that later steps route to it (crossings anchored
  // there, the starts of pieces). Transient, one Scalar per step.
  std::vector<Scalar> anchor_time_adjoint_;
  std::vector<WeightGradient> input_grad_, recurrent_grad_;  // per connection
  Scalar touched_sum_ = 0;                         // of the adjoints the current step changed
  std::vector<std::pair<Index, Scalar>> cost_c0_;  // a step's state-cost terms at the anchors
};

}  // namespace egret
