// Python bindings of the event-camera side: file readers and writers, tonic-style transforms,
// the engine's input from camera events, the DVS128 Gesture layout, the synthetic gesture
// generator and the DVS sensor model. Camera events are numpy structured arrays of
// egret.CAMERA_EVENT_DTYPE (t int64 [us], x, y uint16, p uint8); arrays from other tools (tonic's
// x, y, p, t records of any integer or bool dtype) are converted with checks.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <limits>
#include <string>
#include <vector>

#include "camera/camera_transforms.hpp"
#include "camera/datasets/dvs_gesture.hpp"
#include "camera/datasets/saccade_images.hpp"
#include "camera/datasets/synthetic_gesture_dataset.hpp"
#include "camera/formats/camera_readers.hpp"
#include "camera/formats/frame_files.hpp"
#include "python/src/bindings.hpp"
#include "python/src/numpy_conversions.hpp"

namespace egret::python {
namespace {

using EventArray = py::array_t<CameraEvent>;

py::array_t<CameraEvent> to_numpy(const std::vector<CameraEvent>& ev) {
  return py::array_t<CameraEvent>(static_cast<py::ssize_t>(ev.size()), ev.data());
}
// The same without a copy: the array owns the events (a recording can be gigabytes).
py::array_t<CameraEvent> to_numpy(std::vector<CameraEvent>&& ev) {
  if (ev.empty()) return to_numpy(ev);
  auto* owned = new std::vector<CameraEvent>(std::move(ev));
  const py::capsule free_events(owned,
                                [](void* p) { delete static_cast<std::vector<CameraEvent>*>(p); });
  return py::array_t<CameraEvent>(static_cast<py::ssize_t>(owned->size()), owned->data(),
                                  free_events);
}

std::vector<std::int64_t> field(const py::array& a, const char* name, const char* what) {
  const py::dict fields = a.dtype().attr("fields");
  if (!fields.contains(name))
    throw std::invalid_argument(std::string(what) + ": camera events need fields x, y, p, t; '" +
                                name + "' is missing");
  const py::array column = a[py::str(name)];
  const char kind = column.dtype().kind();
  if (kind != 'i' && kind != 'u' && kind != 'b')
    throw std::invalid_argument(std::string(what) + ": field '" + name +
                                "' must have an integer or bool dtype");
  if (kind == 'u' &&
      column.dtype().itemsize() == 8) {  // uint64 above 2^63 - 1: refused, not wrapped
    using U64 = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>;
    const U64 u = py::cast<U64>(column);
    for (py::ssize_t i = 0; i < u.shape(0); ++i)
      if (u.data()[i] > static_cast<std::uint64_t>(INT64_MAX))
        throw std::invalid_argument(std::string(what) + ": event " + std::to_string(i) +
                                    " has field '" + name + "' = " + std::to_string(u.data()[i]) +
                                    ", beyond the int64 range");
  }
  const I64 v = py::cast<I64>(column);
  return {v.data(), v.data() + v.shape(0)};
}

// Camera events from a structured array (x, y, p, t fields; t in microseconds, non-decreasing;
// p in {0, 1}, or -1 for OFF as some datasets write it).
std::vector<CameraEvent> from_numpy(const py::handle& obj, const char* what) {
  const py::array a = py::array::ensure(obj);
  if (!a || a.ndim() != 1 || a.dtype().attr("fields").is_none())
    throw std::invalid_argument(std::string(what) +
                                ": expected a 1-D structured array with fields x, y, p, t");
  const auto x = field(a, "x", what), y = field(a, "y", what), p = field(a, "p", what),
             t = field(a, "t", what);
  std::vector<CameraEvent> out(x.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (x[i] < 0 || x[i] > 65535 || y[i] < 0 || y[i] > 65535)
      throw std::invalid_argument(std::string(what) + ": event " + std::to_string(i) +
                                  " has a coordinate outside [0, 65535]");
    if (p[i] != 0 && p[i] != 1 && p[i] != -1)
      throw std::invalid_argument(std::string(what) + ": event " + std::to_string(i) +
                                  " has polarity " + std::to_string(p[i]) +
                                  " (expected 0/1 or -1/1)");
    if (i > 0 && t[i] < t[i - 1])
      throw std::invalid_argument(std::string(what) + ": event " + std::to_string(i) +
                                  " is earlier than event " + std::to_string(i - 1) +
                                  " (times must be non-decreasing)");
    out[i] = {t[i], static_cast<std::uint16_t>(x[i]), static_cast<std::uint16_t>(y[i]),
              static_cast<std::uint8_t>(p[i] == 1 ? 1 : 0)};
  }
  return out;
}

SensorSize to_sensor(const std::pair<int, int>& wh, const char* what) {
  if (wh.first <= 0 || wh.second <= 0)
    throw std::invalid_argument(std::string(what) + ": sensor_size must be (width, height) > 0");
  return {wh.first, wh.second};
}

py::tuple sensor_tuple(const SensorSize& s) {
  return py::make_tuple(s.width, s.height);
}

// Reading and writing camera files.
void bind_camera_files(py::module_& m) {
  m.def(
      "as_camera_events",
      [](const py::object& events) { return to_numpy(from_numpy(events, "as_camera_events")); },
      py::arg("events"),
      "Camera events from any structured array with fields x, y, p, t (e.g. tonic's), checked "
      "and converted to CAMERA_EVENT_DTYPE.");

  m.def(
      "read_events",
      [](const std::string& path) {
        CameraRecording r;
        {
          py::gil_scoped_release release;
          r = read_camera_recording(path);
        }
        return py::make_tuple(to_numpy(std::move(r.events)), sensor_tuple(r.sensor));
      },
      py::arg("path"),
      "Read an event-camera file (Prophesee EVT 2.0/3.0 .raw, .dat, AEDAT 2.0/3.1/4.0, N-MNIST "
      ".bin, .npy, HDF5 arrays), by extension and header; returns (events, (width, height)), "
      "width/height 0 when the file does not say.");
  m.def(
      "write_evt3",
      [](const std::string& path, const py::object& events, std::pair<int, int> sensor) {
        const auto ev = from_numpy(events, "write_evt3");
        py::gil_scoped_release release;
        write_evt3(path, ev, to_sensor(sensor, "write_evt3"));
      },
      py::arg("path"), py::arg("events"), py::arg("sensor_size"),
      "Write events as a Prophesee EVT 3.0 file.");
  m.def(
      "write_aedat31",
      [](const std::string& path, const py::object& events, std::pair<int, int> sensor) {
        const auto ev = from_numpy(events, "write_aedat31");
        py::gil_scoped_release release;
        write_aedat31(path, ev, to_sensor(sensor, "write_aedat31"));
      },
      py::arg("path"), py::arg("events"), py::arg("sensor_size") = std::pair<int, int>{128, 128},
      "Write events as an AEDAT 3.1 file (the DVS128 Gesture format).");
}

// Transforms with tonic's semantics (camera/camera_transforms.hpp).
void bind_event_transforms(py::module_& m) {
  m.def(
      "crop_time",
      [](const py::object& e, std::int64_t start, std::int64_t end) {
        return to_numpy(crop_time(from_numpy(e, "crop_time"), start, end));
      },
      py::arg("events"), py::arg("start"), py::arg("end"), "Events with start <= t < end (us).");
  m.def(
      "slice_by_time",
      [](const py::object& e, std::int64_t length, std::int64_t overlap) {
        py::list out;
        for (const auto& w : slice_by_time(from_numpy(e, "slice_by_time"), length, overlap))
          out.append(to_numpy(w));
        return out;
      },
      py::arg("events"), py::arg("length"), py::arg("overlap") = 0,
      "Consecutive time windows of `length` us (tonic SliceByTime); at most 2^22 windows.");
  m.def(
      "denoise",
      [](const py::object& e, std::pair<int, int> s, std::int64_t filter_time) {
        return to_numpy(denoise(from_numpy(e, "denoise"), to_sensor(s, "denoise"), filter_time));
      },
      py::arg("events"), py::arg("sensor_size"), py::arg("filter_time"),
      "Drop events without a 4-neighbour event in the last filter_time us (tonic Denoise).");
  m.def(
      "refractory_period",
      [](const py::object& e, std::pair<int, int> s, std::int64_t period) {
        return to_numpy(refractory_period(from_numpy(e, "refractory_period"),
                                          to_sensor(s, "refractory_period"), period));
      },
      py::arg("events"), py::arg("sensor_size"), py::arg("period"),
      "Drop events less than `period` us after the pixel's last kept event.");
  m.def(
      "downsample",
      [](const py::object& e, std::pair<int, int> s, double factor) {
        SensorSize sensor = to_sensor(s, "downsample");
        auto out = downsample(from_numpy(e, "downsample"), sensor, factor);
        return py::make_tuple(to_numpy(out), sensor_tuple(sensor));
      },
      py::arg("events"), py::arg("sensor_size"), py::arg("factor"),
      "Spatial downsampling x' = floor(x factor) (tonic Downsample); returns (events, size).");
  m.def(
      "crop",
      [](const py::object& e, std::pair<int, int> s, int x0, int y0, int width, int height) {
        SensorSize sensor = to_sensor(s, "crop");
        auto out = crop(from_numpy(e, "crop"), sensor, x0, y0, width, height);
        return py::make_tuple(to_numpy(out), sensor_tuple(sensor));
      },
      py::arg("events"), py::arg("sensor_size"), py::arg("x0"), py::arg("y0"), py::arg("width"),
      py::arg("height"), "Spatial crop, shifted to the origin; returns (events, size).");
  m.def(
      "merge_polarities",
      [](const py::object& e) { return to_numpy(merge_polarities(from_numpy(e, "merge"))); },
      py::arg("events"), "Every event becomes polarity 0 (tonic MergePolarities).");
  m.def(
      "to_frames",
      [](const py::object& e, std::pair<int, int> s, std::int64_t bin_length, int polarities) {
        const SensorSize sensor = to_sensor(s, "to_frames");
        std::size_t bins = 0;
        const auto f = to_frames(from_numpy(e, "to_frames"), sensor, bin_length, polarities, bins);
        py::array_t<std::uint32_t> a(
            {static_cast<py::ssize_t>(bins), static_cast<py::ssize_t>(polarities),
             static_cast<py::ssize_t>(sensor.height), static_cast<py::ssize_t>(sensor.width)});
        std::copy(f.begin(), f.end(), a.mutable_data());
        return a;
      },
      py::arg("events"), py::arg("sensor_size"), py::arg("bin_length"), py::arg("polarities") = 2,
      "Event counts per (bin, polarity, y, x) (tonic ToFrame with a time window). Refused (with "
      "the counts) beyond 2^28 counts (1 GiB) before anything is allocated.");
}

// Camera events as the engine's input, and the DVS sensor model that makes them from frames.
void bind_engine_input(py::module_& m) {
  m.def(
      "to_input",
      [](const py::object& e, std::pair<int, int> s, std::int64_t bin_length,
         const std::string& coalesce, bool merged_polarity, std::int64_t t0) {
        if (coalesce != "sum" && coalesce != "binary")
          throw std::invalid_argument("to_input: coalesce must be 'sum' or 'binary'");
        const auto stream =
            to_input_stream(from_numpy(e, "to_input"), to_sensor(s, "to_input"), merged_polarity,
                            t0, bin_length, coalesce == "sum" ? Coalesce::kSum : Coalesce::kBinary);
        std::vector<double> t, v;
        std::vector<std::int64_t> c;
        for (const auto& ev : stream.events()) {
          t.push_back(ev.time);
          c.push_back(ev.channel);
          v.push_back(ev.value);
        }
        return py::make_tuple(vector_to_numpy(t), vector_to_numpy(c), vector_to_numpy(v),
                              stream.channels());
      },
      py::arg("events"), py::arg("sensor_size"), py::arg("bin_length"), py::kw_only(),
      py::arg("coalesce") = "sum", py::arg("merged_polarity") = false, py::arg("t0") = 0,
      "The engine's input events: one per channel (p, y, x) and time bin of bin_length us, at "
      "the bin's end, time in ms relative to t0, value = count ('sum') or 1 ('binary'); returns "
      "(t, channel, value, channels).");
  m.def(
      "emulate_events_from_frames",
      [](const std::string& images_txt, double threshold, double threshold_spread,
         double refractory_us, double leak_rate_hz, double shot_noise_rate_hz, std::uint64_t seed) {
        DvsSensorConfig c;
        c.threshold = threshold;
        c.threshold_spread = threshold_spread;
        c.refractory_us = refractory_us;
        c.leak_rate_hz = leak_rate_hz;
        c.shot_noise_rate_hz = shot_noise_rate_hz;
        c.seed = seed;
        CameraRecording r;
        {
          py::gil_scoped_release release;
          r = emulate_events_from_frames(images_txt, c);
        }
        return py::make_tuple(to_numpy(r.events), sensor_tuple(r.sensor));
      },
      py::arg("images_txt"), py::kw_only(), py::arg("threshold") = 0.2,
      py::arg("threshold_spread") = 0.15, py::arg("refractory_us") = 500,
      py::arg("leak_rate_hz") = 0.1, py::arg("shot_noise_rate_hz") = 0.5, py::arg("seed") = 1,
      "DVS events from a list of PNG frames (images.txt: 'time_s path' lines) with the sensor "
      "model; returns (events, (width, height)).");
}

// The DVS128 Gesture layout and the synthetic generator.
void bind_gesture_datasets(py::module_& m) {
  py::list classes;
  for (const char* c : kGestureClasses) classes.append(c);
  m.attr("GESTURE_CLASSES") = classes;
  m.def(
      "load_gesture_split",
      [](const std::string& dir, const std::string& split, std::int64_t slice_us) {
        std::vector<GestureSample> samples;
        {
          py::gil_scoped_release release;
          samples = load_gesture_split(dir, split, slice_us);
        }
        py::list out;
        for (const auto& g : samples) {
          py::dict d;
          d["label"] = g.label;
          d["trial"] = g.trial;
          d["start_us"] = g.start_us;
          d["events"] = to_numpy(g.events);
          out.append(d);
        }
        return out;
      },
      py::arg("directory"), py::arg("split"), py::arg("slice_us") = 0,
      "Samples of a DVS128 Gesture directory (real or synthetic): split 'train' or 'test'; "
      "slice_us > 0 cuts gestures into windows. Each sample: {label 0-10, trial, start_us, "
      "events (times relative to the start)}.");
  m.def(
      "write_synthetic_gesture_dataset",
      [](const std::string& dir, int train_users, int test_users, int lightings_per_user,
         std::vector<std::string> lightings, double gesture_us, double gap_us, double frame_us,
         int threads, std::uint64_t seed) {
        SyntheticGestureConfig c;
        c.train_users = train_users;
        c.test_users = test_users;
        c.lightings_per_user = lightings_per_user;
        c.lightings = std::move(lightings);
        c.gesture_us = gesture_us;
        c.gap_us = gap_us;
        c.frame_us = frame_us;
        c.threads = threads;
        c.seed = seed;
        SyntheticGestureSummary s;
        {
          py::gil_scoped_release release;
          s = write_synthetic_gesture_dataset(dir, c);
        }
        py::dict d;
        d["trials"] = s.trials;
        d["events"] = s.events;
        return d;
      },
      py::arg("directory"), py::kw_only(), py::arg("train_users") = 23, py::arg("test_users") = 6,
      py::arg("lightings_per_user") = 2, py::arg("lightings") = std::vector<std::string>{},
      py::arg("gesture_us") = 1.5e6, py::arg("gap_us") = 0.3e6, py::arg("frame_us") = 2000,
      py::arg("threads") = 0, py::arg("seed") = 1,
      "Write a synthetic DVS128 Gesture-style directory (11 gestures per user and lighting; users "
      "01-23 train, 24-29 test as in the real set; each user under `lightings_per_user` of the "
      "five conditions fluorescent, fluorescent_led, led, natural, lab, or under exactly "
      "`lightings`); returns {trials, events}. The files do not depend on `threads`.");
}

// Still images moved in saccades in front of the sensor model (N-MNIST's recording).
void bind_saccade_images(py::module_& m) {
  auto config = [](double saccade_us, double amplitude_px, std::uint64_t seed) {
    SaccadeConfig c;
    c.saccade_us = saccade_us;
    c.amplitude_px = amplitude_px;
    c.seed = seed;
    return c;
  };
  auto image_bytes = [](const py::array& a, std::size_t count) {
    const auto img = py::array_t<std::uint8_t, py::array::c_style>::ensure(a);
    if (!img || img.ndim() != 3 || img.shape(0) != static_cast<py::ssize_t>(count) ||
        img.shape(1) != 28 || img.shape(2) != 28)
      throw std::invalid_argument(
          "write_saccade_dataset: images must be uint8 of shape (len(labels), 28, 28)");
    return std::vector<std::uint8_t>(img.data(), img.data() + img.size());
  };
  m.def(
      "write_saccade_dataset",
      [config, image_bytes](const std::string& dir, const std::string& split,
                            const py::array& images, const std::vector<int>& labels,
                            double saccade_us, double amplitude_px, std::uint64_t seed) {
        const std::vector<std::uint8_t> bytes = image_bytes(images, labels.size());
        SaccadeDatasetSummary s;
        {
          py::gil_scoped_release release;
          s = write_saccade_dataset(dir, split, bytes, labels,
                                    config(saccade_us, amplitude_px, seed));
        }
        py::dict d;
        d["samples"] = s.samples;
        d["events"] = s.events;
        return d;
      },
      py::arg("directory"), py::arg("split"), py::arg("images"), py::arg("labels"), py::kw_only(),
      py::arg("saccade_us") = 100000.0, py::arg("amplitude_px") = 3.0, py::arg("seed") = 1,
      "Write 28x28 uint8 images (e.g. Fashion-MNIST) as N-MNIST-style recordings: three "
      "saccades of the sensor model over each still image, <directory>/<split>/<label>/<i>.bin "
      "(read them with read_events). Returns {samples, events}.");
}

}  // namespace

void bind_camera(py::module_& m) {
  PYBIND11_NUMPY_DTYPE(CameraEvent, t, x, y, p);
  m.attr("CAMERA_EVENT_DTYPE") = py::dtype::of<CameraEvent>();
  bind_camera_files(m);
  bind_event_transforms(m);
  bind_engine_input(m);
  bind_gesture_datasets(m);
  bind_saccade_images(m);
}

}  // namespace egret::python
