// Event records and the one deterministic order in which simultaneous events are processed.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

namespace egret {

using Index = std::ptrdiff_t;

// What an event does. The numeric value is the processing priority among events that share a
// time stamp (smaller first):
//  * releases come first, so a contribution held for a window w is active on [s, s + w);
//  * then input events (external, or emitted by the layer below);
//  * then a layer's internal events (threshold crossings, or a discrete layer's tick), so that a
//    crossing at time s sees every input that arrived at s;
//  * readouts and snapshots last: they observe the state after all events at their time.
enum class EventKind : std::uint8_t {
  kInputRelease = 0,      // end of the window holding an input contribution
  kRecurrentRelease = 1,  // end of the window holding a recurrent contribution
  kInput = 2,             // input event (external channel, or unit of the layer below)
  kInternal = 3,          // threshold crossing (continuous) or tick (discrete)
  kReadout = 4,           // sample the output trace
  kSnapshot = 5,          // record the layers' state
};

// One event. `layer` is the layer the event acts on; `index` is the input channel (input and
// input-release events) or the unit (internal and recurrent-release events). `aux` carries the
// sending unit's reset gate r_n(s-) for a recurrent release (the a_z contribution was scaled by
// it), and the readout/snapshot slot for those kinds.
template <class Scalar>
struct Event {
  Scalar time = 0;
  EventKind kind = EventKind::kInput;
  Index layer = 0;
  Index index = 0;
  Scalar value = 0;
  Scalar aux = 0;
  std::uint64_t seq = 0;     // insertion order: the last tie-breaker, for exact duplicates
  std::int64_t source = -1;  // for a release: the tape item it releases (adjoint runs only)
};

// The total order of events: (time, kind, layer, index, seq). Every source of events (input
// stream, scheduled queue, layers' internal events) is merged with this one comparator, so the
// result of a run never depends on insertion order or thread count.
template <class Scalar>
inline bool event_precedes(const Event<Scalar>& a, const Event<Scalar>& b) {
  if (a.time != b.time) return a.time < b.time;
  if (a.kind != b.kind) return a.kind < b.kind;
  if (a.layer != b.layer) return a.layer < b.layer;
  if (a.index != b.index) return a.index < b.index;
  return a.seq < b.seq;
}

template <class Scalar>
constexpr Scalar never() {
  return std::numeric_limits<Scalar>::infinity();
}

inline std::string_view to_string(EventKind kind) {
  switch (kind) {
    case EventKind::kInputRelease:
      return "input_release";
    case EventKind::kRecurrentRelease:
      return "recurrent_release";
    case EventKind::kInput:
      return "input";
    case EventKind::kInternal:
      return "internal";
    case EventKind::kReadout:
      return "readout";
    case EventKind::kSnapshot:
      return "snapshot";
  }
  return "unknown";
}

}  // namespace egret
