#include "camera/recording_preprocessing.hpp"

#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <stdexcept>

#include "io/config/json_fields.hpp"

namespace egret {
namespace {

std::string number_text(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

[[noreturn]] void bad_field(const std::string& field, const std::string& value,
                            const std::string& range) {
  throw std::invalid_argument("preprocessing: " + field + " = " + value + " is outside " + range);
}

// The sensor after the crop (the crop box must lie inside a known sensor; an unknown sensor,
// 0x0, needs a crop).
SensorSize cropped_sensor(SensorSize sensor, const std::optional<CropBox>& crop) {
  if (crop) {
    const std::int64_t x1 = std::int64_t{crop->x} + crop->width,
                       y1 = std::int64_t{crop->y} + crop->height;
    if ((sensor.width > 0 && x1 > sensor.width) || (sensor.height > 0 && y1 > sensor.height))
      throw std::invalid_argument("crop " + crop_box_text(*crop) + " (x, y, width, height) " +
                                  "does not lie inside the " + std::to_string(sensor.width) + "x" +
                                  std::to_string(sensor.height) + " sensor");
    return {crop->width, crop->height};
  }
  if (sensor.width <= 0 || sensor.height <= 0)
    throw std::invalid_argument(
        "the recording does not state its sensor size: give a crop X,Y,W,H (e.g. 0,0,128,128) "
        "to say which pixels are the network's");
  return sensor;
}

}  // namespace

CropBox parse_crop_box(const std::string& text, const std::string& what) {
  std::vector<long long> v;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    char* end = nullptr;
    const long long x = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || end != part.c_str() + part.size())
      throw std::invalid_argument(what + ": expected X,Y,W,H (integers), got '" + text + "'");
    v.push_back(x);
  }
  if (v.size() != 4 || (!text.empty() && text.back() == ','))
    throw std::invalid_argument(what + ": expected X,Y,W,H (4 integers), got '" + text + "'");
  if (v[0] < 0 || v[1] < 0 || v[0] > kMaxSensorSide || v[1] > kMaxSensorSide)
    throw std::invalid_argument(what + ": X and Y must be in [0, 65535], got '" + text + "'");
  if (v[2] < 1 || v[3] < 1 || v[2] > kMaxSensorSide || v[3] > kMaxSensorSide)
    throw std::invalid_argument(what + ": W and H must be in [1, 65535], got '" + text + "'");
  return {static_cast<int>(v[0]), static_cast<int>(v[1]), static_cast<int>(v[2]),
          static_cast<int>(v[3])};
}

std::string crop_box_text(const CropBox& c) {
  return std::to_string(c.x) + "," + std::to_string(c.y) + "," + std::to_string(c.width) + "," +
         std::to_string(c.height);
}

const char* coalesce_name(Coalesce c) {
  return c == Coalesce::kSum ? "sum" : "binary";
}

Coalesce parse_coalesce(const std::string& name, const std::string& what) {
  if (name == "sum") return Coalesce::kSum;
  if (name == "binary") return Coalesce::kBinary;
  throw std::invalid_argument(what + ": expected \"sum\" or \"binary\", got '" + name + "'");
}

