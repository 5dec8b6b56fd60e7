// The sparse layer's list of earliest crossings (models/continuous_egru/earliest_crossings.hpp)
// against a brute force: after any sequence of updates (and the rebuilds it asks for), its head is
// the unit of smallest time (ties to the smallest index), it lists every unit at the head's time,
// and a unit is listed exactly when its time is below the bound.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "models/continuous_egru/earliest_crossings.hpp"

namespace {

using egret::EarliestCrossings;
using egret::Index;

const double kUnknown = std::numeric_limits<double>::infinity();  // a unit's time after reset()

// The smallest time and its first unit by a pass over all units; -1 when none is finite.
std::pair<double, Index> brute_force_earliest(const std::vector<double>& times) {
  double best = std::numeric_limits<double>::infinity();
  Index unit = -1;
  for (std::size_t m = 0; m < times.size(); ++m)
    if (times[m] < best) {
      best = times[m];
      unit = static_cast<Index>(m);
    }
  return {best, unit};
}

void check_against_brute_force(EarliestCrossings<double>& list, const std::vector<double>& times) {
  const auto n = static_cast<Index>(times.size());
  if (list.needs_rebuild()) list.rebuild(times.data(), n);
  const auto [best, unit] = brute_force_earliest(times);
  if (unit < 0) {
    ASSERT_TRUE(list.empty());
    return;
  }
  ASSERT_FALSE(list.empty());
  ASSERT_EQ(list.first_unit(), unit);
  ASSERT_EQ(list.first_time(), best);
  ASSERT_LT(best, list.bound());
  std::vector<Index> at, expected;
  list.units_at(best, at);
  for (Index m = 0; m < n; ++m)
    if (times[static_cast<std::size_t>(m)] == best) expected.push_back(m);
  ASSERT_EQ(at, expected);
  std::size_t below = 0;  // the units below the bound, each listed once
  for (double t : times) below += t < list.bound() ? 1 : 0;
  EXPECT_EQ(list.size(), below);
}

// Unit m's time set to t, the list told of the move (from +inf for a unit never set).
void set_time(EarliestCrossings<double>& list, std::vector<double>& times, Index m, double t) {
  const double before = times[static_cast<std::size_t>(m)];
  times[static_cast<std::size_t>(m)] = t;
  list.update(m, before, t);
}

// Times drawn from a few values (ties are frequent), +inf (never crosses) and NaN.
double draw_time(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> pick(0, 39);
  const int k = pick(rng);
  if (k == 0) return std::numeric_limits<double>::infinity();
  if (k == 1) return std::numeric_limits<double>::quiet_NaN();
  return 0.5 * (k % 13);
}

TEST(EarliestCrossings, HeadAndTiesMatchABruteForceUnderRandomUpdates) {
  for (const Index n : {1, 3, 16, 17, 40, 300}) {
    SCOPED_TRACE("units " + std::to_string(n));
    std::mt19937_64 rng(static_cast<std::uint64_t>(n));
    EarliestCrossings<double> list;
    list.reset();
    std::vector<double> times(static_cast<std::size_t>(n), kUnknown);
    for (Index m = 0; m < n; ++m) set_time(list, times, m, draw_time(rng));  // as after reset()
    check_against_brute_force(list, times);
    std::uniform_int_distribution<Index> unit(0, n - 1);
    std::uniform_int_distribution<int> touched(1, 1 + static_cast<int>(n) / 5);
    for (int round = 0; round < 2000; ++round) {
      // a crossing: the head moves later (or to +inf), then a few other units change
      if (!list.empty() && round % 2 == 0) {
        set_time(list, times, list.first_unit(), list.first_time() + 7.0);
      }
      for (int k = touched(rng); k > 0; --k) {
        set_time(list, times, unit(rng), draw_time(rng));
      }
      check_against_brute_force(list, times);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(EarliestCrossings, MoreTiesThanItsCapacityAreAllListed) {
  const Index n = 50;
  EarliestCrossings<double> list;
  list.reset();
  std::vector<double> times(static_cast<std::size_t>(n), 3.0);
  times[7] = 1.0;
  list.rebuild(times.data(), n);
  std::vector<Index> at;
  list.units_at(1.0, at);
  EXPECT_EQ(at, std::vector<Index>{7});
  set_time(list, times, 7, 5.0);  // the head leaves: 49 units tie at 3.0, more than kCapacity
  check_against_brute_force(list, times);
  at.clear();
  list.units_at(3.0, at);
  EXPECT_EQ(at.size(), 49u);
}

TEST(EarliestCrossings, NoFiniteTimeMeansEmptyUnderAnInfiniteBound) {
  const Index n = 20;
  EarliestCrossings<double> list;
  list.reset();
  std::vector<double> times(static_cast<std::size_t>(n), kUnknown);
  for (Index m = 0; m < n; ++m)
    set_time(list, times, m, m == 3 ? std::numeric_limits<double>::quiet_NaN() : kUnknown);
  EXPECT_TRUE(list.empty());
  EXPECT_FALSE(list.needs_rebuild());
  EXPECT_EQ(list.bound(), std::numeric_limits<double>::infinity());
}

}  // namespace
