// Python bindings of a trained network on a camera recording (camera/recording_preprocessing.hpp,
// camera/recording_classifier.hpp): the same C++ functions as `egret simulate --input
// RECORDING` and `egret classify`: egret.prepare_recording, egret.recording_preprocessing,
// egret.classify_recording, and the list of camera formats the readers accept.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "camera/formats/camera_readers.hpp"
#include "camera/recording_classifier.hpp"
#include "camera/recording_preprocessing.hpp"
#include "io/hdf5/checkpoint.hpp"
#include "python/src/bindings.hpp"
#include "python/src/sample.hpp"

namespace egret::python {
namespace {

using RecordingEventArray = py::array_t<CameraEvent, py::array::c_style | py::array::forcecast>;

// (x, y, width, height) or "X,Y,W,H", or None.
std::optional<CropBox> crop_box_of(const py::object& crop) {
  if (crop.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(crop)) return parse_crop_box(crop.cast<std::string>(), "crop");
  std::vector<long long> v;
  try {
    v = crop.cast<std::vector<long long>>();
  } catch (const py::cast_error&) {
    throw std::invalid_argument("crop: expected (x, y, width, height) or \"X,Y,W,H\"");
  }
  if (v.size() != 4) throw std::invalid_argument("crop: expected (x, y, width, height)");
  return parse_crop_box(std::to_string(v[0]) + "," + std::to_string(v[1]) + "," +
                            std::to_string(v[2]) + "," + std::to_string(v[3]),
                        "crop");
}

// The preprocessing of a task section (dict), a checkpoint (path) or the defaults (None); a
// crop replaces the source's.
RecordingPreprocessing recording_preprocessing_of(const py::object& source,
                                                  const py::object& crop) {
  RecordingPreprocessing p;
  if (py::isinstance<py::dict>(source)) {
    const std::string text = py::module_::import("json").attr("dumps")(source).cast<std::string>();
    p = RecordingPreprocessing::from_task_json(nlohmann::json::parse(text), "preprocessing");
  } else if (!source.is_none()) {
    std::string path;
    try {
      path = py::module_::import("os").attr("fspath")(source).cast<std::string>();
    } catch (const py::error_already_set&) {
      throw std::invalid_argument(
          "preprocessing: expected a task section (dict), a checkpoint path or None");
    }
    Checkpoint c;
    {
      py::gil_scoped_release release;
      c = read_checkpoint(path);
    }
    p = preprocessing_from_config(c.config_text, path, nullptr);
  }
  if (auto box = crop_box_of(crop)) p.crop = box;
  p.validate();
  return p;
}

py::object json_to_python(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump());
}

}  // namespace

