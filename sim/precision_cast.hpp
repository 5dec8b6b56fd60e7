// Moving a run's inputs and results between scalars: a float run reads the same input files and
// writes the same float64 traces as a double one. Narrowing refuses values float cannot hold
// (rather than turning them into infinities); widening is exact.
#pragma once

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "events/input_stream.hpp"
#include "sim/recorder.hpp"

namespace egret {

// Whether To can hold `v` (non-finite values pass: they are refused where they are read).
template <class To, class From>
bool within_range(From v) {
  if constexpr (sizeof(To) < sizeof(From))
    return !std::isfinite(v) || std::abs(v) <= static_cast<From>(std::numeric_limits<To>::max());
  return true;
}

// `v` as To; an error naming `what` if it is finite but beyond To's range.
template <class To, class From>
To narrow_checked(From v, const std::string& what) {
  if (!within_range<To>(v)) {
    std::ostringstream os;
    os << what << ": " << v << " is beyond the range of float (\"precision\": \"double\" runs it)";
    throw std::invalid_argument(os.str());
  }
  return static_cast<To>(v);
}

template <class To, class From>
std::vector<To> cast_values(const std::vector<From>& v, const std::string& what) {
  std::vector<To> out;
  out.reserve(v.size());
  for (const From x : v) out.push_back(narrow_checked<To>(x, what));
  return out;
}

// The stream's events in To (float times keep the order: rounding is monotonic).
template <class To, class From>
InputStream<To> cast_input(const InputStream<From>& in) {
  if constexpr (std::is_same_v<To, From>) {
    return in;
  } else {
    std::vector<InputEvent<To>> events;
    events.reserve(in.size());
    // The event's name is built only for an error: a string per event cost more than the
    // conversion (docs/speed.md, "Symbols hidden").
    for (std::size_t i = 0; i < in.size(); ++i) {
      const auto& e = in.events()[i];
      if (!within_range<To>(e.time) || !within_range<To>(e.value)) {
        const std::string what = "input event " + std::to_string(i);
        narrow_checked<To>(e.time, what + " time");  // one of the two throws
        narrow_checked<To>(e.value, what + " value");
      }
      events.push_back({static_cast<To>(e.time), e.channel, static_cast<To>(e.value)});
    }
    return InputStream<To>(std::move(events), in.channels());
  }
}

template <class To, class From>
TraceEvent<To> cast_event(const TraceEvent<From>& e) {
  return {static_cast<To>(e.time), e.layer, e.unit, static_cast<To>(e.value)};
}

// A float run's result in double, for the writers and printers that work in double.
template <class To, class From>
SimResult<To> cast_result(const SimResult<From>& r) {
  if constexpr (std::is_same_v<To, From>) {
    return r;
  } else {
    SimResult<To> out;
    out.end_time = static_cast<To>(r.end_time);
    out.layers = r.layers;
    out.events_processed = r.events_processed;
    out.trace.reserve(r.trace.size());
    for (const auto& e : r.trace) out.trace.push_back(cast_event<To>(e));
    for (const auto& ro : r.readouts)
      out.readouts.push_back({static_cast<To>(ro.begin), static_cast<To>(ro.time),
                              std::vector<To>(ro.trace.begin(), ro.trace.end()),
                              std::vector<To>(ro.logits.begin(), ro.logits.end())});
    for (const auto& s : r.snapshots) {
      SnapshotRecord<To> c;
      c.time = static_cast<To>(s.time);
      for (const auto& l : s.layers) {
        LayerState<To> st;
        st.primary = l.primary;
        for (const auto& [name, v] : l.variables)
          st.variables.emplace_back(name, std::vector<To>(v.begin(), v.end()));
        c.layers.push_back(std::move(st));
      }
      out.snapshots.push_back(std::move(c));
    }
    return out;
  }
}

// Forwards a From run's events to a sink that takes To (a float run into a float64 trace file).
template <class From, class To>
class CastingTraceSink final : public TraceSink<From> {
 public:
  explicit CastingTraceSink(TraceSink<To>& target) : target_(target) {}
  void on_event(const TraceEvent<From>& e) override { target_.on_event(cast_event<To>(e)); }

 private:
  TraceSink<To>& target_;
};

}  // namespace egret
