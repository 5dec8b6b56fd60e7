// From a camera recording to a network's input: one description of the preprocessing (spatial
// crop, denoise, pooling, time bins, window, readout) shared by the gesture job's checkpoint
// ("task" section), `egret simulate --input RECORDING`, `egret classify` and Python
// (egret.prepare_recording, egret.classify_recording), so that a trained network sees at run time
// exactly what it saw in training.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "camera/camera_event.hpp"
#include "camera/camera_transforms.hpp"
#include "train/sample.hpp"

namespace egret {

// A sub-rectangle [x, x + width) x [y, y + height) of the sensor (e.g. 128x128 of a 320x240
// recording), taken before pooling.
struct CropBox {
  int x = 0, y = 0, width = 0, height = 0;
  friend bool operator==(const CropBox& a, const CropBox& b) {
    return a.x == b.x && a.y == b.y && a.width == b.width && a.height == b.height;
  }
};

// "X,Y,W,H" (integers, X, Y >= 0, W, H > 0); errors name `what` (e.g. "--crop").
CropBox parse_crop_box(const std::string& text, const std::string& what);
std::string crop_box_text(const CropBox& c);  // "X,Y,W,H"

const char* coalesce_name(Coalesce c);  // "sum", "binary"
Coalesce parse_coalesce(const std::string& name, const std::string& what);

struct RecordingPreprocessing {
  double pooling = 0.25;             // spatial factor in (0, 1]: 128 -> 32
  std::int64_t bin_us = 5000;        // events coalesced per channel and bin
  std::int64_t window_us = 1500000;  // one sample: a window of this length
  std::int64_t denoise_us = 0;       // tonic Denoise filter time; 0: off
  Coalesce coalesce = Coalesce::kSum;
  double readout_from = 0.2;  // the readout window: [readout_from * end, end] of the window
  std::optional<CropBox> crop;

  // Each field in its range (errors name the field, the value and the range): pooling in (0, 1],
  // bin_us in [1, window_us], window_us in [1, 2^53] and a multiple of bin_us (the last bin's
  // input event falls at the window's end), denoise_us >= 0, readout_from in [0, 1), crop
  // X, Y >= 0 and W, H in [1, 65535].
  void validate() const;

  // The "task" section of a checkpoint's configuration (cli/gesture_command.cpp writes it):
  // "pooling", "bin_us", "window_us", and optionally "denoise_us" (0), "coalesce" ("sum"),
  // "readout_from" (0.2), "crop" ([X, Y, W, H]); "name", "dataset", "epochs", "seed" and "model"
  // describe the training and are ignored. Any other key is an error naming it; missing keys
  // keep the defaults above. Validated.
  static RecordingPreprocessing from_task_json(const nlohmann::json& task,
                                               const std::string& origin);
  // The keys above (crop only when set); from_task_json(to_task_json()) == *this.
  nlohmann::json to_task_json() const;

  // The network's input for a recording of `sensor`: after the crop and the pooling, and its
  // channel count (pixels x 2 polarities).
  SensorSize input_sensor(SensorSize sensor) const;
  Index input_channels(SensorSize sensor) const;

  friend bool operator==(const RecordingPreprocessing& a, const RecordingPreprocessing& b) {
    return a.pooling == b.pooling && a.bin_us == b.bin_us && a.window_us == b.window_us &&
           a.denoise_us == b.denoise_us && a.coalesce == b.coalesce &&
           a.readout_from == b.readout_from && a.crop == b.crop;
  }
};

// One line for people: "crop X,Y,W,H, denoise off, pooling 0.25 -> 32x32 pixels x 2 polarities
// = 2048 input channels, 5000 us bins (sum), windows of 1500000 us, readout from 0.2".
std::string describe_preprocessing(const RecordingPreprocessing& p, SensorSize sensor);

// The preprocessing a checkpoint's configuration text describes: its "task" section, or the
// defaults when it has none (`has_task` says which). Errors name `origin`.
RecordingPreprocessing preprocessing_from_config(const std::string& config_text,
                                                 const std::string& origin, bool* has_task);

// One sample from the recording's events (sorted by time, coordinates in `sensor`): the events
// with t_start_us <= t < min(t_start_us + window_us, events_end_us), in this order:
//   1. time window, then times shifted so that the window starts at 0: the gesture job's samples
//      start at 0 (camera/datasets/dvs_gesture.cpp shifts each label to its start), and denoise's
//      per-pixel memory starts at filter_time, i.e. it assumes times from 0;
//   2. spatial crop (if any), to the rectangle the network was trained on;
//   3. denoise (if denoise_us > 0) at full resolution, where a pixel's neighbours are the
//      sensor's (after pooling, one pixel merges several and isolated noise looks supported);
//      then, in training only, `view`: a random rotation, zoom and shift (augmentation);
//   4. pooling (downsample by `pooling`);
//   5. coalescing into the engine's input events per bin_us bin (values: counts or 1), in ms.
// end_time = window_us in ms (also for a window clipped by events_end_us, as the gesture job's
// samples of shorter gestures); one readout window [readout_from * end, end]; `label` (if given)
// its class. For the defaults this is exactly the gesture job's prepare() of a gesture.
Sample<double> prepare_recording_window(const std::vector<CameraEvent>& events, SensorSize sensor,
                                        const RecordingPreprocessing& p, std::int64_t t_start_us,
                                        std::optional<int> label = std::nullopt,
                                        std::optional<std::int64_t> events_end_us = std::nullopt,
                                        const SpatialAugmentation* view = nullptr);

}  // namespace egret
