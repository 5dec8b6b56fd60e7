// The state of a sparsely connected continuous EGRU layer (ContinuousEgruParams::sparse), kept
// unit by unit so that an event costs its column's connections, not the layer's size.
//
// A dense layer brings every unit to each event's time, because every unit receives every
// event. Here each unit m has its own anchor time t_m, with c_m known at t_m and its gates
// (u_m, z_m) and next crossing time constant since then. An event touches only the units its
// column connects to (a connection: a nonzero weight in any of the three gates, the same rule as
// the operation counts): they receive their weights and are marked. settle() then brings the
// marked units to the event time in closed form (with the gates they had before it) and
// refreshes their gates and crossing times, gathered into contiguous buffers so that the array
// forms of the cell vectorise. The layer's earliest crossing is the head of a short ordered list
// of the earliest units (models/continuous_egru/earliest_crossings.hpp), which a touched unit
// enters or leaves with one comparison.
//
// The result is the dense layer's to rounding: a unit's flow is split at the times it was
// touched instead of at every event of the layer (SparseConnectivity in
// tests/test_adjoint_fd.cpp: events identical, gradients within 1e-12 relative in double).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "models/continuous_egru/box_kernel_cell.hpp"
#include "models/continuous_egru/checkpoint_layout.hpp"
#include "models/continuous_egru/continuous_egru_params.hpp"
#include "models/continuous_egru/earliest_crossings.hpp"
#include "models/continuous_egru/event_columns.hpp"
#include "models/continuous_egru/sparse_connections.hpp"

namespace egret {

template <class Scalar>
class SparseEgruUnits {
 public:
  using Cell = BoxEgruCell<Scalar>;
  using Array = typename Cell::Array;
  using Params = ContinuousEgruParams<Scalar>;

  // A unit's state in one record (one cache line in double): an event's work on a unit reads
  // and writes one place.
  static constexpr std::size_t kRecordFields = 8;
  struct alignas(kRecordFields * sizeof(Scalar)) UnitRecord {
    Scalar a_u, a_r, a_z;  // current pre-activations
    Scalar c, anchor;      // c at the anchor time t_m
    Scalar u, z;           // gates since t_m (settled units)
    Scalar theta;
  };
  static_assert(sizeof(UnitRecord) == kRecordFields * sizeof(Scalar));
  // gather_whole_packets() reads the fields by position in the record.
  static_assert(offsetof(UnitRecord, a_z) == 2 * sizeof(Scalar) &&
                offsetof(UnitRecord, c) == 3 * sizeof(Scalar) &&
                offsetof(UnitRecord, anchor) == 4 * sizeof(Scalar) &&
                offsetof(UnitRecord, theta) == 7 * sizeof(Scalar));
  static constexpr bool kRecordIsOnePacketWide =
      Eigen::internal::packet_traits<Scalar>::size == static_cast<int>(kRecordFields);

  // `connections`: the layer's (SparseEgruConnections::of(p)), shared with its copies.
  SparseEgruUnits(const Params& p, std::shared_ptr<const SparseEgruConnections<Scalar>> connections)
      : connections_(std::move(connections)) {
    if (!connections_) throw std::logic_error("SparseEgruUnits: no connections");
    const Index n = p.units();
    unit_.resize(static_cast<std::size_t>(n));
    for (Array* a : {&gather_c_, &gather_u_, &gather_z_, &gather_dt_, &gather_a_u_, &gather_a_z_,
                     &gather_theta_, &gather_tau_m_, &gather_crossing_})
      a->setZero(Cell::whole_packets(n));
    // Kept apart from the records (one cache line each): the time constants only enter settle().
    tau_m_ = p.tau_m.array();
    shared_tau_m_ = n > 0 && (tau_m_ == tau_m_[0]).all();  // then one Scalar, not gathered
    gather_tau_m_.setOnes();  // lanes past the touched units: finite leftovers, as the others
    status_.assign(static_cast<std::size_t>(n), 0);
    crossing_.setConstant(n, std::numeric_limits<Scalar>::infinity());
    touched_.reserve(static_cast<std::size_t>(n));
    crossing_units_.reserve(EarliestCrossings<Scalar>::kCapacity + 1);
    earliest_.reset();
  }

