// The DVS sensor model on real video (shared/data/davis_frames: a textured scene moving past a
// DAVIS240C): the events must look like a DVS's: ON/OFF balance, events concentrated on edges,
// a plausible rate; and bad frame lists are named errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "camera/formats/frame_files.hpp"
#include "tests/test_support.hpp"

namespace {

namespace fs = std::filesystem;

std::string frames_dir() {
  return (fs::path(EGRET_SOURCE_DIR) / ".." / "shared" / "data" / "davis_frames").string();
}

// Pixels in the top 10 % of the spatial gradient of a frame.
std::vector<char> strong_edges(const egret::GrayFrame& f) {
  std::vector<float> g(f.pixels.size(), 0);
  auto p = [&](int x, int y) { return f.pixels[static_cast<std::size_t>(y) * f.width + x]; };
  for (int y = 1; y < f.height - 1; ++y)
    for (int x = 1; x < f.width - 1; ++x)
      g[static_cast<std::size_t>(y) * f.width + x] =
          std::hypot(p(x + 1, y) - p(x - 1, y), p(x, y + 1) - p(x, y - 1));
  std::vector<float> sorted = g;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(sorted.size() * 9 / 10),
                   sorted.end());
  const float cut = sorted[sorted.size() * 9 / 10];
  std::vector<char> mask(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) mask[i] = g[i] > cut;
  return mask;
}

TEST(FrameEmulation, RealFramesGiveDvsLikeEvents) {
  const auto list = egret::read_frame_list(frames_dir() + "/images.txt");
  ASSERT_EQ(list.size(), 20u);
  const auto first = egret::read_png_gray(list.front().path);
  ASSERT_EQ(first.width, 240);
  ASSERT_EQ(first.height, 180);
  const auto [lo, hi] = std::minmax_element(first.pixels.begin(), first.pixels.end());
  EXPECT_LT(*lo, 0.2f);
  EXPECT_GT(*hi, 0.4f);

  egret::DvsSensorConfig cfg;
  cfg.seed = 5;
  cfg.eps = 0.1;  // APS frames are noisy in the dark: a lin-log floor as in v2e
  const auto rec = egret::emulate_events_from_frames(frames_dir() + "/images.txt", cfg);
  EXPECT_EQ(rec.sensor.width, 240);
  const double seconds = list.back().time_s - list.front().time_s;
  const double rate = static_cast<double>(rec.events.size()) / seconds;
  // Edges: events between frames k and k + 1 should sit on the strong edges of frame k (the
  // brightness change of a moving scene is its spatial gradient times the motion).
  std::vector<std::vector<char>> masks;
  for (const auto& e : list) masks.push_back(strong_edges(egret::read_png_gray(e.path)));
  std::size_t on = 0, on_edges = 0, k = 0;
  for (std::size_t i = 0; i < rec.events.size(); ++i) {
    const auto& e = rec.events[i];
    on += e.p;
    if (i > 0) {
      ASSERT_GE(e.t, rec.events[i - 1].t);
    }
    while (k + 1 < list.size() && static_cast<double>(e.t) > list[k + 1].time_s * 1e6) ++k;
    on_edges += masks[k][static_cast<std::size_t>(e.y) * 240 + e.x];
  }
  const double n = static_cast<double>(rec.events.size());
  const double on_share = static_cast<double>(on) / n,
               edge_share = static_cast<double>(on_edges) / n;
  std::printf(
      "  %zu events in %.3f s (%.0f events/s), ON share %.3f, %.1f %% on the 10 %% strongest "
      "edges\n",
      rec.events.size(), seconds, rate, on_share, 100 * edge_share);
  EXPECT_GT(rate, 1e5);  // a textured scene moving past a 240x180 DVS: 10^5 - 10^6 events/s
  EXPECT_LT(rate, 3e6);
  EXPECT_GT(on_share, 0.3);
  EXPECT_LT(on_share, 0.7);
  EXPECT_GT(edge_share, 0.2);  // twice the share of a uniform spread
}

TEST(FrameEmulation, BadFrameListsAreNamedErrors) {
  const fs::path dir = fs::path(::testing::TempDir()) / "egret_frames";
  fs::create_directories(dir);
  std::ofstream(dir / "images.txt") << "0.0 a.png\n0.0 b.png\n";
  EXPECT_NE(egret::testing::error_of([&] {
              egret::read_frame_list((dir / "images.txt").string());
            }).find("images.txt:2: frame times must increase"),
            std::string::npos);
  std::ofstream(dir / "images.txt") << "0.0 missing.png\n";
  EXPECT_NE(egret::testing::error_of([&] {
              egret::emulate_events_from_frames((dir / "images.txt").string(), {});
            }).find("cannot read PNG"),
            std::string::npos);
}

}  // namespace
