// An input stream held in windows, as the changes of each channel's window sum. A layer whose
// external inputs are held for a window W (an input x on channel j at t adds x U_j to the
// pre-activations on [t, t + W), docs/model.md §1) sees, per channel, a sum that changes only at
// the inputs' times and at their ends t + W. Where an input starts at the time another input of
// the same channel ends (a binned stream whose window is a whole number of bins: 68 % of the
// inputs of a busy recording, docs/speed.md), the two events are one change of the sum,
// x_new - x_old, and where the values are equal no change at all. That is the model's own
// definition, not an approximation: the pre-activations are the same sums in exact arithmetic;
// in floating point one rounding (the difference) replaces two (the two columns' products).
//
// Each change keeps what it stands for (the starting and ending inputs, their values and stream
// indices) so that the counts, the events processed and the event budget stay those of the
// model's inputs and releases (docs/metrics.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "events/input_stream.hpp"

namespace egret {

template <class Scalar>
struct WindowChange {
  Scalar time = 0;
  Index channel = 0;
  Scalar delta = 0;         // the window sum's change: started - ended
  Scalar started = 0;       // the value of the input that starts here (if start >= 0)
  Scalar ended = 0;         // the value of the input whose window ends here (if end >= 0)
  std::int64_t start = -1;  // that input's index in the stream, or -1
  std::int64_t end = -1;    // that input's index in the stream, or -1
  // The model's events this change stands for: an input, a release, or both.
  std::uint64_t events() const {
    return static_cast<std::uint64_t>(start >= 0) + static_cast<std::uint64_t>(end >= 0);
  }
};

// One time's starts [s0, s1) (in channel order, as the stream is sorted) and ends [e0, e1) (in
// stream order: in channel order too when they all started at one time, the usual case; several
// source times that round to one end time are sorted by channel, then stream index, here).
template <class Scalar>
void pair_one_time(const std::vector<InputEvent<Scalar>>& ev, Scalar t, std::size_t s0,
                   std::size_t s1, std::size_t e0, std::size_t e1,
                   std::vector<WindowChange<Scalar>>& out) {
  const bool ends_in_order = std::is_sorted(
      ev.begin() + static_cast<std::ptrdiff_t>(e0), ev.begin() + static_cast<std::ptrdiff_t>(e1),
      [](const InputEvent<Scalar>& a, const InputEvent<Scalar>& b) {
        return a.channel < b.channel;
      });
  thread_local std::vector<std::size_t> sorted_ends;
  if (!ends_in_order) {
    sorted_ends.clear();
    for (std::size_t i = e0; i < e1; ++i) sorted_ends.push_back(i);
    std::sort(sorted_ends.begin(), sorted_ends.end(), [&](std::size_t a, std::size_t b) {
      return ev[a].channel != ev[b].channel ? ev[a].channel < ev[b].channel : a < b;
    });
  }
  const std::size_t n_ends = e1 - e0;
  auto end_at = [&](std::size_t k) { return ends_in_order ? e0 + k : sorted_ends[k]; };
  const Index none = std::numeric_limits<Index>::max();
  const std::size_t any = s0 < s1 ? s0 : e0;  // an index to read where a list is used up
  std::size_t s = s0, k = 0;
  // Which list the next change comes from (a start, an end, or both) is chosen without a branch:
  // starts and ends interleave unpredictably, and a mispredicted branch per change was most of
  // this function's time on a busy recording (docs/speed.md).
  while (s < s1 || k < n_ends) {
    const std::size_t si = s < s1 ? s : any;
    const std::size_t ei = k < n_ends ? end_at(k) : any;
    const Index start_channel = s < s1 ? ev[si].channel : none;
    const Index end_channel = k < n_ends ? ev[ei].channel : none;
    const bool take_start = start_channel <= end_channel, take_end = end_channel <= start_channel;
    // Written in place: a change built on the stack and copied was read back by 16-byte loads
    // before its 8-byte stores had landed, a store-forwarding stall per change.
    WindowChange<Scalar>& c = out.emplace_back();
    c.time = t;
    c.channel = take_start ? start_channel : end_channel;
    c.started = take_start ? ev[si].value : Scalar(0);
    c.ended = take_end ? ev[ei].value : Scalar(0);
    c.start = take_start ? static_cast<std::int64_t>(si) : -1;
    c.end = take_end ? static_cast<std::int64_t>(ei) : -1;
    c.delta = c.started - c.ended;
    s += take_start;
    k += take_end;
  }
}

// The changes of `in`'s window sums for a window of `window` ms, up to end_time (an end after it
// is never dispatched, as its release would not be), ordered by time and, within a time, by
// channel. An input's end is t + window computed in Scalar, as the layer schedules its release.
// At one time, an ending input is paired with a starting input of the same channel, first with
// first (a stream may repeat a channel at one time); the others are changes of their own. The
// result's buffer is reused across runs.
template <class Scalar>
void net_input_windows(const InputStream<Scalar>& in, Scalar window, Scalar end_time,
                       std::vector<WindowChange<Scalar>>& out) {
  out.clear();
  const auto& ev = in.events();
  const std::size_t n = ev.size();
  out.reserve(2 * n);        // at most a change per input and one per end
  std::size_t s = 0, e = 0;  // next start, next end (ends follow the starts' order)
  auto end_time_of = [&](std::size_t i) { return ev[i].time + window; };
  for (;;) {
    if (e < n && end_time_of(e) > end_time) e = n;  // ends are non-decreasing in time
    const bool has_s = s < n, has_e = e < n;
    if (!has_s && !has_e) break;
    const Scalar t = !has_e   ? ev[s].time
                     : !has_s ? end_time_of(e)
                              : std::min(ev[s].time, end_time_of(e));
    if (t > end_time) break;  // an input after the end is never dispatched either
    std::size_t s_end = s, e_end = e;
    while (s_end < n && ev[s_end].time == t) ++s_end;
    while (e_end < n && end_time_of(e_end) == t) ++e_end;
    pair_one_time(ev, t, s, s_end, e, e_end, out);
    s = s_end;
    e = e_end;
  }
}

}  // namespace egret