  // Every unit at t = 0 with its initial state; all of them to be settled. The gates start at
  // 0: the flow of the first settle() has dt = 0 and needs them finite only.
  void reset(const Params& p) {
    for (Index m = 0; m < units(); ++m)
      unit(m) = {p.b_u[m],  p.b_r[m],  p.b_z[m],  p.c_init[m],
                 Scalar(0), Scalar(0), Scalar(0), p.theta[m]};
    now_ = 0;
    crossing_.setConstant(std::numeric_limits<Scalar>::infinity());  // unknown to the list
    earliest_.reset();
    touched_.clear();
    std::fill(status_.begin(), status_.end(), std::uint8_t(0));
    for (Index m = 0; m < units(); ++m) mark(m);
  }

  Index units() const { return static_cast<Index>(unit_.size()); }
  Scalar a_r(Index m) const { return unit(m).a_r; }
  // The gate pre-activations a_u, a_r, a_z of every unit, for snapshots.
  std::array<std::vector<Scalar>, 3> preactivations(Scalar /*t: constant between events*/) const {
    auto field = [&](Scalar UnitRecord::*f) {
      std::vector<Scalar> v(unit_.size());
      for (std::size_t m = 0; m < unit_.size(); ++m) v[m] = unit_[m].*f;
      return v;
    };
    return {field(&UnitRecord::a_u), field(&UnitRecord::a_r), field(&UnitRecord::a_z)};
  }

  // The time of the next event: the touched units of the previous time are settled first, so
  // every unit's gates describe its interval up to t.
  void begin_time(Scalar t, const Params& p) {
    if (t == now_) return;
    settle(p);
    now_ = t;
  }

  // Events' weight columns, in order (each reaches only the units it connects to).
  void add_columns(const EgruColumn<Scalar>* cols, Index n_cols) {
    for (Index k = 0; k < n_cols; ++k) add_column(cols[k]);
  }

  // The event's weight column added to the units it connects to. Their c is brought to now()
  // by settle(), all together: the flow up to now() uses the gates before the event, which
  // settle() has not yet replaced.
  void add_column(const EgruColumn<Scalar>& col) {
    const EgruConnections<Scalar>& conn = col.input ? connections_->input : connections_->recurrent;
    const auto k = static_cast<std::size_t>(col.index);
    const auto* connection = conn.connections.data();
    for (std::int64_t e = conn.start[k]; e < conn.start[k + 1]; ++e) {
      const auto& w = connection[e];
      UnitRecord& r = unit(w.row);
      r.a_u += col.scale_ur * w.u;
      r.a_r += col.scale_ur * w.r;
      r.a_z += col.scale_z * w.z;
      mark(w.row);
    }
  }

  // A unit that crossed at now(): its state restarts from the reset value.
  void reset_unit(Index m) {
    unit(m).c = Cell::reset_state();
    unit(m).anchor = now_;
    mark(m);
  }

  // The gates and next crossing times of the touched units, and the layer's earliest crossing
  // (ties to the smallest unit index). Touched units are all anchored at now().
  void settle(const Params&) {
    const auto k = static_cast<Index>(touched_.size());
    if (k == 0) return;
    gather_touched();
    // c to now() with the gates of the interval before (dt = 0 for a unit that was reset now:
    // c is kept exactly), then the new gates and crossing times. The arrays run over whole SIMD
    // packets: the lanes past k hold finite leftovers and their results are not scattered, and
    // without them Eigen finishes each expression with scalar exp and divisions.
    const Index kp = Cell::whole_packets(k);
    auto c = gather_c_.head(kp), u = gather_u_.head(kp), z = gather_z_.head(kp);
    const auto flow_and_gates = [&](const auto& tau_m) {
      c += (z - c) * (Scalar(1) - Cell::decays(u, gather_dt_.head(kp), tau_m));
      Cell::gates(gather_a_u_.head(kp), gather_a_z_.head(kp), u, z);
      Cell::crossing_time_lower_bounds(c, u, z, gather_theta_.head(kp), tau_m, now_,
                                       gather_crossing_.head(kp));
    };
    if (shared_tau_m_)
      flow_and_gates(tau_m_[0]);
    else
      flow_and_gates(gather_tau_m_.head(kp));
    scatter_touched();
    find_earliest();
  }