void RecordingPreprocessing::validate() const {
  if (!(pooling > 0 && pooling <= 1)) bad_field("pooling", number_text(pooling), "(0, 1]");
  if (window_us < 1 || window_us > kMaxCameraTimeUs)
    bad_field("window_us", std::to_string(window_us), "[1, 2^53] us");
  if (bin_us < 1 || bin_us > window_us)
    bad_field("bin_us", std::to_string(bin_us),
              "[1, window_us = " + std::to_string(window_us) + "] us");
  if (window_us % bin_us != 0)
    throw std::invalid_argument("preprocessing: window_us = " + std::to_string(window_us) +
                                " is not a multiple of bin_us = " + std::to_string(bin_us) +
                                " (the last bin's input event would fall after the window's end)");
  if (denoise_us < 0) bad_field("denoise_us", std::to_string(denoise_us), "[0, inf) us (0: off)");
  if (!(readout_from >= 0 && readout_from < 1))
    bad_field("readout_from", number_text(readout_from), "[0, 1)");
  if (crop) {
    if (crop->x < 0 || crop->y < 0 || crop->x > kMaxSensorSide || crop->y > kMaxSensorSide)
      bad_field("crop x, y", crop_box_text(*crop), "[0, 65535]");
    if (crop->width < 1 || crop->height < 1 || crop->width > kMaxSensorSide ||
        crop->height > kMaxSensorSide)
      bad_field("crop width, height", crop_box_text(*crop), "[1, 65535]");
  }
}

RecordingPreprocessing RecordingPreprocessing::from_task_json(const nlohmann::json& task,
                                                              const std::string& origin) {
  namespace jf = json_fields;
  const std::string where = "task";
  try {
    jf::check_keys(task,
                   {"name", "dataset", "epochs", "seed", "model", "pooling", "bin_us", "window_us",
                    "denoise_us", "coalesce", "readout_from", "crop"},
                   origin, where);
  } catch (const std::invalid_argument& e) {
    // A task of another kind (e.g. delay_copy) says what it is.
    if (task.is_object() && task.contains("name") && task.at("name").is_string() &&
        task.at("name") != "dvs_gesture")
      throw std::invalid_argument(std::string(e.what()) + "; the task '" +
                                  task.at("name").get<std::string>() +
                                  "' is not one that reads camera recordings");
    throw;
  }
  RecordingPreprocessing p;
  p.pooling = jf::number(task, "pooling", p.pooling, origin, where);
  p.bin_us = jf::integer(task, "bin_us", p.bin_us, 1, origin, where);
  p.window_us = jf::integer(task, "window_us", p.window_us, 1, origin, where);
  p.denoise_us = jf::integer(task, "denoise_us", p.denoise_us, 0, origin, where);
  p.readout_from = jf::number(task, "readout_from", p.readout_from, origin, where);
  if (task.contains("coalesce")) {
    const auto& c = task.at("coalesce");
    if (!c.is_string())
      jf::fail(origin, where + ".coalesce", "expected \"sum\" or \"binary\", got " + c.dump());
    p.coalesce = parse_coalesce(c.get<std::string>(), origin + ": " + where + ".coalesce");
  }
  if (task.contains("crop")) {
    const auto& c = task.at("crop");
    bool ok = c.is_array() && c.size() == 4;
    for (std::size_t i = 0; ok && i < 4; ++i) ok = c[i].is_number_integer();
    if (!ok) jf::fail(origin, where + ".crop", "expected [X, Y, W, H] (integers), got " + c.dump());
    const auto at = [&](std::size_t i) { return c[i].get<long long>(); };
    if (at(0) < 0 || at(1) < 0 || at(0) > kMaxSensorSide || at(1) > kMaxSensorSide || at(2) < 1 ||
        at(3) < 1 || at(2) > kMaxSensorSide || at(3) > kMaxSensorSide)
      jf::fail(origin, where + ".crop",
               "X, Y must be in [0, 65535] and W, H in [1, 65535], got " + c.dump());
    p.crop = CropBox{static_cast<int>(at(0)), static_cast<int>(at(1)), static_cast<int>(at(2)),
                     static_cast<int>(at(3))};
  }
  try {
    p.validate();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(origin + ": " + where + ": " + e.what());
  }
  return p;
}

nlohmann::json RecordingPreprocessing::to_task_json() const {
  nlohmann::json j = {{"pooling", pooling},
                      {"bin_us", bin_us},
                      {"window_us", window_us},
                      {"denoise_us", denoise_us},
                      {"coalesce", coalesce_name(coalesce)},
                      {"readout_from", readout_from}};
  if (crop) j["crop"] = {crop->x, crop->y, crop->width, crop->height};
  return j;
}

