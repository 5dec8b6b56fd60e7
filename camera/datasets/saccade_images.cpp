#include "camera/datasets/saccade_images.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "camera/dvs_sensor_model.hpp"
#include "camera/formats/camera_readers.hpp"

namespace egret {
namespace {

void check(const SaccadeConfig& c) {
  if (c.image_size <= 0 || c.sensor_size < c.image_size || c.sensor_size > 256 ||
      !(c.saccade_us > 0) || !(c.frame_us > 0) || !(c.amplitude_px >= 0) ||
      !std::isfinite(c.amplitude_px) || !(c.background > 0 && c.background < 1) ||
      !(c.threshold > 0) || !(c.shot_noise_rate_hz >= 0) ||
      3 * c.saccade_us >= static_cast<double>(1 << 23) || c.saccade_us / c.frame_us > 1e6)
    throw std::invalid_argument(
        "saccade images: need 0 < image_size <= sensor_size <= 256, saccade_us > 0 with 3 "
        "saccades under 2^23 us (N-MNIST's time field), frame_us > 0, amplitude >= 0, 0 < "
        "background < 1, threshold > 0, noise >= 0");
}

// Bilinear sample of the image at (x, y) in image pixels (centres at k + 0.5); the screen's
// black outside.
double sample(const std::vector<std::uint8_t>& img, int n, double x, double y) {
  const double fx = x - 0.5, fy = y - 0.5;
  const int x0 = static_cast<int>(std::floor(fx)), y0 = static_cast<int>(std::floor(fy));
  const double ax = fx - x0, ay = fy - y0;
  auto at = [&](int i, int j) -> double {
    if (i < 0 || j < 0 || i >= n || j >= n) return 0;
    return img[static_cast<std::size_t>(j) * n + i] / 255.0;
  };
  return (1 - ay) * ((1 - ax) * at(x0, y0) + ax * at(x0 + 1, y0)) +
         ay * ((1 - ax) * at(x0, y0 + 1) + ax * at(x0 + 1, y0 + 1));
}

}  // namespace

std::pair<double, double> saccade_offset(double t_us, const SaccadeConfig& c) {
  const double a = c.amplitude_px;
  const double corners[4][2] = {{0, 0}, {a / 2, a}, {-a / 2, a}, {0, 0}};
  if (t_us <= 0) return {0, 0};
  const double legs = t_us / c.saccade_us;
  if (legs >= 3) return {0, 0};
  const int leg = static_cast<int>(legs);
  const double u = legs - leg;
  const double s = 0.5 - 0.5 * std::cos(3.141592653589793 * u);  // raised cosine: smooth stops
  return {corners[leg][0] + s * (corners[leg + 1][0] - corners[leg][0]),
          corners[leg][1] + s * (corners[leg + 1][1] - corners[leg][1])};
}

std::vector<CameraEvent> saccade_events(const std::vector<std::uint8_t>& image,
                                        const SaccadeConfig& c, std::uint64_t seed) {
  check(c);
  const int n = c.image_size, w = c.sensor_size;
  if (image.size() != static_cast<std::size_t>(n) * n)
    throw std::invalid_argument("saccade images: an image has " + std::to_string(image.size()) +
                                " bytes, expected " + std::to_string(n * n));
  DvsSensorConfig sc;
  sc.width = sc.height = w;
  sc.threshold = c.threshold;
  sc.shot_noise_rate_hz = c.shot_noise_rate_hz;
  sc.seed = seed;
  DvsSensorModel sensor(sc);
  // The image centred on the sensor, then moved by the view's offset (the sensor moves, so the
  // image moves the other way on it).
  const double margin = 0.5 * (w - n);
  std::vector<float> frame(static_cast<std::size_t>(w) * w);
  std::vector<CameraEvent> out;
  const double end = 3 * c.saccade_us;
  for (double t = 0; t <= end + 0.5 * c.frame_us; t += c.frame_us) {
    const auto [dx, dy] = saccade_offset(t, c);
    for (int y = 0; y < w; ++y)
      for (int x = 0; x < w; ++x) {
        const double v = sample(image, n, x + 0.5 - margin + dx, y + 0.5 - margin + dy);
        frame[static_cast<std::size_t>(y) * w + x] =
            static_cast<float>(c.background + (1 - c.background) * v);
      }
    sensor.add_frame(frame, t, out);
  }
  return out;
}

SaccadeDatasetSummary write_saccade_dataset(const std::string& dir, const std::string& split,
                                            const std::vector<std::uint8_t>& images,
                                            const std::vector<int>& labels,
                                            const SaccadeConfig& cfg) {
  namespace fs = std::filesystem;
  check(cfg);
  const std::size_t per = static_cast<std::size_t>(cfg.image_size) * cfg.image_size;
  if (images.size() != labels.size() * per)
    throw std::invalid_argument("saccade images: " + std::to_string(images.size()) +
                                " image bytes for " + std::to_string(labels.size()) +
                                " labels of " + std::to_string(per) + " bytes each");
  if (split.empty() || split.find_first_of("/\\.") != std::string::npos)
    throw std::invalid_argument("saccade images: the split must be a plain name, got '" + split +
                                "'");
  SaccadeDatasetSummary summary;
  // FNV-1a of the split's name (std::hash differs between standard libraries).
  std::uint64_t split_salt = 0xcbf29ce484222325ull;
  for (const char ch : split)
    split_salt = (split_salt ^ static_cast<unsigned char>(ch)) * 0x100000001b3ull;
  split_salt &= 0xFFFFFFFFu;
  // Every label checked before the first file: a refused set leaves no files behind.
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] < 0 || labels[i] > 9)
      throw std::invalid_argument("saccade images: label " + std::to_string(labels[i]) +
                                  " of image " + std::to_string(i) + " is outside 0-9");
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::vector<std::uint8_t> img(
        images.begin() + static_cast<std::ptrdiff_t>(i * per),
        images.begin() + static_cast<std::ptrdiff_t>((i + 1) * per));
    const std::uint64_t seed = cfg.seed * 0x9E3779B97F4A7C15ull + (split_salt << 32) + i;
    const auto events = saccade_events(img, cfg, seed);
    const fs::path folder = fs::path(dir) / split / std::to_string(labels[i]);
    fs::create_directories(folder);
    char name[32];
    std::snprintf(name, sizeof name, "%05zu.bin", i);
    write_nmnist_bin((folder / name).string(), events, {cfg.sensor_size, cfg.sensor_size});
    ++summary.samples;
    summary.events += events.size();
  }
  return summary;
}

}  // namespace egret
