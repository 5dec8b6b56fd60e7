// The discrete-event engine: merges the external input stream, the scheduled queue (releases,
// readouts, snapshots) and each layer's next internal event, always taking the earliest by the
// one event order (events/event.hpp), and dispatches it to the layer it concerns.
//
// An event emitted by layer l at time s is delivered to layer l + 1 at the same time s, at once:
// every release and external input at s has been processed before (they precede internal events
// at equal times), and layer l + 1's own internal events at s come after layer l's.
//
// simulate() = validate_simulation (sim/sim_options.hpp), then EventLoop::run: the loop below,
// with readouts and snapshots taken by sim/readouts.hpp.
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
#include "sim/readouts.hpp"
#include "sim/recorder.hpp"
#include "sim/sim_options.hpp"
#include "sim/tape.hpp"

namespace egret {

namespace detail {

// One run of the event loop over a validated request.
template <class Scalar>
class EventLoop {
 public:
  EventLoop(Network<Scalar>& net, const InputStream<Scalar>& input,
            const SimOptions<Scalar>& options)
      : net_(net), input_(input), options_(options), tape_(options.tape), layers_(net.size()) {}

  SimResult<Scalar> run() {
    start();
    for (;;) {
      const Source source = next_event();
      if (source == Source::kNone) break;
      if (result_.events_processed >= options_.max_events)
        event_budget_exceeded(options_.max_events, next_.time, options_.end_time, busiest_layer());
      ++result_.events_processed;
      now_ = next_.time;
      if (merged_step_open_ && !continues_merged_step(source)) close_merged_step();
      if (source == Source::kInput) dispatch_inputs();
      if (source == Source::kLayer) dispatch_internal();
      if (source == Source::kQueue) dispatch_queued(queue_.pop());
    }
    if (merged_step_open_) close_merged_step();
    if (tape_) {
      for (Index l = 0; l < layers_; ++l)
        net_.layer(l).record_end_state(tape_->end_states[static_cast<std::size_t>(l)]);
    }
    for (Index l = 0; l < layers_; ++l) finish_counts(l);
    return std::move(result_);
  }

 private:
  enum class Source { kNone, kInput, kQueue, kLayer };

  // The step of layer l's dense comparison: its tick, or SimOptions::dense_step.
  double comparison_step(Index l) const {
    const Layer<Scalar>& layer = net_.layer(l);
    return static_cast<double>(layer.clocked() ? tick_[static_cast<std::size_t>(l)]
                                               : options_.dense_step);
  }

  // An event of `unit` of layer l at t is active in its step: the tick, or the bin
  // ((k - 1) dense_step, k dense_step] (t = 0 in the first).
  void count_active(Index l, Index unit, Scalar t) {
    LayerCounts& c = result_.layers[static_cast<std::size_t>(l)];
    const std::int64_t step =
        net_.layer(l).clocked()
            ? static_cast<std::int64_t>(c.internal_steps)
            : std::max<std::int64_t>(1,
                                     static_cast<std::int64_t>(std::ceil(t / options_.dense_step)));
    std::int64_t& last =
        last_active_step_[static_cast<std::size_t>(l)][static_cast<std::size_t>(unit)];
    if (last == step) return;
    last = step;
    ++c.active_unit_steps;
  }

  // What the layer counted, and the steps of its dense comparison (sim/recorder.hpp).
  void finish_counts(Index l) {
    LayerCounts& c = result_.layers[static_cast<std::size_t>(l)];
    const Layer<Scalar>& layer = net_.layer(l);
    c.operations = layer.operation_counts();
    c.dense = layer.dense_cost();
    c.step_ms = comparison_step(l);
    c.steps = layer.clocked() ? c.internal_steps
                              : std::max<std::uint64_t>(
                                    1, static_cast<std::uint64_t>(std::ceil(
                                           static_cast<double>(options_.end_time) / c.step_ms)));
  }

