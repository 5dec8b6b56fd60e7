#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "events/input_stream.hpp"
#include "events/synthetic_input.hpp"

namespace {

using In = egret::InputEvent<double>;

TEST(InputStream, SortsByTimeThenChannelKeepingEqualEventsInOrder) {
  egret::InputStream<double> s({{3.0, 1, 1.0}, {1.0, 2, 1.0}, {1.0, 0, 5.0}, {1.0, 0, 6.0}}, 3);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].time, 1.0);
  EXPECT_EQ(s[0].channel, 0);
  EXPECT_EQ(s[0].value, 5.0);
  EXPECT_EQ(s[1].value, 6.0);
  EXPECT_EQ(s[2].channel, 2);
  EXPECT_EQ(s[3].time, 3.0);
}

TEST(InputStream, PoissonInputHasTheRequestedRate) {
  // 10 channels x 100 Hz x 10 s = 10,000 expected events; Poisson sd = 100.
  const auto s = egret::poisson_input<double>(10, 100.0, 10000.0, 3);
  EXPECT_NEAR(static_cast<double>(s.size()), 10000.0, 400.0);
  EXPECT_LT(s.last_time(), 10000.0);
  std::vector<int> per_channel(10, 0);
  for (const auto& e : s.events()) ++per_channel[e.channel];
  for (int c : per_channel) EXPECT_NEAR(c, 1000, 130);
}

}  // namespace
