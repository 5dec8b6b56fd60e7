// Event-camera transforms against examples worked by hand with tonic's semantics.
#include <gtest/gtest.h>

#include "camera/camera_transforms.hpp"

namespace {

using egret::CameraEvent;
using E = CameraEvent;

std::vector<std::int64_t> times(const std::vector<E>& v) {
  std::vector<std::int64_t> t;
  for (const auto& e : v) t.push_back(e.t);
  return t;
}

TEST(CameraTransforms, DenoiseKeepsEventsWithARecentFourNeighbour) {
  // filter_time 10, memories start at 10 (tonic):
  //  t=0  (1,1): neighbours remember 10 > 0          -> kept (the start-up quirk of tonic)
  //  t=5  (2,1): neighbour (1,1) remembers 10 > 5    -> kept
  //  t=30 (3,3): neighbours remember 10              -> dropped
  //  t=31 (3,2): neighbour (3,3) remembers 40 > 31   -> kept
  //  t=50 (3,2): own pixel does not count; (3,3) 40, (2,2) 10, (3,1) 10 -> dropped
  //  t=100 (0,0): neighbours remember 10             -> dropped
  const std::vector<E> in = {{0, 1, 1, 1},  {5, 2, 1, 0},  {30, 3, 3, 1},
                             {31, 3, 2, 1}, {50, 3, 2, 0}, {100, 0, 0, 1}};
  EXPECT_EQ(times(egret::denoise(in, {4, 4}, 10)), (std::vector<std::int64_t>{0, 5, 31}));
  EXPECT_THROW(egret::denoise(in, {3, 3}, 10), std::invalid_argument);  // (3,3) is outside
}

TEST(CameraTransforms, RefractoryPeriodPerPixel) {
  // Pixel (1,1) at 0, 3, 5, 12 with period 5: 3 is within 5 of the kept 0; 5 is not (5 - 0 = 5);
  // 12 - 5 = 7. Pixel (2,2) at 4 is independent.
  const std::vector<E> in = {{0, 1, 1, 1}, {3, 1, 1, 1}, {4, 2, 2, 0}, {5, 1, 1, 0}, {12, 1, 1, 1}};
  EXPECT_EQ(times(egret::refractory_period(in, {4, 4}, 5)),
            (std::vector<std::int64_t>{0, 4, 5, 12}));
}

TEST(CameraTransforms, DownsampleAndCrop) {
  egret::SensorSize s{128, 128};
  const auto d = egret::downsample({{0, 127, 5, 1}, {1, 4, 3, 0}}, s, 0.25);
  EXPECT_EQ(s.width, 32);
  EXPECT_EQ(s.height, 32);
  EXPECT_EQ(d[0].x, 31);
  EXPECT_EQ(d[0].y, 1);
  EXPECT_EQ(d[1].x, 1);
  EXPECT_EQ(d[1].y, 0);
  egret::SensorSize c{10, 10};
  const auto cr = egret::crop({{0, 2, 2, 1}, {1, 5, 6, 0}, {2, 8, 8, 1}}, c, 4, 4, 4, 4);
  ASSERT_EQ(cr.size(), 1u);
  EXPECT_EQ(cr[0].x, 1);
  EXPECT_EQ(cr[0].y, 2);
  EXPECT_EQ(c.width, 4);
  EXPECT_THROW(egret::crop({}, c, 2, 2, 4, 4), std::invalid_argument);
}

TEST(CameraTransforms, SliceByTime) {
  const std::vector<E> in = {{0, 0, 0, 0}, {4, 0, 0, 0},  {5, 0, 0, 0},
                             {9, 0, 0, 0}, {10, 0, 0, 0}, {12, 0, 0, 0}};
  auto s = egret::slice_by_time(in, 5);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(times(s[0]), (std::vector<std::int64_t>{0, 4}));
  EXPECT_EQ(times(s[1]), (std::vector<std::int64_t>{5, 9}));
  EXPECT_EQ(times(s[2]), (std::vector<std::int64_t>{10, 12}));
  s = egret::slice_by_time(in, 5, 2);  // stride 3: [0,5) [3,8) [6,11) [9,14) [12,17)
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(times(s[1]), (std::vector<std::int64_t>{4, 5}));
  EXPECT_EQ(times(s[2]), (std::vector<std::int64_t>{9, 10}));
  EXPECT_EQ(times(s[3]), (std::vector<std::int64_t>{9, 10, 12}));
  EXPECT_EQ(times(s[4]), (std::vector<std::int64_t>{12}));
  EXPECT_EQ(times(egret::crop_time(in, 4, 10)), (std::vector<std::int64_t>{4, 5, 9}));
}

TEST(CameraTransforms, FramesAndInputEvents) {
  const std::vector<E> in = {{100, 1, 0, 1}, {150, 1, 0, 1}, {180, 0, 1, 0}, {260, 1, 0, 0}};
  std::size_t bins = 0;
  const auto f = egret::to_frames(in, {2, 2}, 100, 2, bins);
  ASSERT_EQ(bins, 2u);  // [100, 200), [200, 300)
  // frame[bin][p][y][x]
  auto at = [&](int b, int p, int y, int x) { return f[((b * 2 + p) * 2 + y) * 2 + x]; };
  EXPECT_EQ(at(0, 1, 0, 1), 2u);
  EXPECT_EQ(at(0, 0, 1, 0), 1u);
  EXPECT_EQ(at(1, 0, 0, 1), 1u);
  unsigned total = 0;
  for (auto v : f) total += v;
  EXPECT_EQ(total, 4u);
  // Coalesced into input events, polarities kept: channel (p * 2 + y) * 2 + x.
  const auto s = egret::to_input_stream(in, {2, 2}, false, 100, 100, egret::Coalesce::kSum);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s.channels(), 8);
  EXPECT_DOUBLE_EQ(s[0].time, 0.1);  // end of the first bin, in ms
  EXPECT_EQ(s[0].channel, 2);        // p=0, y=1, x=0
  EXPECT_EQ(s[0].value, 1.0);
  EXPECT_EQ(s[1].channel, 5);  // p=1, y=0, x=1: two events
  EXPECT_EQ(s[1].value, 2.0);
  EXPECT_DOUBLE_EQ(s[2].time, 0.2);
  EXPECT_EQ(s[2].channel, 1);
  const auto b = egret::to_input_stream(egret::merge_polarities(in), {2, 2}, true, 100, 100,
                                        egret::Coalesce::kBinary);
  EXPECT_EQ(b.channels(), 4);
  ASSERT_EQ(b.size(), 3u);
  for (std::size_t i = 0; i < b.size(); ++i) EXPECT_EQ(b[i].value, 1.0);
}