  // Layers reset, output traces and counters sized, readouts and snapshots queued.
  void start() {
    if (tape_) tape_->clear(layers_);
    result_.end_time = options_.end_time;
    result_.layers.resize(static_cast<std::size_t>(layers_));
    for (Index l = 0; l < layers_; ++l) {
      Layer<Scalar>& layer = net_.layer(l);
      layer.set_tape_recording({tape_ != nullptr, options_.tape_checkpoint_every});
      layer.set_end_time(options_.end_time);
      layer.reset();
      result_.layers[l].units = layer.units();
      result_.layers[l].clocked = layer.clocked();
      tick_.push_back(layer.clocked() ? layer.next_internal_event().time : Scalar(0));
      last_active_step_.emplace_back(static_cast<std::size_t>(layer.units()), -1);
      traces_.emplace_back(layer.units(), [&](Index n) { return layer.output_time_constant(n); });
      if (layer.clocked()) refuse_ticks_beyond_budget(l);
    }
    schedule_readouts(options_, layers_ - 1, queue_, result_);
    merge_inputs_ = tape_ && options_.tape_merge_simultaneous_inputs &&
                    net_.layer(0).tape_merges_simultaneous_inputs();
    const Scalar window =
        options_.net_input_windows ? net_.layer(0).netted_input_window() : Scalar(0);
    nets_windows_ = window > 0 && std::isfinite(window) && (!tape_ || merge_inputs_);
    if (nets_windows_) net_input_windows(input_, window, options_.end_time, changes_);
  }

  // A clocked layer ticks at k dt up to end_time: when that alone exceeds the event budget, the
  // run is refused before the first event instead of running into the budget minutes later.
  void refuse_ticks_beyond_budget(Index l) {
    const double dt = static_cast<double>(net_.layer(l).next_internal_event().time);
    if (!(dt > 0)) return;
    const double ticks = std::floor(static_cast<double>(options_.end_time) / dt);
    if (ticks <= static_cast<double>(options_.max_events)) return;
    std::ostringstream os;
    os << "simulate: layer " << l << " (" << net_.layer(l).type_name() << ") would tick " << ticks
       << " times by end_time = " << options_.end_time << " ms (dt = " << dt
       << " ms), beyond the event budget of " << options_.max_events
       << " events; shorten the run, or raise the budget (\"simulation\": {\"max_events\": N}, "
          "--max-events N, SimOptions::max_events)";
    throw EventBudgetExceeded(os.str());
  }

  // The earliest event at or before end_time among the input stream, the queue and the layers'
  // next internal events (stored in next_), and where it comes from.
  Source next_event() {
    Source source = Source::kNone;
    auto consider = [&](const Event<Scalar>& e, Source s) {
      if (e.time > options_.end_time) return;
      if (source == Source::kNone || event_precedes(e, next_)) {
        next_ = e;
        source = s;
      }
    };
    if (nets_windows_) {
      if (next_change_ < changes_.size()) {
        const auto& c = changes_[next_change_];
        consider({c.time, EventKind::kInput, 0, c.channel, c.delta, 0,
                  static_cast<std::uint64_t>(next_change_)},
                 Source::kInput);
      }
    } else if (next_input_ < input_.size()) {
      const auto& in = input_[next_input_];
      consider({in.time, EventKind::kInput, 0, in.channel, in.value, 0, next_input_},
               Source::kInput);
    }
    if (!queue_.empty()) consider(queue_.top(), Source::kQueue);
    // An input or release at the time just dispatched precedes every internal event (layers
    // never schedule into the past, and at equal times internal events come after them), so the
    // layers are not asked: a continuous layer then refreshes its crossing times once per time,
    // after all of that time's inputs and releases
    // (models/continuous_egru/continuous_egru_layer.hpp settle()).
    if (source != Source::kNone && next_.time == now_ && next_.kind < EventKind::kInternal)
      return source;
    for (Index l = 0; l < layers_; ++l) {
      const InternalEvent<Scalar> ie = net_.layer(l).next_internal_event();
      if (ie.time <= options_.end_time)
        consider({ie.time, EventKind::kInternal, l, ie.unit, 0, 0, 0}, Source::kLayer);
    }
    return source;
  }

