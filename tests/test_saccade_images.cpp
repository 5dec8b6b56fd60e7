// Still images moved in N-MNIST's three saccades in front of the sensor model: the path by hand,
// edges that fire by the direction of motion, N-MNIST's file format round trip, and the
// dataset's layout and determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "camera/datasets/saccade_images.hpp"
#include "camera/formats/camera_readers.hpp"

namespace {

namespace fs = std::filesystem;

// A bright 10x10 square in the middle of a black 28x28 image.
std::vector<std::uint8_t> square() {
  std::vector<std::uint8_t> img(28 * 28, 0);
  for (int y = 9; y < 19; ++y)
    for (int x = 9; x < 19; ++x) img[static_cast<std::size_t>(y) * 28 + x] = 255;
  return img;
}

TEST(SaccadeImages, PathIsTheTriangleWithSmoothStops) {
  egret::SaccadeConfig c;  // a = 3 px, 100 ms per saccade
  auto at = [&](double t) { return egret::saccade_offset(t, c); };
  EXPECT_EQ(at(0), (std::pair<double, double>{0, 0}));
  EXPECT_NEAR(at(100000).first, 1.5, 1e-12);  // (a/2, a)
  EXPECT_NEAR(at(100000).second, 3, 1e-12);
  EXPECT_NEAR(at(200000).first, -1.5, 1e-12);  // (-a/2, a)
  EXPECT_NEAR(at(200000).second, 3, 1e-12);
  EXPECT_EQ(at(300000), (std::pair<double, double>{0, 0}));
  // Half-way along the first leg (raised cosine: half the distance), and still at its ends.
  EXPECT_NEAR(at(50000).first, 0.75, 1e-12);
  EXPECT_NEAR(at(1).second, 0, 1e-6);
  EXPECT_NEAR(at(99999).second, 3, 1e-6);
}

// In the first saccade the view moves right and down (1.5 and 3 px), so the square moves left and
// up on the sensor: its left and top edges turn bright (ON events), its right and bottom edges
// dark (OFF events). The vertical motion is twice the horizontal, so the top and bottom edges,
// spread over x, fire more and pull the mean x of both polarities towards the middle.
TEST(SaccadeImages, EdgesFireByTheDirectionOfMotion) {
  egret::SaccadeConfig c;
  c.shot_noise_rate_hz = 0;
  const auto ev = egret::saccade_events(square(), c, 7);
  double on_x = 0, off_x = 0, on_y = 0, off_y = 0;
  int on = 0, off = 0;
  int per_leg[3] = {0, 0, 0};
  for (const auto& e : ev) {
    ASSERT_LT(e.x, 34);
    ASSERT_LT(e.y, 34);
    ASSERT_GE(e.t, 0);
    ASSERT_LE(e.t, 300000);
    ++per_leg[std::min<int>(2, static_cast<int>(e.t / 100000))];
    if (e.t >= 100000) continue;
    (e.p ? on_x : off_x) += e.x;
    (e.p ? on_y : off_y) += e.y;
    (e.p ? on : off) += 1;
  }
  ASSERT_GT(on, 20);
  ASSERT_GT(off, 20);
  EXPECT_LT(on_x / on + 2, off_x / off);  // left edge (x ~ 12) against right (x ~ 21)
  EXPECT_LT(on_y / on + 4, off_y / off);  // top edge (y ~ 12) against bottom (y ~ 21)
  for (int leg = 0; leg < 3; ++leg) EXPECT_GT(per_leg[leg], 40) << "saccade " << leg;
}

TEST(SaccadeImages, NmnistFilesRoundTripAndRefuseWhatTheFormatCannotHold) {
  const fs::path d = fs::path(::testing::TempDir()) / "egret_nmnist_rt";
  fs::create_directories(d);
  const std::vector<egret::CameraEvent> ev = {
      {0, 0, 0, 1}, {5, 33, 2, 0}, {70000, 7, 33, 1}, {(1 << 23) - 1, 1, 1, 0}};
  egret::write_nmnist_bin((d / "a.bin").string(), ev);
  EXPECT_EQ(fs::file_size(d / "a.bin"), 20u);
  const auto back = egret::read_camera_recording((d / "a.bin").string());
  ASSERT_EQ(back.events.size(), ev.size());
  for (std::size_t i = 0; i < ev.size(); ++i) {
    EXPECT_EQ(back.events[i].t, ev[i].t);
    EXPECT_EQ(back.events[i].x, ev[i].x);
    EXPECT_EQ(back.events[i].y, ev[i].y);
    EXPECT_EQ(back.events[i].p, ev[i].p);
  }
  EXPECT_THROW(egret::write_nmnist_bin((d / "b.bin").string(), {{1 << 23, 0, 0, 1}}),
               std::invalid_argument);  // 23-bit time
  EXPECT_THROW(egret::write_nmnist_bin((d / "b.bin").string(), {{0, 34, 0, 1}}),
               std::invalid_argument);  // outside 34x34
  EXPECT_THROW(egret::write_nmnist_bin((d / "b.bin").string(), {{5, 0, 0, 1}, {4, 0, 0, 1}}),
               std::invalid_argument);  // unsorted
  EXPECT_FALSE(fs::exists(d / "b.bin"));
}

TEST(SaccadeImages, DatasetLayoutIsNmnistsAndDeterministic) {
  const fs::path a = fs::path(::testing::TempDir()) / "egret_saccades_a";
  const fs::path b = fs::path(::testing::TempDir()) / "egret_saccades_b";
  fs::remove_all(a);
  fs::remove_all(b);
  std::vector<std::uint8_t> images = square();
  const auto second = square();
  images.insert(images.end(), second.rbegin(), second.rend());
  egret::SaccadeConfig c;
  c.seed = 3;
  const auto s = egret::write_saccade_dataset(a.string(), "Train", images, {4, 9}, c);
  egret::write_saccade_dataset(b.string(), "Train", images, {4, 9}, c);
  EXPECT_EQ(s.samples, 2u);
  for (const char* f : {"Train/4/00000.bin", "Train/9/00001.bin"}) {
    ASSERT_TRUE(fs::exists(a / f)) << f;
    std::ifstream fa(a / f, std::ios::binary), fb(b / f, std::ios::binary);
    const std::string da((std::istreambuf_iterator<char>(fa)), {}),
        db((std::istreambuf_iterator<char>(fb)), {});
    EXPECT_EQ(da, db) << f;
    EXPECT_EQ(egret::detect_camera_format((a / f).string()), "nmnist");
  }
  // A bad label anywhere refuses the set before any file is written.
  const fs::path refused = fs::path(::testing::TempDir()) / "egret_saccades_refused";
  fs::remove_all(refused);
  EXPECT_THROW(egret::write_saccade_dataset(refused.string(), "Train", images, {4, 10}, c),
               std::invalid_argument);
  EXPECT_FALSE(fs::exists(refused / "Train" / "4"));
  EXPECT_THROW(egret::write_saccade_dataset(a.string(), "../x", images, {4, 9}, c),
               std::invalid_argument);
  EXPECT_THROW(egret::write_saccade_dataset(a.string(), "Train", images, {4}, c),
               std::invalid_argument);
}

}  // namespace
