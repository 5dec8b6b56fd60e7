#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <set>

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

// The engine's pattern: pop the earliest, push releases at now + window per stream (in order,
// so they go to the FIFO runs), sometimes an out-of-order event (to the heap). Every pop must
// be the one an ordered set of the same events gives, seq included; enough releases pile up
// that the runs compact their consumed prefix.
TEST(EventQueue, StreamsOfReleasesComeOutAsFromOneOrderedSet) {
  struct Precedes {
    bool operator()(const E& a, const E& b) const { return egret::event_precedes(a, b); }
  };
  egret::EventQueue<double> q;
  std::set<E, Precedes> reference;
  std::uint64_t seq = 0, s = 987654321;
  auto random = [&s](std::uint64_t n) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (s >> 33) % n;
  };
  auto push = [&](E e) {
    q.push(e);
    e.seq = seq++;
    reference.insert(e);
  };
  const EventKind kinds[] = {EventKind::kInputRelease, EventKind::kRecurrentRelease,
                             EventKind::kReadout, EventKind::kSnapshot};
  for (int k = 0; k < 8; ++k) push(ev(40.0 * k, EventKind::kReadout, 1, 0));
  double now = 0;
  std::size_t popped = 0;
  for (int step = 0; step < 20000; ++step) {
    // A growing phase (1.5 pushes per pop), then a shrinking one (0.5), in which the runs'
    // consumed prefixes pass half of their storage and are dropped.
    for (int k = 0, n = static_cast<int>(random(step < 10000 ? 4 : 2)); k < n; ++k) {
      const EventKind kind = kinds[random(2)];
      const egret::Index layer = static_cast<egret::Index>(random(3));
      const double window = random(50) == 0 ? 0.25 * static_cast<double>(random(40)) : 5.0;
      push(ev(now + window, kind, layer, static_cast<egret::Index>(random(6))));
    }
    if (random(200) == 0) push(ev(now + 1.0, kinds[2 + random(2)], 0, 1));
    if (q.empty()) continue;
    ASSERT_EQ(q.size(), reference.size());
    const E got = q.pop(), want = *reference.begin();
    reference.erase(reference.begin());
    ASSERT_EQ(got.time, want.time) << "pop " << popped;
    ASSERT_EQ(got.kind, want.kind) << "pop " << popped;
    ASSERT_EQ(got.layer, want.layer) << "pop " << popped;
    ASSERT_EQ(got.index, want.index) << "pop " << popped;
    ASSERT_EQ(got.seq, want.seq) << "pop " << popped;
    ASSERT_GE(got.time, now);
    now = got.time;
    ++popped;
  }
  EXPECT_GT(popped, 15000u);
  while (!q.empty()) {
    EXPECT_EQ(q.pop().seq, reference.begin()->seq);
    reference.erase(reference.begin());
  }
  EXPECT_TRUE(reference.empty());
}

// Whatever the layer (even one no engine would push) and with infinite times, the order is
// event_precedes; the queue is reusable after clear().
TEST(EventQueue, AnyLayerAndInfiniteTimesKeepTheOrder) {
  const double inf = std::numeric_limits<double>::infinity();
  egret::EventQueue<double> q;
  for (int round = 0; round < 2; ++round) {
    q.clear();
    std::vector<E> pushed = {
        ev(inf, EventKind::kInputRelease, -1, 0),    ev(1.0, EventKind::kInputRelease, -1, 2),
        ev(2.0, EventKind::kInputRelease, -1, 1),    ev(1.5, EventKind::kInputRelease, 7, 0),
        ev(inf, EventKind::kRecurrentRelease, 0, 3), ev(0.5, EventKind::kRecurrentRelease, 3, 1),
        ev(-inf, EventKind::kSnapshot, 0, 0)};
    for (std::size_t i = 0; i < pushed.size(); ++i) {
      q.push(pushed[i]);
      pushed[i].seq = i;
    }
    std::sort(pushed.begin(), pushed.end(),
              [](const E& a, const E& b) { return egret::event_precedes(a, b); });
    for (const E& want : pushed) {
      ASSERT_FALSE(q.empty());
      const E got = q.pop();
      EXPECT_EQ(got.seq, want.seq) << "round " << round;
      EXPECT_EQ(got.time, want.time) << "round " << round;
    }
    EXPECT_TRUE(q.empty());
  }
}

TEST(EventQueue, EmptyQueueAccessIsAnError) {
  egret::EventQueue<double> q;
  EXPECT_THROW(q.pop(), std::logic_error);
  EXPECT_THROW(q.top(), std::logic_error);
}

}  // namespace
