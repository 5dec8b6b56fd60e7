// The queue of scheduled events (releases, readouts, snapshots), ordered by event_precedes.
// Insertion stamps each event with a sequence number so that exact duplicates still have one
// deterministic order.
//
// Most scheduled events are releases at t + window, pushed while the engine moves forward in
// time, so each stream of them (one kind of release of one layer) arrives already in order. An
// event that comes after the last one of its stream's run is appended to that run (a FIFO);
// any other goes to a binary heap. The earliest event is the earliest of the runs' fronts and
// the heap's top. Since the order is strict (seq breaks every tie), events come out exactly as
// from one heap, but a release costs O(1) instead of two O(log n) sift passes over 48-byte
// events (docs/speed.md has the measurement).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "events/event.hpp"

namespace egret {

template <class Scalar>
class EventQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  void push(Event<Scalar> event) {
    event.seq = next_seq_++;
    const bool earliest = size_ == 0 || event_precedes(event, top());
    Run& run = runs_[run_of(event)];
    int where = kHeap;
    // A NaN time is ordered against nothing (the engine refuses them before they get here): it
    // goes to the heap, where it cannot block a run.
    if (!std::isnan(event.time) && (run.empty() || event_precedes(run.back(), event))) {
      run.push_back(event);
      where = static_cast<int>(&run - runs_.data());
    } else {
      heap_.push_back(event);
      std::push_heap(heap_.begin(), heap_.end(), later_);
    }
    ++size_;
    if (earliest) earliest_ = where;
  }

  const Event<Scalar>& top() const {
    if (size_ == 0) throw std::logic_error("EventQueue::top on an empty queue");
    return earliest_ == kHeap ? heap_.front() : runs_[static_cast<std::size_t>(earliest_)].front();
  }

  Event<Scalar> pop() {
    const Event<Scalar> e = top();
    if (earliest_ == kHeap) {
      std::pop_heap(heap_.begin(), heap_.end(), later_);
      heap_.pop_back();
    } else {
      runs_[static_cast<std::size_t>(earliest_)].pop_front();
    }
    --size_;
    find_earliest();
    return e;
  }

  void clear() {
    heap_.clear();
    for (Run& r : runs_) r.clear();
    size_ = 0;
    next_seq_ = 0;
  }

 private:
  // Events in order, consumed from the front; the consumed prefix is dropped when it is at
  // least half of the storage (amortised O(1), memory at most twice what is pending).
  class Run {
   public:
    bool empty() const { return head_ == events_.size(); }
    const Event<Scalar>& front() const { return events_[head_]; }
    const Event<Scalar>& back() const { return events_.back(); }
    void push_back(const Event<Scalar>& e) { events_.push_back(e); }
    void pop_front() {
      ++head_;
      if (empty()) {
        clear();
      } else if (head_ >= kCompactAfter && 2 * head_ >= events_.size()) {
        events_.erase(events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(head_));
        head_ = 0;
      }
    }
    void clear() {
      events_.clear();
      head_ = 0;
    }

   private:
    static constexpr std::size_t kCompactAfter = 1024;
    std::vector<Event<Scalar>> events_;
    std::size_t head_ = 0;
  };

  // Input and recurrent releases of layers 0 and 1 (later layers share layer 1's runs), and
  // readouts and snapshots, which are scheduled in time order at the start.
  static constexpr std::size_t kRuns = 5;
  static std::size_t run_of(const Event<Scalar>& e) {
    const bool input = e.kind == EventKind::kInputRelease;
    if (!input && e.kind != EventKind::kRecurrentRelease) return kRuns - 1;
    return 2 * static_cast<std::size_t>(std::clamp<Index>(e.layer, 0, 1)) + (input ? 0 : 1);
  }

  void find_earliest() {
    const Event<Scalar>* best = heap_.empty() ? nullptr : &heap_.front();
    earliest_ = kHeap;
    for (std::size_t r = 0; r < kRuns; ++r) {
      if (runs_[r].empty()) continue;
      if (best == nullptr || event_precedes(runs_[r].front(), *best)) {
        best = &runs_[r].front();
        earliest_ = static_cast<int>(r);
      }
    }
  }

  // std heap functions build a max-heap; "later" as the less-than makes the earliest the top.
  struct Later {
    bool operator()(const Event<Scalar>& a, const Event<Scalar>& b) const {
      return event_precedes(b, a);
    }
  };
  static constexpr int kHeap = -1;  // earliest_: the heap's top, else a run's index
  std::vector<Event<Scalar>> heap_;
  std::array<Run, kRuns> runs_;
  std::size_t size_ = 0;
  int earliest_ = kHeap;
  std::uint64_t next_seq_ = 0;
  Later later_;
};

}  // namespace egret
