// Readouts and snapshots: what the engine records at requested times. Readouts sample (or
// average over a window) the last layer's output trace and apply the network's linear readout;
// snapshots record every layer's named state and output trace. Both travel through the event
// queue as kReadout / kSnapshot events so that they see exactly the events at or before their
// time (events/event.hpp orders them after everything else at equal times).
#pragma once

#include <cstddef>
#include <vector>

#include "events/event_queue.hpp"
#include "sim/network.hpp"
#include "sim/output_trace.hpp"
#include "sim/recorder.hpp"
#include "sim/sim_options.hpp"

namespace egret {

// Readout events carry their kind in `index` and their record slot in `aux`.
enum ReadoutMark : Index { kReadoutPoint = 0, kWindowBegin = 1, kWindowEnd = 2 };

// Puts every requested readout and snapshot on the queue and sizes their records: point readouts
// first, then windows (in the order given), as SimResult::readouts lists them.
template <class Scalar>
void schedule_readouts(const SimOptions<Scalar>& options, Index last_layer,
                       EventQueue<Scalar>& queue, SimResult<Scalar>& result) {
  const std::size_t n_points = options.readout_times.size();
  for (std::size_t i = 0; i < n_points; ++i) {
    queue.push({options.readout_times[i], EventKind::kReadout, last_layer, kReadoutPoint, 0,
                static_cast<Scalar>(i)});
  }
  for (std::size_t i = 0; i < options.readout_windows.size(); ++i) {
    const auto slot = static_cast<Scalar>(n_points + i);
    const auto& [begin, end] = options.readout_windows[i];
    queue.push({begin, EventKind::kReadout, last_layer, kWindowBegin, 0, slot});
    queue.push({end, EventKind::kReadout, last_layer, kWindowEnd, 0, slot});
  }
  for (std::size_t i = 0; i < options.snapshot_times.size(); ++i) {
    queue.push({options.snapshot_times[i], EventKind::kSnapshot, 0, 0, 0, static_cast<Scalar>(i)});
  }
  result.readouts.resize(n_points + options.readout_windows.size());
  result.snapshots.resize(options.snapshot_times.size());
}

// One readout event: a point sample, or the begin / end of a window (the record keeps the
// trace's integral at the begin, and the mean over [begin, end] at the end). Logits follow
// every completed record when the network has a readout.
template <class Scalar>
void take_readout(const Event<Scalar>& e, const OutputTrace<Scalar>& trace,
                  const Readout<Scalar>* readout, ReadoutRecord<Scalar>& rec) {
  const Index units = trace.units();
  if (e.index == kWindowBegin) {
    rec.begin = e.time;
    rec.trace.resize(static_cast<std::size_t>(units));
    for (Index n = 0; n < units; ++n) rec.trace[n] = trace.integral_at(n, e.time);
    return;
  }
  if (e.index == kWindowEnd) {
    const Scalar len = e.time - rec.begin;
    for (Index n = 0; n < units; ++n)
      rec.trace[n] = (trace.integral_at(n, e.time) - rec.trace[n]) / len;
  } else {
    rec.begin = e.time;
    rec.trace = trace.values_at(e.time);
  }
  rec.time = e.time;
  if (readout) {
    Eigen::Map<const Vector<Scalar>> o(rec.trace.data(), static_cast<Index>(rec.trace.size()));
    const Vector<Scalar> logits = readout->W_o * o + readout->b_o;
    rec.logits.assign(logits.data(), logits.data() + logits.size());
  }
}

// Every layer's named state at time t, with its output trace as "o".
template <class Scalar>
void take_snapshot(Scalar t, const Network<Scalar>& net,
                   const std::vector<OutputTrace<Scalar>>& traces, SnapshotRecord<Scalar>& rec) {
  rec.time = t;
  rec.layers.clear();
  for (Index l = 0; l < net.size(); ++l) {
    LayerState<Scalar> s = net.layer(l).state_at(t);
    s.variables.emplace_back("o", traces[static_cast<std::size_t>(l)].values_at(t));
    rec.layers.push_back(std::move(s));
  }
}

}  // namespace egret
