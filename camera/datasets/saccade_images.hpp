// Still images as event-camera recordings, the way N-MNIST was recorded (Orchard et al. 2015): the
// image sits still on a screen and the sensor moves in three saccades along an isosceles triangle,
// 100 ms each; the contrast-threshold sensor model (camera/dvs_sensor_model.hpp) turns the moving
// view into events. A 28x28 image on a 34x34 sensor, written in N-MNIST's layout
// (<Split>/<label>/<index>.bin, 5-byte events), so that the N-MNIST reader and every camera
// transform take it as they take a real recording. Deterministic per seed. docs/datasets.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "camera/camera_event.hpp"

namespace egret {

struct SaccadeConfig {
  int image_size = 28;         // square, row-major, 0-255
  int sensor_size = 34;        // N-MNIST's ATIS crop
  double saccade_us = 100000;  // each of the three
  double amplitude_px = 3;     // the triangle's height and base, in pixels
  double frame_us = 1000;      // rendering rate
  double background = 0.1;     // the screen's black, relative to white = 1
  double threshold = 0.15;     // the sensor's mean contrast threshold
  double shot_noise_rate_hz = 0.2;
  std::uint64_t seed = 1;
};

// The view's offset [px] (x, y) at time t [us]: the triangle (0, 0) -> (a/2, a) -> (-a/2, a) ->
// (0, 0), each leg with a smooth (raised-cosine) velocity profile, still before 0 and after the
// last saccade.
std::pair<double, double> saccade_offset(double t_us, const SaccadeConfig& c);

// One image's events (times from 0 to 3 saccades), with the sensor seeded by `seed`.
std::vector<CameraEvent> saccade_events(const std::vector<std::uint8_t>& image,
                                        const SaccadeConfig& c, std::uint64_t seed);

struct SaccadeDatasetSummary {
  std::size_t samples = 0;
  std::uint64_t events = 0;
};

// Writes images[i] (image_size^2 bytes each, labels[i] in 0-9) as <dir>/<split>/<label>/<i>.bin
// (split e.g. "Train" or "Test", as N-MNIST names them); sample i's sensor is seeded from
// (cfg.seed, split, i), so a file does not depend on the others or on the order of writing.
SaccadeDatasetSummary write_saccade_dataset(const std::string& dir, const std::string& split,
                                            const std::vector<std::uint8_t>& images,
                                            const std::vector<int>& labels,
                                            const SaccadeConfig& cfg);

}  // namespace egret