  // The next external input and every later one at the same time, to layer 0 in one call
  // (Layer::receive_inputs): they are the next events in the order, since the releases at that
  // time came first, internal events come after inputs, and nothing is scheduled at that time
  // meanwhile (windows are positive). One by one when the tape keeps the state after each.
  void dispatch_inputs() {
    if (nets_windows_) return dispatch_window_changes();
    const std::size_t first = next_input_;
    std::size_t end = first + 1;
    if (batches(EventKind::kInput, 0)) {
      const std::uint64_t room = options_.max_events - result_.events_processed;
      while (end < input_.size() && input_[end].time == next_.time && end - first <= room) ++end;
    }
    const auto n = static_cast<Index>(end - first);
    result_.events_processed += static_cast<std::uint64_t>(n - 1);
    Scheduler<Scalar> sched(queue_, 0, tape_ ? tape_->next_item() : -1);
    net_.layer(0).receive_inputs(next_.time, &input_[first], n, sched);
    if (tape_)
      for (std::size_t i = first; i < end; ++i)
        record_layer0_item({EventKind::kInput, false, true, tape_index(input_[i].channel),
                            input_[i].value, 0, static_cast<std::int64_t>(i)},
                           next_.time);
    result_.layers[0].inputs_received += static_cast<std::uint64_t>(n);
    next_input_ = end;
  }
  // The window changes of one time (events/window_changes.hpp), to layer 0 in one call. Each
  // stands for one or two of the model's events (an input, the release of an earlier one): the
  // events processed, the budget and the counts are theirs. Only the changes of nonzero delta
  // are columns, and tape items.
  void dispatch_window_changes() {
    const std::size_t first = next_change_;
    std::size_t end = first + 1;
    result_.events_processed += changes_[first].events() - 1;  // the loop counted one
    if (result_.events_processed > options_.max_events)
      event_budget_exceeded(options_.max_events, next_.time, options_.end_time, busiest_layer());
    while (end < changes_.size() && changes_[end].time == next_.time &&
           result_.events_processed + changes_[end].events() <= options_.max_events) {
      result_.events_processed += changes_[end].events();
      ++end;
    }
    net_.layer(0).receive_window_changes(next_.time, &changes_[first],
                                         static_cast<Index>(end - first));
    LayerCounts& counts = result_.layers[0];
    for (std::size_t i = first; i < end; ++i) {
      const WindowChange<Scalar>& c = changes_[i];
      counts.inputs_received += c.start >= 0 ? 1 : 0;
      counts.releases += c.end >= 0 ? 1 : 0;
      if (tape_ && c.delta != Scalar(0))
        record_layer0_item({EventKind::kInput, false, true, tape_index(c.channel), c.delta, 0,
                            c.start >= 0 ? c.start : c.end},
                           next_.time);
    }
    next_change_ = end;
  }
  // Whether simultaneous events of this kind and layer go to the layer in one call: always
  // without a tape; with one, only layer 0's inputs and input releases, when the tape keeps the
  // state after the last of them only (merged steps).
  bool batches(EventKind kind, Index layer) const {
    return !tape_ || (merge_inputs_ && layer == 0 &&
                      (kind == EventKind::kInput || kind == EventKind::kInputRelease));
  }

  // A release and the releases of the same kind, layer and time queued after it, in one call
  // (Layer::release_all): nothing comes between them in the order. With a tape, only layer 0's
  // input releases, when the tape merges them.
  void dispatch_releases(const Event<Scalar>& first) {
    releases_.assign(1, first);
    const bool batch = batches(first.kind, first.layer);
    while (batch && !queue_.empty() && result_.events_processed < options_.max_events) {
      const Event<Scalar>& e = queue_.top();
      if (e.time != first.time || e.kind != first.kind || e.layer != first.layer) break;
      releases_.push_back(queue_.pop());
      ++result_.events_processed;
    }
    net_.layer(first.layer).release_all(releases_.data(), static_cast<Index>(releases_.size()));
    if (tape_)
      for (const Event<Scalar>& e : releases_) record_release(e);
    result_.layers[first.layer].releases += releases_.size();
  }
  void record_release(const Event<Scalar>& e) {
    const TapeItem<Scalar> item{e.kind,  false, false,   tape_index(e.index),
                                e.value, e.aux, e.source};
    if (e.layer == 0 && e.kind == EventKind::kInputRelease) {
      record_layer0_item(item, e.time);
    } else {
      step_items_.assign(1, item);
      record(e.time, e.kind, e.layer);
    }
  }

