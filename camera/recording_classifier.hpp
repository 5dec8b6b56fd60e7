// A trained network on a camera recording: the windows of a recording (per DvsGesture label, or
// consecutive from its first event), the checks that the recording fits the network, and the
// classification of every window with a checkpoint's network and preprocessing. `egret classify`
// and egret.classify_recording are this one function; `egret simulate --input RECORDING` uses
// the checks.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "camera/camera_event.hpp"
#include "camera/datasets/dvs_gesture.hpp"
#include "camera/recording_preprocessing.hpp"

namespace egret {

// The time span of a recording's events (sorted by time): an empty recording is an error naming
// `origin`.
struct RecordingSpan {
  std::int64_t first_us = 0, last_us = 0;
  std::uint64_t events = 0;
};
RecordingSpan recording_span(const CameraRecording& rec, const std::string& origin);

// One window of a recording: the events with start_us <= t < end_us (the recording's own
// timestamps), as one sample of window_us (prepare_recording_window).
struct RecordingWindow {
  std::int64_t start_us = 0, end_us = 0;
  std::optional<int> label;  // 0-based class, from a label file
  bool partial = false;      // the recording ends inside the window, a bin or more before its end
};

// Without labels: consecutive windows of p.window_us from the first event, the last one holding
// the last event (partial when the recording ends inside it). With labels (DvsGesture label
// file): one window per label, from its start, p.window_us long, clipped to the label's end (as
// the gesture job's loader and prepare() do); a label whose [start, end) lies outside the
// recording's span is an error naming `labels_origin`, the label and the span.
std::vector<RecordingWindow> recording_windows(const RecordingSpan& span,
                                               const RecordingPreprocessing& p,
                                               const std::vector<GestureLabel>* labels,
                                               const std::string& labels_origin);

// What a window [start, start + window_us) of a recording means, or an error: a window that
// holds none of the recording's events is an error (it starts after the last event, or ends
// before the first: the recording's timestamps are its own, e.g. from 135 s, and the message
// gives them); notes (returned) when it starts before the first event or ends after the last.
std::vector<std::string> check_recording_window(const RecordingSpan& span, std::int64_t start_us,
                                                std::int64_t window_us, const std::string& origin);

// The recording after crop and pooling must give the network's input channels; else an error
// naming both numbers, the sensor, the crop and the pooling, with a crop that would fit.
void check_recording_fits_network(SensorSize sensor, const RecordingPreprocessing& p,
                                  Index network_channels, const std::string& origin);

struct ClassifyOptions {
  std::string labels_path;  // DvsGesture label CSV; empty: consecutive windows
  std::optional<CropBox> crop;
  int threads = 0;  // windows in parallel; 0: all cores (results do not depend on it)
};

struct WindowPrediction {
  RecordingWindow window;
  std::uint64_t input_events = 0;  // the engine's input events of the window's sample
  std::vector<double> logits;      // at the readout window
  int predicted = 0;               // argmax of the logits (first of equal maxima)
  double confidence = 0;           // max of softmax(logits)
};

struct RecordingClassification {
  std::string format;  // the camera reader's name of the file format
  SensorSize sensor;   // the recording's
  SensorSize input_sensor;
  Index input_channels = 0;
  RecordingSpan span;
  RecordingPreprocessing preprocessing;
  bool preprocessing_from_task = false;  // else the checkpoint has no "task" section: defaults
  std::string precision;                 // the checkpoint configuration's
  Index classes = 0;
  bool gesture_classes = false;  // names from kGestureClasses (a DvsGesture task or label file)
  std::vector<WindowPrediction> windows;
  int correct = 0, labelled = 0;
  std::vector<std::string> notes;
  std::string class_name(int cls) const;  // the gesture's name, else the number
};

// Loads the checkpoint (its network must have a readout), reads the recording (any format of
// camera/formats/camera_readers.hpp) and the labels, checks the sizes and classifies every
// window with the checkpoint's preprocessing (crop from the options).
RecordingClassification classify_recording(const std::string& checkpoint_path,
                                           const std::string& recording_path,
                                           const ClassifyOptions& options);

// The result as `egret classify --json` writes it and egret.classify_recording returns it.
nlohmann::json classification_json(const RecordingClassification& c);

}  // namespace egret
