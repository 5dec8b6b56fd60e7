// The few earliest crossing times of a layer's units, in order, and a bound: every unit whose
// time is below the bound is in the list, every other unit's time is at or above it. The head
// is then the layer's earliest crossing (ties to the smallest unit index) without looking at
// the other units.
//
// Why: in a sparsely connected layer an event changes the times of a tenth of the units, and
// after a crossing the earliest unit's own time moves. A pass over all N times for the new
// earliest after every crossing cost more than the event's own work; a priority structure kept
// exact for every touched unit cost more still (a tournament tree took a third of the event's
// time). The list costs one comparison per touched unit, a few shifts when one enters, and one
// pass over all units each time it runs empty (after about as many crossings as it holds).
#pragma once

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

#include "events/event.hpp"

namespace egret {

template <class Scalar>
class EarliestCrossings {
 public:
  // Every unit's time unknown (+inf to the list): the list is empty and its bound +inf until
  // rebuilt or updated for every unit. A unit is listed exactly when its time is below the
  // bound, so the list keeps no per-unit flag: the caller's old time says whether to look.
  void reset() {
    list_.clear();
    list_.reserve(kCapacity + 1);
    bound_ = std::numeric_limits<Scalar>::infinity();
  }

  // Unit m's time moves from old_time (the last time the list was given for m, +inf if none
  // since reset) to new_time. A NaN time is never listed: such a unit never crosses.
  void update(Index m, Scalar old_time, Scalar new_time) {
    if (old_time < bound_) erase(m);
    if (new_time < bound_) insert(m, new_time);
  }

  // The list lost every unit below a finite bound: only a pass over all times can say which
  // comes first. An empty list under an infinite bound means no unit will cross.
  bool needs_rebuild() const {
    return list_.empty() && bound_ != std::numeric_limits<Scalar>::infinity();
  }
  void rebuild(const Scalar* times, Index units) {
    list_.clear();
    bound_ = std::numeric_limits<Scalar>::infinity();
    for (Index m = 0; m < units; ++m)
      if (times[m] < bound_) insert(m, times[m]);
  }

  bool empty() const { return list_.empty(); }
  std::size_t size() const { return list_.size(); }
  Index first_unit() const { return list_.front().unit; }
  Scalar first_time() const { return list_.front().time; }
  Scalar bound() const { return bound_; }
  // The listed units whose time is t, in increasing index order.
  void units_at(Scalar t, std::vector<Index>& out) const {
    for (const Entry& e : list_) {
      if (e.time > t) break;
      if (e.time == t) out.push_back(e.unit);
    }
  }

  // How many units the list keeps before it drops its latest (more only when they tie).
  static constexpr std::size_t kCapacity = 16;

 private:
  struct Entry {
    Scalar time;
    Index unit;
    bool operator<(const Entry& o) const {
      return time < o.time || (time == o.time && unit < o.unit);
    }
  };

  void insert(Index m, Scalar time) {
    const Entry e{time, m};
    list_.insert(std::upper_bound(list_.begin(), list_.end(), e), e);
    if (list_.size() > kCapacity) drop_latest();
  }
  void erase(Index m) {
    const auto it =
        std::find_if(list_.begin(), list_.end(), [m](const Entry& e) { return e.unit == m; });
    if (it == list_.end())
      throw std::logic_error("EarliestCrossings: a unit below the bound is not listed");
    list_.erase(it);
  }
  // The entries at the latest time leave and that time becomes the bound, unless every entry
  // has it: the list must keep a unit while any is below the bound.
  void drop_latest() {
    const Scalar latest = list_.back().time;
    if (list_.front().time == latest) return;
    while (list_.back().time == latest) list_.pop_back();
    bound_ = latest;
  }

  std::vector<Entry> list_;  // sorted by (time, unit)
  Scalar bound_ = std::numeric_limits<Scalar>::infinity();
};

}  // namespace egret