// Spans, counts and sizes that once overflowed are refused before anything is allocated, with
// the counts in the message; extreme but valid times give exact results.
TEST(CameraTransforms, HugeSpansAndSensorsAreRefusedBeforeAllocating) {
  const std::vector<E> wide = {{0, 0, 0, 1}, {1, 1, 0, 1}, {std::int64_t{1} << 49, 2, 0, 0}};
  std::size_t bins = 7;
  auto err = [](auto&& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err([&] {
              egret::to_frames(wide, {128, 128}, 1, 1, bins);
            })
                .find("562949953421313 bins of 1 us x 1 polarities x 128x128 pixels exceed the "
                      "cap of 2^28 counts"),
            std::string::npos);
  // The whole int64 range: the span itself does not fit int64.
  const std::vector<E> extreme = {{INT64_MIN, 0, 0, 1}, {INT64_MAX, 0, 0, 1}};
  EXPECT_NE(err([&] {
              egret::to_frames(extreme, {4, 4}, 1, 1, bins);
            }).find("do not form a valid span"),
            std::string::npos);
  EXPECT_NE(err([&] { egret::slice_by_time(extreme, 1000); }).find("do not form a valid span"),
            std::string::npos);
  EXPECT_NE(err([&] {
              egret::slice_by_time(wide, 1000);
            }).find("562949953422 windows of stride 1000 us, more than the cap of 2^22"),
            std::string::npos);
  // Within the cap, the same span in large bins: exact counts (bins 0 and 1).
  const auto frames = egret::to_frames(wide, {4, 1}, std::int64_t{1} << 48, 1, bins);
  ASSERT_EQ(bins, 3u);
  ASSERT_EQ(frames.size(), 12u);
  EXPECT_EQ(frames[0], 1u);          // (0, 0) in bin 0
  EXPECT_EQ(frames[1], 1u);          // (1, 0) in bin 0
  EXPECT_EQ(frames[2 * 4 + 2], 1u);  // (2, 0) in bin 2
  // Sensors beyond 2^26 pixels for per-pixel state.
  const std::vector<E> one = {{5, 0, 0, 1}};
  EXPECT_NE(err([&] {
              egret::denoise(one, {65535, 65535}, 10);
            }).find("a 65535x65535 sensor has more than 2^26 pixels"),
            std::string::npos);
  EXPECT_NE(err([&] {
              egret::refractory_period(one, {65535, 65535}, 10);
            }).find("2^26 pixels"),
            std::string::npos);
  EXPECT_NE(err([&] {
              egret::to_input_stream(one, {65535, 65535}, false, 0, 10, egret::Coalesce::kSum);
            }).find("2^26 pixels"),
            std::string::npos);
  // Events far from t0: the difference does not fit int64.
  EXPECT_NE(err([&] {
              egret::to_input_stream({{INT64_MAX, 0, 0, 1}}, {2, 2}, false, INT64_MIN, 10,
                                     egret::Coalesce::kSum);
            }).find("before t0 or too far from it"),
            std::string::npos);
  // A crop box whose corner overflows int is refused, not wrapped into the sensor.
  egret::SensorSize s{64, 64};
  EXPECT_THROW(egret::crop(one, s, INT32_MAX, 0, 2, 2), std::invalid_argument);
}

TEST(CameraTransforms, ExtremeTimesDoNotOverflowPerPixelState) {
  // Refractory period: the first event of a pixel is always kept, whatever its time; a later
  // one within the period is dropped; differences beyond int64 count as far apart.
  const std::vector<E> ev = {{INT64_MIN, 0, 0, 1},
                             {INT64_MIN + 5, 0, 0, 1},
                             {INT64_MAX - 1, 0, 0, 1},
                             {INT64_MAX, 0, 0, 1}};
  EXPECT_EQ(times(egret::refractory_period(ev, {1, 1}, 10)),
            (std::vector<std::int64_t>{INT64_MIN, INT64_MAX - 1}));
  // Denoise: a pixel remembering t + filter_time saturates at INT64_MAX instead of wrapping to a
  // negative time (which made its neighbour's later event look isolated). The first event has
  // no recent neighbour and is dropped; the second has one and is kept.
  const std::vector<E> late = {{INT64_MAX - 3, 1, 0, 1}, {INT64_MAX - 2, 0, 0, 1}};
  EXPECT_EQ(times(egret::denoise(late, {2, 1}, 100)), (std::vector<std::int64_t>{INT64_MAX - 2}));
}

}  // namespace