  // Requires settle() since the last change.
  // The list's head (no unit below +inf: none will cross).
  Index earliest_unit() const { return earliest_.empty() ? 0 : earliest_.first_unit(); }
  Scalar earliest_time() const {
    return earliest_.empty() ? std::numeric_limits<Scalar>::infinity() : earliest_.first_time();
  }
  // The units whose crossing time is t (the earliest), in increasing index order. Below the
  // list's bound every unit at t is in the list, so only the list is searched. A unit holding a
  // lower bound equal to t may still cross later: its exact time decides.
  void units_crossing_at(Scalar t, const Params&, std::vector<Index>& out) {
    if (t < earliest_.bound()) {
      crossing_units_.clear();
      earliest_.units_at(t, crossing_units_);
      for (Index m : crossing_units_) {
        make_exact(m);
        if (crossing_[m] == t) out.push_back(m);
      }
      return;
    }
    for (Index m = 0; m < units(); ++m) {
      if (crossing_[m] != t) continue;
      make_exact(m);
      if (crossing_[m] == t) out.push_back(m);
    }
  }
  // Every unit's exact next crossing time (for tests and diagnostics: computes the deferred ones).
  const Array& crossing_times(const Params&) {
    for (Index m = 0; m < units(); ++m) make_exact(m);
    return crossing_;
  }

  // c of every unit at time t >= each anchor.
  void state_at(Scalar t, Scalar* c_out) const {
    for (Index m = 0; m < units(); ++m) {
      const UnitRecord& r = unit(m);
      c_out[m] = Cell::flow(r.c, r.u, r.z, t - r.anchor, tau_m_[m]);
    }
  }
  // The dense state [c; a_u; a_z] at now(), for a checkpoint of the tape. Every unit's gates
  // are still those of its interval up to now() (a touched unit's are replaced by settle()).
  void append_state_now(std::vector<Scalar>& out) const {
    const auto n = static_cast<Index>(unit_.size());
    CheckpointLayout::append(out, n, GateKernel::kBox, [&](CheckpointBlock b, Scalar* to) {
      if (b == CheckpointBlock::kC) return state_at(now_, to);
      for (std::size_t m = 0; m < unit_.size(); ++m)
        to[m] = b == CheckpointBlock::kAu ? unit_[m].a_u : unit_[m].a_z;
    });
  }

 private:
  UnitRecord& unit(Index m) { return unit_[static_cast<std::size_t>(m)]; }
  const UnitRecord& unit(Index m) const { return unit_[static_cast<std::size_t>(m)]; }

  // The touched units' state into contiguous buffers, where the flow and gates vectorise.
  void gather_touched() {
    std::size_t i = gather_whole_packets();
    const Index* touched = touched_.data();
    const UnitRecord* units = unit_.data();
    Scalar *gc = gather_c_.data(), *gu = gather_u_.data(), *gz = gather_z_.data();
    Scalar *gdt = gather_dt_.data(), *gau = gather_a_u_.data(), *gaz = gather_a_z_.data();
    Scalar *gth = gather_theta_.data(), *gtau = gather_tau_m_.data();
    const Scalar* tau_m = tau_m_.data();
    const bool gather_tau = !shared_tau_m_;
    for (std::size_t j = 0; j < i && gather_tau; ++j) gtau[j] = tau_m[touched[j]];
    const Scalar now = now_;
    for (; i < touched_.size(); ++i) {
      const UnitRecord& r = units[touched[i]];
      gc[i] = r.c;
      gu[i] = r.u;
      gz[i] = r.z;
      gdt[i] = now - r.anchor;
      gau[i] = r.a_u;
      gaz[i] = r.a_z;
      gth[i] = r.theta;
      if (gather_tau) gtau[i] = tau_m[touched[i]];
    }
  }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
// A packet type as a template argument loses its vector attributes there, harmlessly: GCC warns.
#pragma GCC diagnostic ignored "-Wignored-attributes"
#endif
  // Where a record is as wide as a SIMD packet (8 fields: float with AVX, double with
  // AVX-512), a packet's worth of records is loaded whole and transposed, one record per lane:
  // 15 loads and stores per 8 units instead of 14 per unit (the gather's share of settle() went
  // from 21 % to 17 % in float at N = 1024). Returns how many units it gathered (whole packets
  // only; the rest go field by field).
  std::size_t gather_whole_packets() {
    if constexpr (kRecordIsOnePacketWide) {
      namespace ei = Eigen::internal;
      using Packet = typename ei::packet_traits<Scalar>::type;
      constexpr std::size_t lanes = kRecordFields;
      const Index* touched = touched_.data();
      const UnitRecord* units = unit_.data();
      const Packet now = ei::pset1<Packet>(now_);
      std::size_t i = 0;
      for (; i + lanes <= touched_.size(); i += lanes) {
        ei::PacketBlock<Packet, static_cast<int>(lanes)> block;
        for (std::size_t j = 0; j < lanes; ++j)
          block.packet[j] = ei::pload<Packet>(&units[touched[i + j]].a_u);
        ei::ptranspose(block);  // block.packet[f]: field f of the record, one unit per lane
        ei::pstore(gather_a_u_.data() + i, block.packet[0]);
        ei::pstore(gather_a_z_.data() + i, block.packet[2]);
        ei::pstore(gather_c_.data() + i, block.packet[3]);
        ei::pstore(gather_dt_.data() + i, ei::psub(now, block.packet[4]));
        ei::pstore(gather_u_.data() + i, block.packet[5]);
        ei::pstore(gather_z_.data() + i, block.packet[6]);
        ei::pstore(gather_theta_.data() + i, block.packet[7]);
      }
      return i;
    } else {
      return 0;
    }
  }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  // Back to the units, unmarked, each with its new crossing time or a lower bound of it.
  void scatter_touched() {
    const Index* touched = touched_.data();
    UnitRecord* units = unit_.data();
    Scalar* crossing = crossing_.data();
    const Scalar *gc = gather_c_.data(), *gu = gather_u_.data(), *gz = gather_z_.data();
    const Scalar *gcr = gather_crossing_.data(), *gth = gather_theta_.data();
    std::uint8_t* status = status_.data();
    const Scalar now = now_;
    const std::size_t k = touched_.size();
    // The list is called only for a unit that was or will be below its bound (a few per
    // event); the bound is re-read after each call, which may move it.
    Scalar bound = earliest_.bound();
    for (std::size_t i = 0; i < k; ++i) {
      const Index m = touched[i];
      UnitRecord& r = units[m];
      r.c = gc[i];
      r.anchor = now;
      r.u = gu[i];
      r.z = gz[i];
      const Scalar before = crossing[m], after = gcr[i];
      crossing[m] = after;
      // `&`, not `&&`: the outcome is data-dependent, and a branch on it mispredicts. The
      // kMarked bit is cleared with it.
      const bool deferred = (gc[i] < gth[i]) & (gz[i] > gth[i]);
      status[m] = static_cast<std::uint8_t>(deferred ? 0 : kExact);
      if (before < bound || after < bound) {
        earliest_.update(m, before, after);
        bound = earliest_.bound();
      }
    }
    touched_.clear();
  }