  // The internal event(s) of one layer at one time, and delivery of what its units emit.
  void dispatch_internal() {
    const Index l = next_.layer;
    const std::int64_t first_emission = tape_ ? tape_->next_item() : -1;
    Scheduler<Scalar> sched(queue_, l, first_emission);
    emitted_.clear();
    net_.layer(l).fire(next_.time, sched, emitted_);
    if (tape_) {
      step_items_.clear();
      for (const auto& e : emitted_)
        step_items_.push_back(
            {EventKind::kInternal, e.surrogate, false, tape_index(e.unit), e.value, e.aux, -1});
      record(next_.time, EventKind::kInternal, l);
    }
    ++result_.layers[l].internal_steps;
    deliver(l, next_.time, first_emission);
  }

  // The layer with the most events so far and its rate, for the event-budget error.
  std::string busiest_layer() const {
    Index busiest = 0;
    for (Index l = 1; l < layers_; ++l)
      if (result_.layers[static_cast<std::size_t>(l)].events >
          result_.layers[static_cast<std::size_t>(busiest)].events)
        busiest = l;
    const auto events = result_.layers[static_cast<std::size_t>(busiest)].events;
    const double seconds = std::max(static_cast<double>(next_.time), 1e-9) * 1e-3;
    std::ostringstream os;
    os << "the busiest layer, " << busiest << " (" << net_.layer(busiest).type_name() << ", "
       << net_.layer(busiest).units() << " units), emitted " << events << " events, "
       << static_cast<double>(events) / (net_.layer(busiest).units() * seconds)
       << " events per unit per second";
    return os.str();
  }

  // Deliver the emissions of layer l at time t: record them, add them to the output trace, and
  // hand them to layer l + 1 as inputs at t (its own crossings then come through the loop).
  // Surrogate emissions (sim/layer.hpp Emission) are recorded and delivered, but are no events.
  void deliver(Index l, Scalar t, std::int64_t first_emission) {
    std::size_t events = 0;
    for (const auto& e : emitted_) {
      if (e.surrogate) continue;
      ++events;
      count_active(l, e.unit, t);
      traces_[l].add(e.unit, e.value, t);
      if (options_.record_trace) result_.trace.push_back({t, l, e.unit, e.value});
      if (options_.sink) options_.sink->on_event({t, l, e.unit, e.value});
    }
    result_.layers[l].events += events;
    if (l + 1 >= layers_) return;
    Layer<Scalar>& next = net_.layer(l + 1);
    for (std::size_t k = 0; k < emitted_.size(); ++k) {
      const auto& e = emitted_[k];
      Scheduler<Scalar> sched(queue_, l + 1, tape_ ? tape_->next_item() : -1);
      next.receive_input(t, e.unit, e.value, sched);
      if (tape_) {
        step_items_.assign(1, {EventKind::kInput, e.surrogate, false, tape_index(e.unit), e.value,
                               0, first_emission + static_cast<std::int64_t>(k)});
        record(t, EventKind::kInput, l + 1);
      }
    }
    result_.layers[l + 1].inputs_received += events;
  }

  // A queued event: a release of a layer, a readout or a snapshot.
  void dispatch_queued(const Event<Scalar>& e) {
    switch (e.kind) {
      case EventKind::kInputRelease:
      case EventKind::kRecurrentRelease:
        dispatch_releases(e);
        return;
      case EventKind::kReadout:
        take_readout(e, traces_[static_cast<std::size_t>(layers_ - 1)], net_.readout(),
                     result_.readouts[static_cast<std::size_t>(e.aux)]);
        return;
      case EventKind::kSnapshot:
        take_snapshot(e.time, net_, traces_, result_.snapshots[static_cast<std::size_t>(e.aux)]);
        return;
      default:
        throw std::logic_error("simulate: unexpected event kind on the queue");
    }
  }

