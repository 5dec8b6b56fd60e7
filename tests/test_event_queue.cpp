#include <gtest/gtest.h>

#include "events/event_queue.hpp"

namespace {

using E = egret::Event<double>;
using egret::EventKind;

E ev(double t, EventKind k, egret::Index layer, egret::Index index, double value = 0) {
  E e;
  e.time = t;
  e.kind = k;
  e.layer = layer;
  e.index = index;
  e.value = value;
  return e;
}

TEST(EventQueue, OrdersByTimeKindLayerIndexThenInsertion) {
  egret::EventQueue<double> q;
  q.push(ev(2.0, EventKind::kInput, 0, 0));
  q.push(ev(1.0, EventKind::kReadout, 0, 0));
  q.push(ev(1.0, EventKind::kInternal, 1, 0));
  q.push(ev(1.0, EventKind::kInternal, 0, 5));
  q.push(ev(1.0, EventKind::kInput, 0, 3, 1.0));
  q.push(ev(1.0, EventKind::kInput, 0, 3, 2.0));  // exact duplicate key: insertion order
  q.push(ev(1.0, EventKind::kRecurrentRelease, 0, 9));
  q.push(ev(1.0, EventKind::kInputRelease, 2, 0));
  q.push(ev(0.5, EventKind::kSnapshot, 0, 0));
  std::vector<std::tuple<double, EventKind, egret::Index, egret::Index, double>> got;
  while (!q.empty()) {
    const E e = q.pop();
    got.emplace_back(e.time, e.kind, e.layer, e.index, e.value);
  }
  const std::vector<std::tuple<double, EventKind, egret::Index, egret::Index, double>> want = {
      {0.5, EventKind::kSnapshot, 0, 0, 0},
      {1.0, EventKind::kInputRelease, 2, 0, 0},
      {1.0, EventKind::kRecurrentRelease, 0, 9, 0},
      {1.0, EventKind::kInput, 0, 3, 1.0},
      {1.0, EventKind::kInput, 0, 3, 2.0},
      {1.0, EventKind::kInternal, 0, 5, 0},
      {1.0, EventKind::kInternal, 1, 0, 0},
      {1.0, EventKind::kReadout, 0, 0, 0},
      {2.0, EventKind::kInput, 0, 0, 0}};
  EXPECT_EQ(got, want);
}

TEST(EventQueue, ManyRandomEventsComeOutSorted) {
  egret::EventQueue<double> q;
  std::uint64_t s = 12345;
  for (int i = 0; i < 5000; ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    q.push(ev(static_cast<double>((s >> 33) % 100), EventKind::kInput, 0,
              static_cast<egret::Index>((s >> 20) % 7)));
  }
  E prev = q.pop();
  while (!q.empty()) {
    const E e = q.pop();
    EXPECT_TRUE(egret::event_precedes(prev, e));
    prev = e;
  }
}

TEST(EventQueue, EmptyQueueAccessIsAnError) {
  egret::EventQueue<double> q;
  EXPECT_THROW(q.pop(), std::logic_error);
  EXPECT_THROW(q.top(), std::logic_error);
}

}  // namespace
