#include "camera/recording_classifier.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "camera/formats/camera_readers.hpp"
#include "io/hdf5/checkpoint_network.hpp"
#include "sim/batch_runner.hpp"

namespace egret {
namespace {

std::string seconds_text(std::int64_t us) {
  char b[48];
  std::snprintf(b, sizeof b, "%.6f s", static_cast<double>(us) * 1e-6);
  return b;
}

std::string g_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

std::string span_text(const RecordingSpan& s) {
  return "the recording's events span " + std::to_string(s.first_us) + " .. " +
         std::to_string(s.last_us) + " us (" + seconds_text(s.first_us) + " .. " +
         seconds_text(s.last_us) + ")";
}

// Softmax maximum and argmax (first of equal maxima) of logits.
void predict(WindowPrediction& w) {
  const auto top = std::max_element(w.logits.begin(), w.logits.end());
  w.predicted = static_cast<int>(top - w.logits.begin());
  double sum = 0;
  for (double v : w.logits) sum += std::exp(v - *top);
  w.confidence = 1.0 / sum;
}

template <class Scalar>
std::vector<WindowPrediction> classify_windows(const std::string& checkpoint_path,
                                               const Checkpoint& c, const NetworkConfig& cfg,
                                               const CameraRecording& rec,
                                               const RecordingPreprocessing& p,
                                               const std::vector<RecordingWindow>& windows,
                                               int threads) {
  const Network<Scalar> net = network_from_checkpoint<Scalar>(checkpoint_path, c, cfg);
  std::vector<WindowPrediction> out(windows.size());
  for_each_sample(net, windows.size(), threads, [&](std::size_t i, Network<Scalar>& local) {
    const RecordingWindow& w = windows[i];
    const Sample<Scalar> s = cast_sample<Scalar>(
        prepare_recording_window(rec.events, rec.sensor, p, w.start_us, w.label, w.end_us));
    auto opt = s.options(cfg.run_settings());
    opt.record_trace = false;
    const auto r = simulate(local, s.input, opt);
    WindowPrediction& o = out[i];
    o.window = w;
    o.input_events = s.input.size();
    for (const Scalar v : r.readouts.front().logits) o.logits.push_back(static_cast<double>(v));
    predict(o);
  });
  return out;
}

}  // namespace

RecordingSpan recording_span(const CameraRecording& rec, const std::string& origin) {
  if (rec.events.empty()) throw std::invalid_argument(origin + ": the recording holds no events");
  return {rec.events.front().t, rec.events.back().t, rec.events.size()};
}

std::vector<RecordingWindow> recording_windows(const RecordingSpan& span,
                                               const RecordingPreprocessing& p,
                                               const std::vector<GestureLabel>* labels,
                                               const std::string& labels_origin) {
  p.validate();
  std::vector<RecordingWindow> out;
  if (labels) {
    if (labels->empty()) throw std::invalid_argument(labels_origin + ": no labels");
    for (std::size_t i = 0; i < labels->size(); ++i) {
      const GestureLabel& l = (*labels)[i];
      if (l.end_us <= span.first_us || l.start_us > span.last_us)
        throw std::invalid_argument(labels_origin + ": label " + std::to_string(i + 1) +
                                    " (class " + std::to_string(l.cls) + ", " +
                                    std::to_string(l.start_us) + " .. " + std::to_string(l.end_us) +
                                    " us) lies outside the recording: " + span_text(span) +
                                    " (do the labels belong to this recording?)");
      RecordingWindow w;
      w.start_us = l.start_us;
      w.end_us = std::min(l.end_us, l.start_us + p.window_us);
      w.label = l.cls - 1;
      w.partial = w.end_us - (span.last_us + 1) >= p.bin_us;
      out.push_back(w);
    }
    return out;
  }
  const std::uint64_t n =
      detail::steps_between(span.first_us, span.last_us, p.window_us, "recording windows");
  if (n > detail::kMaxWindows)
    throw std::invalid_argument("the recording spans " + std::to_string(n) + " windows of " +
                                std::to_string(p.window_us) + " us, more than the cap of 2^22");
  for (std::uint64_t k = 0; k < n; ++k) {
    RecordingWindow w;
    w.start_us = span.first_us + static_cast<std::int64_t>(k) * p.window_us;
    w.end_us = w.start_us + p.window_us;
    w.partial = w.end_us - (span.last_us + 1) >= p.bin_us;
    out.push_back(w);
  }
  return out;
}

std::vector<std::string> check_recording_window(const RecordingSpan& span, std::int64_t start_us,
                                                std::int64_t window_us, const std::string& origin) {
  const std::int64_t end = start_us + window_us;
  const std::string window = "the window " + std::to_string(start_us) + " .. " +
                             std::to_string(end) + " us (" + seconds_text(start_us) + " .. " +
                             seconds_text(end) + ")";
  if (start_us > span.last_us || end <= span.first_us)
    throw std::invalid_argument(origin + ": " + window +
                                " holds none of its events: " + span_text(span) +
                                "; times are the recording's own (the window starts at its "
                                "first event unless a start is given)");
  std::vector<std::string> notes;
  if (start_us < span.first_us)
    notes.push_back(window + " starts " + seconds_text(span.first_us - start_us) +
                    " before the recording's first event: that part is silent input");
  if (end > span.last_us + 1)
    notes.push_back(window + " ends " + seconds_text(end - span.last_us - 1) +
                    " after the recording's last event: that part is silent input");
  return notes;
}

void check_recording_fits_network(SensorSize sensor, const RecordingPreprocessing& p,
                                  Index network_channels, const std::string& origin) {
  const SensorSize in = p.input_sensor(sensor);
  const Index channels = p.input_channels(sensor);
  if (channels == network_channels) return;
  std::string what =
      sensor.width > 0 && sensor.height > 0
          ? "the " + std::to_string(sensor.width) + "x" + std::to_string(sensor.height) + " sensor"
          : std::string("the recording (its sensor size not stated)");
  if (p.crop) what += " cropped to " + crop_box_text(*p.crop);
  std::string msg = origin + ": " + what + ", pooled by " + g_text(p.pooling) + ", gives " +
                    std::to_string(in.width) + "x" + std::to_string(in.height) +
                    " pixels x 2 polarities = " + std::to_string(channels) +
                    " input channels, but the network has " + std::to_string(network_channels) +
                    " input channels: choose the crop (--crop X,Y,W,H) and/or the pooling "
                    "(--pooling F) so that they match";
  // A square input (the gesture job's) suggests a centred square crop of the sensor.
  const auto side = static_cast<Index>(std::llround(std::sqrt(network_channels / 2.0)));
  if (side * side * 2 == network_channels && sensor.width > 0 && sensor.height > 0) {
    const auto full = static_cast<Index>(std::llround(static_cast<double>(side) / p.pooling));
    if (full <= sensor.width && full <= sensor.height &&
        static_cast<Index>(std::ceil(static_cast<double>(full) * p.pooling)) == side)
      msg += " (e.g. the centred crop " + std::to_string((sensor.width - full) / 2) + "," +
             std::to_string((sensor.height - full) / 2) + "," + std::to_string(full) + "," +
             std::to_string(full) + " with pooling " + g_text(p.pooling) + ")";
  }
  throw std::invalid_argument(msg);
}

std::string RecordingClassification::class_name(int cls) const {
  if (gesture_classes && cls >= 0 && cls < static_cast<int>(kGestureClasses.size()))
    return kGestureClasses[static_cast<std::size_t>(cls)];
  return std::to_string(cls);
}

RecordingClassification classify_recording(const std::string& checkpoint_path,
                                           const std::string& recording_path,
                                           const ClassifyOptions& options) {
  RecordingClassification out;
  const Checkpoint c = read_checkpoint(checkpoint_path);
  const NetworkConfig cfg = checkpoint_network_config(checkpoint_path, c);
  out.precision = precision_name(cfg.precision);
  out.classes = cfg.readout_classes;
  if (out.classes <= 0)
    throw std::invalid_argument(checkpoint_path +
                                ": the checkpoint's network has no readout (readout_classes), so "
                                "it does not classify; use egret simulate for its events");
  out.preprocessing =
      preprocessing_from_config(c.config_text, checkpoint_path, &out.preprocessing_from_task);
  if (!out.preprocessing_from_task)
    out.notes.push_back(checkpoint_path +
                        " has no \"task\" section: the default preprocessing is used");
  if (options.crop) out.preprocessing.crop = options.crop;
  out.preprocessing.validate();
  {
    const nlohmann::json cfg_json = nlohmann::json::parse(c.config_text);
    const auto& task = cfg_json.contains("task") ? cfg_json.at("task") : nlohmann::json();
    out.gesture_classes =
        out.classes == static_cast<Index>(kGestureClasses.size()) &&
        ((task.is_object() && task.value("name", std::string()) == "dvs_gesture") ||
         !options.labels_path.empty());
  }

  CameraRecording rec;
  const CameraFileInfo info =
      read_camera_file(recording_path, [&rec](const CameraEvent* e, std::size_t n) {
        rec.events.insert(rec.events.end(), e, e + n);
      });
  rec.sensor = info.sensor;
  out.format = info.format;
  out.sensor = info.sensor;
  out.span = recording_span(rec, recording_path);
  check_recording_fits_network(rec.sensor, out.preprocessing, cfg.input_channels, recording_path);
  out.input_sensor = out.preprocessing.input_sensor(rec.sensor);
  out.input_channels = out.preprocessing.input_channels(rec.sensor);

  std::vector<GestureLabel> labels;
  if (!options.labels_path.empty()) {
    labels = read_gesture_labels(options.labels_path);
    for (std::size_t i = 0; i < labels.size(); ++i)
      if (labels[i].cls > out.classes)
        throw std::invalid_argument(options.labels_path + ": label " + std::to_string(i + 1) +
                                    " has class " + std::to_string(labels[i].cls) +
                                    ", the network has " + std::to_string(out.classes));
  }
  const auto windows =
      recording_windows(out.span, out.preprocessing,
                        options.labels_path.empty() ? nullptr : &labels, options.labels_path);
  out.windows = with_precision(cfg.precision, [&](auto scalar) {
    return classify_windows<decltype(scalar)>(checkpoint_path, c, cfg, rec, out.preprocessing,
                                              windows, options.threads);
  });
  for (const auto& w : out.windows) {
    if (!w.window.label) continue;
    ++out.labelled;
    out.correct += w.predicted == *w.window.label;
  }
  return out;
}

nlohmann::json classification_json(const RecordingClassification& c) {
  nlohmann::json j;
  j["format"] = c.format;
  j["sensor"] = c.sensor.known() ? nlohmann::json{c.sensor.width, c.sensor.height}
                                 : nlohmann::json(nullptr);  // not recorded in the file
  j["input_sensor"] = {c.input_sensor.width, c.input_sensor.height};
  j["input_channels"] = c.input_channels;
  j["first_us"] = c.span.first_us;
  j["last_us"] = c.span.last_us;
  j["events"] = c.span.events;
  j["preprocessing"] = c.preprocessing.to_task_json();
  j["preprocessing_from_task"] = c.preprocessing_from_task;
  j["precision"] = c.precision;
  j["classes"] = c.classes;
  j["windows"] = nlohmann::json::array();
  for (const auto& w : c.windows) {
    nlohmann::json o;
    o["start_us"] = w.window.start_us;
    o["end_us"] = w.window.end_us;
    o["partial"] = w.window.partial;
    o["label"] = w.window.label ? nlohmann::json(*w.window.label) : nlohmann::json();
    o["label_name"] =
        w.window.label ? nlohmann::json(c.class_name(*w.window.label)) : nlohmann::json();
    o["predicted"] = w.predicted;
    o["predicted_name"] = c.class_name(w.predicted);
    o["confidence"] = w.confidence;
    o["logits"] = w.logits;
    o["input_events"] = w.input_events;
    j["windows"].push_back(o);
  }
  j["labelled"] = c.labelled;
  j["correct"] = c.correct;
  j["accuracy"] = c.labelled > 0 ? nlohmann::json(static_cast<double>(c.correct) / c.labelled)
                                 : nlohmann::json();
  j["notes"] = c.notes;
  return j;
}

}  // namespace egret
