// The discrete-event engine: merges the external input stream, the scheduled queue (releases,
// readouts, snapshots) and each layer's next internal event, always taking the earliest by the
// one event order (events/event.hpp), and dispatches it to the layer it concerns.
//
// An event emitted by layer l at time s is delivered to layer l + 1 at the same time s, at once:
// every release and external input at s has been processed before (they precede internal events
// at equal times), and layer l + 1's own internal events at s come after layer l's.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "events/event_queue.hpp"
#include "events/input_stream.hpp"
#include "sim/network.hpp"
#include "sim/output_trace.hpp"
#include "sim/recorder.hpp"
#include "sim/tape.hpp"

namespace egret {

// Events one simulation may process by default (inputs, internal events, releases, readouts,
// snapshots): generous for any sample egret's examples and tasks run, yet it stops a network
// whose event rate has no useful bound within seconds instead of growing without end.
inline constexpr std::uint64_t kDefaultEventBudget = 100'000'000;

// Thrown when a simulation needs more events than SimOptions::max_events.
class EventBudgetExceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class Scalar>
struct SimOptions {
  Scalar end_time = 0;                // events with time <= end_time are processed [ms]
  std::vector<Scalar> readout_times;  // sample the last layer's output trace (and logits)
  // Average the last layer's output trace over [begin, end] (begin < end); their records follow
  // the point readouts in SimResult::readouts.
  std::vector<std::pair<Scalar, Scalar>> readout_windows;
  std::vector<Scalar> snapshot_times;  // record every layer's state
  bool record_trace = true;            // keep every emitted event in the result
  Tape<Scalar>* tape = nullptr;        // if set, record what the exact backward pass needs
  TraceSink<Scalar>* sink = nullptr;   // if set, receives every emitted event as it happens
  // The event budget: a run that would process more events stops with EventBudgetExceeded.
  // Configurations set it as "simulation": {"max_events": N}; the CLI as --max-events N.
  std::uint64_t max_events = kDefaultEventBudget;
};

namespace detail {
template <class Scalar>
[[noreturn]] void event_budget_exceeded(std::uint64_t budget, Scalar t, Scalar end_time) {
  std::ostringstream os;
  os << "simulate: event budget exceeded: " << budget << " events processed by t = " << t
     << " ms of end_time = " << end_time
     << " ms (the network's event rate may have no useful bound; if the run is legitimate, "
        "raise the budget: \"simulation\": {\"max_events\": N} in the configuration, "
        "--max-events N on the command line, or SimOptions::max_events)";
  throw EventBudgetExceeded(os.str());
}
}  // namespace detail

template <class Scalar>
SimResult<Scalar> simulate(Network<Scalar>& net, const InputStream<Scalar>& input,
                           const SimOptions<Scalar>& options) {
  if (net.empty()) throw std::invalid_argument("simulate: the network has no layers");
  if (input.channels() != net.input_channels()) {
    std::ostringstream os;
    os << "simulate: input stream has " << input.channels() << " channels but the first layer ("
       << net.layer(0).type_name() << ") expects " << net.input_channels();
    throw std::invalid_argument(os.str());
  }
  if (options.max_events == 0)
    throw std::invalid_argument("simulate: the event budget (max_events) must be positive");
  if (!std::isfinite(options.end_time) || options.end_time < 0) {
    std::ostringstream os;
    os << "simulate: end_time must be finite and >= 0, got " << options.end_time;
    throw std::invalid_argument(os.str());
  }
  auto check_times = [&](const std::vector<Scalar>& times, const char* what) {
    for (Scalar t : times) {
      if (!std::isfinite(t) || t < 0 || t > options.end_time) {
        std::ostringstream os;
        os << "simulate: " << what << " time " << t
           << " is outside [0, end_time = " << options.end_time << "]";
        throw std::invalid_argument(os.str());
      }
    }
  };
  check_times(options.readout_times, "readout");
  check_times(options.snapshot_times, "snapshot");
  for (const auto& [a, b] : options.readout_windows) {
    check_times({a, b}, "readout window");
    if (!(a < b)) {
      std::ostringstream os;
      os << "simulate: readout window [" << a << ", " << b << "] must have begin < end";
      throw std::invalid_argument(os.str());
    }
  }

  const Index n_layers = net.size();
  Tape<Scalar>* const tape = options.tape;
  if (tape) {
    for (Index l = 0; l < n_layers; ++l) {
      if (!net.layer(l).has_adjoint()) {
        throw std::invalid_argument("simulate: layer " + std::to_string(l) + " (" +
                                    net.layer(l).type_name() +
                                    ") has no exact backward pass; cannot record an adjoint tape");
      }
    }
    tape->clear(n_layers);
  }
  std::vector<TapeItem<Scalar>> step_items;
  auto record = [&](Scalar t, EventKind kind, Index l) {
    tape->add_step(t, kind, l, step_items);
    net.layer(l).record_step_state(kind, tape->step_state_of(l));
  };
  SimResult<Scalar> result;
  result.end_time = options.end_time;
  result.layers.resize(static_cast<std::size_t>(n_layers));
  std::vector<OutputTrace<Scalar>> traces;
  for (Index l = 0; l < n_layers; ++l) {
    net.layer(l).set_tape_recording(tape != nullptr);
    net.layer(l).reset();
    result.layers[l].units = net.layer(l).units();
    result.layers[l].clocked = net.layer(l).clocked();
    traces.emplace_back(net.layer(l).units(), net.layer(l).output_time_constant());
  }

  // Readout events: index 0 = point, 1 = window begin, 2 = window end; aux = record slot.
  EventQueue<Scalar> queue;
  const std::size_t n_points = options.readout_times.size();
  for (std::size_t i = 0; i < n_points; ++i) {
    queue.push({options.readout_times[i], EventKind::kReadout, n_layers - 1, 0, 0,
                static_cast<Scalar>(i)});
  }
  for (std::size_t i = 0; i < options.readout_windows.size(); ++i) {
    const auto slot = static_cast<Scalar>(n_points + i);
    queue.push({options.readout_windows[i].first, EventKind::kReadout, n_layers - 1, 1, 0, slot});
    queue.push({options.readout_windows[i].second, EventKind::kReadout, n_layers - 1, 2, 0, slot});
  }
  for (std::size_t i = 0; i < options.snapshot_times.size(); ++i) {
    queue.push({options.snapshot_times[i], EventKind::kSnapshot, 0, 0, 0, static_cast<Scalar>(i)});
  }
  result.readouts.resize(n_points + options.readout_windows.size());
  result.snapshots.resize(options.snapshot_times.size());

  std::vector<Emission<Scalar>> emitted;

  // Deliver the emissions of layer l at time t: record them, add them to the output trace, and
  // hand them to layer l + 1 as inputs at t (its own crossings then come through the loop).
  // Surrogate emissions (sim/layer.hpp Emission) are recorded and delivered, but are no events.
  auto deliver = [&](Index l, Scalar t, const std::vector<Emission<Scalar>>& out,
                     std::int64_t first_emission) {
    std::size_t events = 0;
    for (const auto& e : out) {
      if (e.surrogate) continue;
      ++events;
      traces[l].add(e.unit, e.value, t);
      if (options.record_trace) result.trace.push_back({t, l, e.unit, e.value});
      if (options.sink) options.sink->on_event({t, l, e.unit, e.value});
    }
    result.layers[l].events += events;
    if (l + 1 < n_layers) {
      auto& next = net.layer(l + 1);
      for (std::size_t k = 0; k < out.size(); ++k) {
        const auto& e = out[k];
        Scheduler<Scalar> sched(queue, l + 1, tape ? tape->next_item() : -1);
        next.receive_input(t, e.unit, e.value, sched);
        if (tape) {
          step_items.assign(1, {EventKind::kInput, e.unit, e.value, 0,
                                first_emission + static_cast<std::int64_t>(k), -1, e.surrogate});
          record(t, EventKind::kInput, l + 1);
        }
      }
      result.layers[l + 1].inputs_received += events;
    }
  };

  std::size_t next_input = 0;
  const Scalar end = options.end_time;
  for (;;) {
    // Candidate from each source; the earliest by event_precedes wins.
    Event<Scalar> best;
    enum class Source { kNone, kInput, kQueue, kLayer } source = Source::kNone;
    auto consider = [&](const Event<Scalar>& e, Source s) {
      if (e.time > end) return;
      if (source == Source::kNone || event_precedes(e, best)) {
        best = e;
        source = s;
      }
    };
    if (next_input < input.size()) {
      const auto& in = input[next_input];
      consider({in.time, EventKind::kInput, 0, in.channel, in.value, 0, next_input},
               Source::kInput);
    }
    if (!queue.empty()) consider(queue.top(), Source::kQueue);
    for (Index l = 0; l < n_layers; ++l) {
      const InternalEvent<Scalar> ie = net.layer(l).next_internal_event();
      if (ie.time <= end)
        consider({ie.time, EventKind::kInternal, l, ie.unit, 0, 0, 0}, Source::kLayer);
    }
    if (source == Source::kNone) break;
    if (result.events_processed >= options.max_events)
      detail::event_budget_exceeded(options.max_events, best.time, end);
    ++result.events_processed;

    switch (source) {
      case Source::kInput: {
        Scheduler<Scalar> sched(queue, 0, tape ? tape->next_item() : -1);
        net.layer(0).receive_input(best.time, best.index, best.value, sched);
        if (tape) {
          step_items.assign(1, {EventKind::kInput, best.index, best.value, 0, -1,
                                static_cast<std::int64_t>(next_input)});
          record(best.time, EventKind::kInput, 0);
        }
        ++result.layers[0].inputs_received;
        ++next_input;
        break;
      }
      case Source::kLayer: {
        const Index l = best.layer;
        const std::int64_t first_emission = tape ? tape->next_item() : -1;
        Scheduler<Scalar> sched(queue, l, first_emission);
        emitted.clear();
        net.layer(l).fire(best.time, sched, emitted);
        if (tape) {
          step_items.clear();
          for (const auto& e : emitted)
            step_items.push_back(
                {EventKind::kInternal, e.unit, e.value, e.aux, -1, -1, e.surrogate});
          record(best.time, EventKind::kInternal, l);
        }
        ++result.layers[l].internal_steps;
        deliver(l, best.time, emitted, first_emission);
        break;
      }
      case Source::kQueue: {
        const Event<Scalar> e = queue.pop();
        switch (e.kind) {
          case EventKind::kInputRelease:
          case EventKind::kRecurrentRelease:
            net.layer(e.layer).release(e);
            if (tape) {
              step_items.assign(1, {e.kind, e.index, e.value, e.aux, e.source, -1});
              record(e.time, e.kind, e.layer);
            }
            ++result.layers[e.layer].releases;
            break;
          case EventKind::kReadout: {
            auto& rec = result.readouts[static_cast<std::size_t>(e.aux)];
            const auto& trace = traces[n_layers - 1];
            const Index n_last = net.layer(n_layers - 1).units();
            if (e.index == 1) {  // window begins: keep the integral so far
              rec.begin = e.time;
              rec.trace.resize(static_cast<std::size_t>(n_last));
              for (Index n = 0; n < n_last; ++n) rec.trace[n] = trace.integral_at(n, e.time);
              break;
            }
            if (e.index == 2) {  // window ends: mean over [begin, end]
              const Scalar len = e.time - rec.begin;
              for (Index n = 0; n < n_last; ++n)
                rec.trace[n] = (trace.integral_at(n, e.time) - rec.trace[n]) / len;
            } else {
              rec.begin = e.time;
              rec.trace = trace.values_at(e.time);
            }
            rec.time = e.time;
            if (const auto* ro = net.readout()) {
              Eigen::Map<const Vector<Scalar>> o(rec.trace.data(),
                                                 static_cast<Index>(rec.trace.size()));
              const Vector<Scalar> logits = ro->W_o * o + ro->b_o;
              rec.logits.assign(logits.data(), logits.data() + logits.size());
            }
            break;
          }
          case EventKind::kSnapshot: {
            auto& rec = result.snapshots[static_cast<std::size_t>(e.aux)];
            rec.time = e.time;
            rec.layers.clear();
            for (Index l = 0; l < n_layers; ++l) {
              LayerState<Scalar> s = net.layer(l).state_at(e.time);
              s.variables.emplace_back("o", traces[l].values_at(e.time));
              rec.layers.push_back(std::move(s));
            }
            break;
          }
          default:
            throw std::logic_error("simulate: unexpected event kind on the queue");
        }
        break;
      }
      case Source::kNone:
        break;
    }
  }
  if (tape) {
    for (Index l = 0; l < n_layers; ++l)
      net.layer(l).record_end_state(tape->end_states[static_cast<std::size_t>(l)]);
  }
  return result;
}

}  // namespace egret
