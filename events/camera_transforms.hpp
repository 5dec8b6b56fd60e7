// Transforms of event-camera streams, with tonic's semantics (tonic.transforms / functional),
// and the step from camera events to the engine's input events (channels and values).
// Events are taken in time order; every transform keeps the relative order of what it keeps.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "events/camera_event.hpp"
#include "events/input_stream.hpp"

namespace egret {

namespace detail {
inline void check_sensor(const SensorSize& s, const char* what) {
  if (s.width <= 0 || s.height <= 0)
    throw std::invalid_argument(std::string(what) + ": the sensor size must be known and positive");
}
inline void check_in(const SensorSize& s, const CameraEvent& e, const char* what) {
  if (e.x >= s.width || e.y >= s.height)
    throw std::invalid_argument(std::string(what) + ": event at (" + std::to_string(e.x) + ", " +
                                std::to_string(e.y) + ") outside the " + std::to_string(s.width) +
                                "x" + std::to_string(s.height) + " sensor");
}
}  // namespace detail

// Time slicing: consecutive windows [t0 + k (length - overlap), ... + length) from the first
// event's time t0 (tonic SliceByTime); an event belongs to every window that contains it.
inline std::vector<std::vector<CameraEvent>> slice_by_time(const std::vector<CameraEvent>& events,
                                                           std::int64_t length,
                                                           std::int64_t overlap = 0) {
  if (length <= 0 || overlap < 0 || overlap >= length)
    throw std::invalid_argument("slice_by_time: need length > 0 and 0 <= overlap < length");
  std::vector<std::vector<CameraEvent>> out;
  if (events.empty()) return out;
  const std::int64_t t0 = events.front().t, stride = length - overlap;
  const std::int64_t t_end = events.back().t;
  std::size_t first = 0;
  for (std::int64_t start = t0; start <= t_end; start += stride) {
    while (first < events.size() && events[first].t < start) ++first;
    std::vector<CameraEvent> w;
    for (std::size_t i = first; i < events.size() && events[i].t < start + length; ++i)
      w.push_back(events[i]);
    out.push_back(std::move(w));
  }
  return out;
}

// Events with start <= t < end (the DVS128 Gesture label convention).
inline std::vector<CameraEvent> crop_time(const std::vector<CameraEvent>& events,
                                          std::int64_t start, std::int64_t end) {
  std::vector<CameraEvent> out;
  for (const auto& e : events)
    if (e.t >= start && e.t < end) out.push_back(e);
  return out;
}

// tonic Denoise: each pixel remembers t + filter_time of its last event (initially
// filter_time); an event is kept if one of its 4 neighbours remembers a time > t, i.e. fired
// less than filter_time before it (its own pixel does not count).
inline std::vector<CameraEvent> denoise(const std::vector<CameraEvent>& events,
                                        const SensorSize& sensor, std::int64_t filter_time) {
  detail::check_sensor(sensor, "denoise");
  if (filter_time <= 0) throw std::invalid_argument("denoise: filter_time must be > 0");
  const int w = sensor.width, h = sensor.height;
  std::vector<std::int64_t> memory(static_cast<std::size_t>(w) * static_cast<std::size_t>(h),
                                   filter_time);
  auto at = [&](int x, int y) -> std::int64_t& {
    return memory[static_cast<std::size_t>(y) * static_cast<std::size_t>(w) +
                  static_cast<std::size_t>(x)];
  };
  std::vector<CameraEvent> out;
  for (const auto& e : events) {
    detail::check_in(sensor, e, "denoise");
    const int x = e.x, y = e.y;
    at(x, y) = e.t + filter_time;
    const bool keep = (x > 0 && at(x - 1, y) > e.t) || (x < w - 1 && at(x + 1, y) > e.t) ||
                      (y > 0 && at(x, y - 1) > e.t) || (y < h - 1 && at(x, y + 1) > e.t);
    if (keep) out.push_back(e);
  }
  return out;
}

// Refractory period: an event is dropped when its pixel's last *kept* event is less than
// `period` before it (the pixel is refractory after each event it reports).
inline std::vector<CameraEvent> refractory_period(const std::vector<CameraEvent>& events,
                                                  const SensorSize& sensor, std::int64_t period) {
  detail::check_sensor(sensor, "refractory_period");
  if (period < 0) throw std::invalid_argument("refractory_period: period must be >= 0");
  std::vector<std::int64_t> last(
      static_cast<std::size_t>(sensor.width) * static_cast<std::size_t>(sensor.height),
      INT64_MIN / 2);
  std::vector<CameraEvent> out;
  for (const auto& e : events) {
    detail::check_in(sensor, e, "refractory_period");
    auto& l = last[static_cast<std::size_t>(e.y) * static_cast<std::size_t>(sensor.width) + e.x];
    if (e.t - l < period) continue;
    l = e.t;
    out.push_back(e);
  }
  return out;
}

// Spatial downsampling (tonic Downsample): x' = floor(x * factor), y' = floor(y * factor).
// The new sensor is ceil(width * factor) x ceil(height * factor).
inline std::vector<CameraEvent> downsample(const std::vector<CameraEvent>& events,
                                           SensorSize& sensor, double factor) {
  detail::check_sensor(sensor, "downsample");
  if (!(factor > 0 && factor <= 1))
    throw std::invalid_argument("downsample: factor must be in (0, 1]");
  std::vector<CameraEvent> out;
  out.reserve(events.size());
  for (auto e : events) {
    detail::check_in(sensor, e, "downsample");
    e.x = static_cast<std::uint16_t>(std::floor(e.x * factor));
    e.y = static_cast<std::uint16_t>(std::floor(e.y * factor));
    out.push_back(e);
  }
  sensor = {static_cast<int>(std::ceil(sensor.width * factor)),
            static_cast<int>(std::ceil(sensor.height * factor))};
  return out;
}

// Spatial crop to [x0, x0 + width) x [y0, y0 + height); kept events are shifted to the origin.
inline std::vector<CameraEvent> crop(const std::vector<CameraEvent>& events, SensorSize& sensor,
                                     int x0, int y0, int width, int height) {
  if (x0 < 0 || y0 < 0 || width <= 0 || height <= 0 ||
      (sensor.width > 0 && x0 + width > sensor.width) ||
      (sensor.height > 0 && y0 + height > sensor.height))
    throw std::invalid_argument("crop: the box must lie inside the sensor");
  std::vector<CameraEvent> out;
  for (auto e : events) {
    if (e.x < x0 || e.y < y0 || e.x >= x0 + width || e.y >= y0 + height) continue;
    e.x = static_cast<std::uint16_t>(e.x - x0);
    e.y = static_cast<std::uint16_t>(e.y - y0);
    out.push_back(e);
  }
  sensor = {width, height};
  return out;
}

// tonic MergePolarities: every event becomes polarity 0.
inline std::vector<CameraEvent> merge_polarities(std::vector<CameraEvent> events) {
  for (auto& e : events) e.p = 0;
  return events;
}

// Frames (tonic ToFrame with a time window): counts per [bin][polarity][y][x], bins of
// `bin_length` from the first event's time; `polarities` is 1 (merged) or 2.
inline std::vector<std::uint32_t> to_frames(const std::vector<CameraEvent>& events,
                                            const SensorSize& sensor, std::int64_t bin_length,
                                            int polarities, std::size_t& bins) {
  detail::check_sensor(sensor, "to_frames");
  if (bin_length <= 0 || (polarities != 1 && polarities != 2))
    throw std::invalid_argument("to_frames: need bin_length > 0 and 1 or 2 polarities");
  bins = events.empty()
             ? 0
             : static_cast<std::size_t>((events.back().t - events.front().t) / bin_length) + 1;
  const std::size_t plane =
      static_cast<std::size_t>(sensor.width) * static_cast<std::size_t>(sensor.height);
  std::vector<std::uint32_t> frames(bins * static_cast<std::size_t>(polarities) * plane, 0);
  for (const auto& e : events) {
    detail::check_in(sensor, e, "to_frames");
    const auto b = static_cast<std::size_t>((e.t - events.front().t) / bin_length);
    const std::size_t p = polarities == 1 ? 0 : e.p;
    frames[(b * static_cast<std::size_t>(polarities) + p) * plane +
           static_cast<std::size_t>(e.y) * static_cast<std::size_t>(sensor.width) + e.x] += 1;
  }
  return frames;
}

// The engine's input: events coalesced per channel and time bin. Channel of (p, y, x) is
// (p * height + y) * width + x (p = 0 when polarities are merged); an input event at the end of
// each bin [t0 + k bin, t0 + (k + 1) bin) carries the bin's count (`sum`) or 1 (`binary`,
// max pooling of the binary frame). Times are converted to milliseconds, relative to `t0`.
enum class Coalesce { kSum, kBinary };

inline InputStream<double> to_input_stream(const std::vector<CameraEvent>& events,
                                           const SensorSize& sensor, bool merged_polarity,
                                           std::int64_t t0, std::int64_t bin_length,
                                           Coalesce mode) {
  detail::check_sensor(sensor, "to_input_stream");
  if (bin_length <= 0) throw std::invalid_argument("to_input_stream: bin_length must be > 0");
  const Index channels =
      static_cast<Index>(sensor.width) * sensor.height * (merged_polarity ? 1 : 2);
  std::vector<InputEvent<double>> out;
  std::vector<double> count(static_cast<std::size_t>(channels), 0);
  std::vector<Index> touched;
  std::int64_t bin = INT64_MIN;
  auto flush = [&] {
    const double t_ms = static_cast<double>((bin + 1) * bin_length) * 1e-3;
    std::sort(touched.begin(), touched.end());
    for (Index c : touched) {
      out.push_back({t_ms, c, mode == Coalesce::kSum ? count[static_cast<std::size_t>(c)] : 1.0});
      count[static_cast<std::size_t>(c)] = 0;
    }
    touched.clear();
  };
  for (const auto& e : events) {
    detail::check_in(sensor, e, "to_input_stream");
    if (e.t < t0) throw std::invalid_argument("to_input_stream: event before t0");
    const std::int64_t b = (e.t - t0) / bin_length;
    if (b != bin) {
      if (!touched.empty()) flush();
      bin = b;
    }
    const int p = merged_polarity ? 0 : e.p;
    const Index c = (static_cast<Index>(p) * sensor.height + e.y) * sensor.width + e.x;
    if (count[static_cast<std::size_t>(c)] == 0) touched.push_back(c);
    count[static_cast<std::size_t>(c)] += 1;
  }
  if (!touched.empty()) flush();
  return InputStream<double>(std::move(out), channels);
}

}  // namespace egret