void bind_recording(py::module_& m) {
  py::list formats;
  for (const auto& f : kCameraFormats) formats.append(py::make_tuple(f.id, f.name));
  m.attr("CAMERA_FORMATS") = formats;

  m.def(
      "recording_preprocessing",
      [](const py::object& source, const py::object& crop) {
        return json_to_python(recording_preprocessing_of(source, crop).to_task_json());
      },
      py::arg("preprocessing") = py::none(), py::kw_only(), py::arg("crop") = py::none(),
      "The preprocessing a source describes, complete and checked, as a task section dict: "
      "pooling, bin_us, window_us, denoise_us, coalesce, readout_from (and crop when set). "
      "preprocessing: a task section dict (the keys the gesture job stores in its checkpoint; "
      "missing ones keep the defaults 0.25, 5000, 1500000, 0, 'sum', 0.2), a checkpoint path "
      "(its configuration's \"task\" section; the defaults without one) or None (the "
      "defaults). crop: (x, y, width, height) or 'X,Y,W,H', replacing the source's.");

  m.def(
      "prepare_recording",
      [](const py::object& events, std::pair<int, int> sensor, const py::object& preprocessing,
         std::optional<std::int64_t> start_us, const py::object& crop,
         std::optional<std::int64_t> end_us, std::optional<int> label) {
        const RecordingPreprocessing p = recording_preprocessing_of(preprocessing, crop);
        if (sensor.first < 0 || sensor.second < 0)
          throw std::invalid_argument(
              "prepare_recording: sensor_size must be (width, height) >= 0");
        if (label && *label < 0)
          throw std::invalid_argument("prepare_recording: label must be >= 0");
        const py::object as_events =
            py::module_::import("egret._egret").attr("as_camera_events");  // checks and converts
        const auto array = as_events(events).cast<RecordingEventArray>();
        CameraRecording rec;
        rec.sensor = {sensor.first, sensor.second};
        rec.events.assign(array.data(), array.data() + array.shape(0));
        const RecordingSpan span = recording_span(rec, "prepare_recording");
        const std::int64_t start = start_us ? *start_us : span.first_us;
        std::int64_t length = p.window_us;
        if (end_us && *end_us > start) length = std::min(length, *end_us - start);
        const auto notes = check_recording_window(span, start, length, "prepare_recording");
        PySample out;
        {
          py::gil_scoped_release release;
          out.s = prepare_recording_window(rec.events, rec.sensor, p, start, label, end_us);
        }
        out.has_labels = label.has_value();
        const py::object warn = py::module_::import("warnings").attr("warn");
        if (!end_us)  // a labelled window is the label's: no notes about its edges
          for (const auto& n : notes) warn(n);
        return out;
      },
      py::arg("events"), py::arg("sensor_size"), py::arg("preprocessing") = py::none(),
      py::arg("start_us") = py::none(), py::kw_only(), py::arg("crop") = py::none(),
      py::arg("end_us") = py::none(), py::arg("label") = py::none(),
      "One window of a camera recording as the network's input (a Sample): the C++ function "
      "of `egret simulate --input RECORDING` and `egret classify`. events: camera events "
      "(read_events, or any x, y, p, t array) sorted by time, in the recording's own "
      "timestamps; sensor_size: (width, height), (0, 0) if unknown (then a crop is needed). "
      "preprocessing: as recording_preprocessing (a task section dict, a checkpoint path or "
      "None). start_us: the window's start (default: the first event). The window "
      "[start_us, start_us + window_us), clipped to end_us if given (as a labelled gesture), "
      "is shifted to start at 0 ms, cropped, denoised, pooled and coalesced per bin_us; "
      "end_time is window_us in ms, with one readout window [readout_from * end, end] and "
      "`label` as its class. A window holding none of the events is an error giving the "
      "recording's time span; one reaching beyond them warns (without end_us).");

  m.def(
      "classify_recording",
      [](const py::object& checkpoint, const py::object& recording, const py::object& labels,
         const py::object& crop, int threads, bool summary) {
        const py::object fspath = py::module_::import("os").attr("fspath");
        ClassifyOptions o;
        if (!labels.is_none()) o.labels_path = fspath(labels).cast<std::string>();
        o.crop = crop_box_of(crop);
        if (threads < 0) throw std::invalid_argument("classify_recording: threads must be >= 0");
        o.threads = threads;
        const std::string ckpt = fspath(checkpoint).cast<std::string>();
        const std::string rec = fspath(recording).cast<std::string>();
        nlohmann::json report;
        {
          py::gil_scoped_release release;
          report = classification_json(classify_recording(ckpt, rec, o));
        }
        return json_to_python(summary ? report : report.at("windows"));
      },
      py::arg("checkpoint"), py::arg("recording"), py::arg("labels") = py::none(),
      py::arg("crop") = py::none(), py::kw_only(), py::arg("threads") = 0,
      py::arg("summary") = false,
      "Classify a recording (any format read_events reads) with a checkpoint's network and the "
      "preprocessing of its \"task\" section, as `egret classify` does: with labels (a "
      "DvsGesture label CSV: class,startTime_usec,endTime_usec) one window per label, from its "
      "start, window_us long and clipped to its end; without, consecutive windows of window_us "
      "from the first event. crop: (x, y, width, height) or 'X,Y,W,H'. Returns one dict per "
      "window: start_us, end_us (the recording's timestamps), partial (the recording ends "
      "a bin or more before the window does), label and label_name (None without labels), "
      "predicted, predicted_name (DVS "
      "gesture names for a gesture checkpoint or label file), confidence (the softmax "
      "maximum), logits, input_events; with summary=True the whole report of `egret classify "
      "--json` (format, sensor, span, preprocessing, windows, accuracy, notes).");
}

}  // namespace egret::python