  static std::vector<WindowChange<Scalar>>& thread_change_buffer() {
    thread_local std::vector<WindowChange<Scalar>> buffer;
    return buffer;
  }

  // Units and channels are stored in 32 bits on the tape (configurations are far smaller).
  static std::int32_t tape_index(Index i) { return static_cast<std::int32_t>(i); }

  // An external input or its release on the tape: a step of its own, or with merging
  // (SimOptions::tape_merge_simultaneous_inputs) one more item of the open step of the same kind
  // and time. The open step's state is recorded when it closes: the layer's state after its last
  // item. (The run loop closes it before any event that does not continue it.)
  void record_layer0_item(const TapeItem<Scalar>& item, Scalar t) {
    if (merged_step_open_) {
      // Field by field: `item` is the caller's temporary, stored field by field; copied whole, it
      // was read back with loads wider than those stores, which the CPU cannot forward (a stall
      // per input and release; docs/speed.md, "Columns in registers").
      TapeItem<Scalar>& to = tape_->add_item_to_last_step();
      to.kind = item.kind;
      to.surrogate = item.surrogate;
      to.external = item.external;
      to.index = item.index;
      to.value = item.value;
      to.aux = item.aux;
      to.link = item.link;
      return;
    }
    step_items_.assign(1, item);
    if (!merge_inputs_) {
      record(t, item.kind, 0);
      return;
    }
    tape_->add_step(t, item.kind, 0, step_items_);
    merged_step_open_ = true;
    merged_step_kind_ = item.kind;
  }
  bool continues_merged_step(Source source) const {
    return (source == Source::kInput || source == Source::kQueue) && next_.layer == 0 &&
           next_.kind == merged_step_kind_ && next_.time == tape_->steps.back().time;
  }
  void close_merged_step() {
    net_.layer(0).record_step_state(merged_step_kind_, tape_->step_state_of(0));
    merged_step_open_ = false;
  }

  // One step of layer l on the tape: its items, then what the layer's family keeps.
  void record(Scalar t, EventKind kind, Index l) {
    tape_->add_step(t, kind, l, step_items_);
    net_.layer(l).record_step_state(kind, tape_->step_state_of(l));
  }

  Network<Scalar>& net_;
  const InputStream<Scalar>& input_;
  const SimOptions<Scalar>& options_;
  Tape<Scalar>* const tape_;
  const Index layers_;
  SimResult<Scalar> result_;
  std::vector<OutputTrace<Scalar>> traces_;
  EventQueue<Scalar> queue_;
  Event<Scalar> next_;             // the event being dispatched
  Scalar now_ = -never<Scalar>();  // the time of the last dispatched event
  std::size_t next_input_ = 0;
  std::vector<Emission<Scalar>> emitted_;
  std::vector<TapeItem<Scalar>> step_items_;
  std::vector<Event<Scalar>> releases_;  // a batch of simultaneous releases
  bool merge_inputs_ = false;            // simultaneous layer-0 inputs (releases) as one tape step
  bool nets_windows_ = false;            // layer 0's inputs as window changes
  // The run's window changes; the buffer is the thread's, reused across runs.
  std::vector<WindowChange<Scalar>>& changes_ = thread_change_buffer();
  std::size_t next_change_ = 0;
  bool merged_step_open_ = false;
  EventKind merged_step_kind_ = EventKind::kInput;
  std::vector<Scalar> tick_;                                 // per layer: dt, or 0 (continuous)
  std::vector<std::vector<std::int64_t>> last_active_step_;  // per layer and unit
};

}  // namespace detail

template <class Scalar>
SimResult<Scalar> simulate(Network<Scalar>& net, const InputStream<Scalar>& input,
                           const SimOptions<Scalar>& options) {
  validate_simulation(net, input.channels(), options);
  return detail::EventLoop<Scalar>(net, input, options).run();
}

}  // namespace egret