SensorSize RecordingPreprocessing::input_sensor(SensorSize sensor) const {
  validate();
  const SensorSize s = cropped_sensor(sensor, crop);
  return {static_cast<int>(std::ceil(s.width * pooling)),
          static_cast<int>(std::ceil(s.height * pooling))};
}

Index RecordingPreprocessing::input_channels(SensorSize sensor) const {
  const SensorSize s = input_sensor(sensor);
  return static_cast<Index>(s.width) * s.height * 2;
}

std::string describe_preprocessing(const RecordingPreprocessing& p, SensorSize sensor) {
  const SensorSize in = p.input_sensor(sensor);
  std::ostringstream os;
  if (p.crop) os << "crop " << crop_box_text(*p.crop) << ", ";
  os << "denoise ";
  if (p.denoise_us > 0)
    os << p.denoise_us << " us";
  else
    os << "off";
  os << ", pooling " << p.pooling << " -> " << in.width << "x" << in.height
     << " pixels x 2 polarities = " << p.input_channels(sensor) << " input channels, " << p.bin_us
     << " us bins (" << coalesce_name(p.coalesce) << "), windows of " << p.window_us
     << " us, readout from " << p.readout_from;
  return os.str();
}

RecordingPreprocessing preprocessing_from_config(const std::string& config_text,
                                                 const std::string& origin, bool* has_task) {
  nlohmann::json cfg;
  try {
    cfg = nlohmann::json::parse(config_text);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(origin + ": not JSON: " + e.what());
  }
  const bool task = cfg.is_object() && cfg.contains("task");
  if (has_task) *has_task = task;
  if (!task) return {};
  return RecordingPreprocessing::from_task_json(cfg.at("task"), origin);
}

Sample<double> prepare_recording_window(const std::vector<CameraEvent>& events, SensorSize sensor,
                                        const RecordingPreprocessing& p, std::int64_t t_start_us,
                                        std::optional<int> label,
                                        std::optional<std::int64_t> events_end_us,
                                        const SpatialAugmentation* view) {
  p.validate();
  if (!is_camera_time(t_start_us))
    throw std::invalid_argument("prepare_recording_window: start " + std::to_string(t_start_us) +
                                " us is outside [0, 2^53]");
  SensorSize s = cropped_sensor(sensor, p.crop);
  // t_start + window <= 2^54: no overflow.
  std::int64_t end = t_start_us + p.window_us;
  if (events_end_us) {
    if (*events_end_us <= t_start_us)
      throw std::invalid_argument("prepare_recording_window: end " +
                                  std::to_string(*events_end_us) + " us is not after the start " +
                                  std::to_string(t_start_us) + " us");
    end = std::min(end, *events_end_us);
  }
  // 1. the window, from 0
  std::vector<CameraEvent> ev = crop_time(events, t_start_us, end);
  for (auto& e : ev) e.t -= t_start_us;
  // 2. the crop
  if (p.crop) {
    SensorSize full = sensor;
    ev = crop(ev, full, p.crop->x, p.crop->y, p.crop->width, p.crop->height);
  }
  // 3. denoise at full resolution
  if (p.denoise_us > 0) ev = denoise(ev, s, p.denoise_us);
  // 3b. training only: a random view of the scene (augmentation)
  if (view) ev = augment_spatially(ev, s, *view);
  // 4. pooling
  ev = downsample(ev, s, p.pooling);
  // 5. the engine's input
  Sample<double> out;
  out.input = to_input_stream(ev, s, false, 0, p.bin_us, p.coalesce);
  out.end_time = static_cast<double>(p.window_us) * 1e-3;
  out.readout_windows = {{p.readout_from * out.end_time, out.end_time}};
  if (label) out.targets.labels = {*label};
  return out;
}

}  // namespace egret
