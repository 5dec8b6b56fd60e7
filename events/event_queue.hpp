// A binary-heap priority queue of scheduled events (releases, readouts, snapshots), ordered by
// event_precedes. Insertion stamps each event with a sequence number so that exact duplicates
// still have one deterministic order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "events/event.hpp"

namespace egret {

template <class Scalar>
class EventQueue {
 public:
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }

  void push(Event<Scalar> event) {
    event.seq = next_seq_++;
    heap_.push_back(event);
    std::push_heap(heap_.begin(), heap_.end(), later_);
  }

  const Event<Scalar>& top() const {
    if (heap_.empty()) throw std::logic_error("EventQueue::top on an empty queue");
    return heap_.front();
  }

  Event<Scalar> pop() {
    if (heap_.empty()) throw std::logic_error("EventQueue::pop on an empty queue");
    std::pop_heap(heap_.begin(), heap_.end(), later_);
    Event<Scalar> e = heap_.back();
    heap_.pop_back();
    return e;
  }

  void clear() {
    heap_.clear();
    next_seq_ = 0;
  }

 private:
  // std heap functions build a max-heap; "later" as the less-than makes the earliest the top.
  struct Later {
    bool operator()(const Event<Scalar>& a, const Event<Scalar>& b) const {
      return event_precedes(b, a);
    }
  };
  std::vector<Event<Scalar>> heap_;
  std::uint64_t next_seq_ = 0;
  Later later_;
};

}  // namespace egret