  // Until the list's head holds an exact time: a lower bound there is replaced by its exact
  // time, which moves the unit back.
  void find_earliest() {
    for (;;) {
      if (earliest_.needs_rebuild()) earliest_.rebuild(crossing_.data(), units());
      if (earliest_.empty() || (status_[static_cast<std::size_t>(earliest_.first_unit())] & kExact))
        return;
      make_exact(earliest_.first_unit());
    }
  }
  // The exact crossing time of an unmarked unit from its state at its anchor (the cell's scalar
  // form, BoxEgruCell::time_to_crossing).
  void make_exact(Index m) {
    auto& status = status_[static_cast<std::size_t>(m)];
    if (status & kExact) return;
    const UnitRecord& r = unit(m);
    const Scalar before = crossing_[m];
    crossing_[m] = r.anchor + Cell::time_to_crossing(r.c, r.u, r.z, r.theta, tau_m_[m]);
    status |= kExact;
    earliest_.update(m, before, crossing_[m]);
  }
  void mark(Index m) {
    auto& status = status_[static_cast<std::size_t>(m)];
    if (status & kMarked) return;
    status |= kMarked;
    touched_.push_back(m);
  }

  std::shared_ptr<const SparseEgruConnections<Scalar>> connections_;
  std::vector<UnitRecord> unit_;
  Array crossing_;  // each unit's next crossing time or a lower bound of it (kExact)
  Array tau_m_;     // each unit's state time constant
  bool shared_tau_m_ = false;
  Scalar now_ = 0;
  // Per unit: kMarked, touched since the last settle(); kExact, crossing_[m] is exact, not a
  // lower bound. One byte, so that settle() writes one place per unit.
  static constexpr std::uint8_t kMarked = 1, kExact = 2;
  std::vector<std::uint8_t> status_;
  std::vector<Index> touched_;
  Array gather_c_, gather_dt_, gather_u_, gather_z_, gather_a_u_, gather_a_z_, gather_theta_,
      gather_tau_m_, gather_crossing_;
  EarliestCrossings<Scalar> earliest_;
  std::vector<Index> crossing_units_;  // scratch of units_crossing_at
};

}  // namespace egret
