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

#include "camera/camera_event.hpp"
#include "events/input_stream.hpp"

namespace egret {

namespace detail {
inline void check_sensor(const SensorSize& s, const char* what) {
  if (s.width <= 0 || s.height <= 0)
    throw std::invalid_argument(std::string(what) + ": the sensor size must be known and positive");
}
// Per-pixel state (denoise, refractory period, input channels) and frame tensors are refused
// beyond these caps, before anything is allocated: 2^26 pixels (8 bytes each: 512 MiB), and
// 2^28 frame counts (uint32: 1 GiB). Real sensors have at most a few million pixels.
inline constexpr std::uint64_t kMaxPixels = std::uint64_t{1} << 26;
inline constexpr std::uint64_t kMaxFrameCounts = std::uint64_t{1} << 28;
inline constexpr std::uint64_t kMaxWindows = std::uint64_t{1} << 22;

inline std::size_t pixels_of(const SensorSize& s, const char* what) {
  check_sensor(s, what);
  const std::uint64_t n =
      static_cast<std::uint64_t>(s.width) * static_cast<std::uint64_t>(s.height);
  if (n > kMaxPixels)
    throw std::invalid_argument(std::string(what) + ": a " + std::to_string(s.width) + "x" +
                                std::to_string(s.height) + " sensor has more than 2^26 pixels");
  return static_cast<std::size_t>(n);
}

// (last - first) / step + 1 steps, checked: the span of two int64 times may not fit int64.
inline std::uint64_t steps_between(std::int64_t first, std::int64_t last, std::int64_t step,
                                   const char* what) {
  std::int64_t span = 0;
  if (last < first || __builtin_sub_overflow(last, first, &span))
    throw std::invalid_argument(std::string(what) + ": event times " + std::to_string(first) +
                                " .. " + std::to_string(last) + " us do not form a valid span");
  return static_cast<std::uint64_t>(span / step) + 1;
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
  for (std::size_t i = 1; i < events.size(); ++i)
    if (events[i].t < events[i - 1].t)
      throw std::invalid_argument("slice_by_time: events must be sorted by time");
  const std::int64_t t0 = events.front().t, stride = length - overlap;
  const std::uint64_t windows = detail::steps_between(t0, events.back().t, stride, "slice_by_time");
  if (windows > detail::kMaxWindows)
    throw std::invalid_argument("slice_by_time: the events span " + std::to_string(windows) +
                                " windows of stride " + std::to_string(stride) +
                                " us, more than the cap of 2^22");
  std::size_t first = 0;
  for (std::uint64_t k = 0; k < windows; ++k) {
    // start <= the last event's time, so neither it nor e.t - start overflows.
    const std::int64_t start = t0 + static_cast<std::int64_t>(k) * stride;
    while (first < events.size() && events[first].t < start) ++first;
    std::vector<CameraEvent> w;
    for (std::size_t i = first; i < events.size() && events[i].t - start < length; ++i)
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
  const std::size_t pixels = detail::pixels_of(sensor, "denoise");
  if (filter_time <= 0) throw std::invalid_argument("denoise: filter_time must be > 0");
  const int w = sensor.width, h = sensor.height;
  std::vector<std::int64_t> memory(pixels, filter_time);
  auto at = [&](int x, int y) -> std::int64_t& {
    return memory[static_cast<std::size_t>(y) * static_cast<std::size_t>(w) +
                  static_cast<std::size_t>(x)];
  };
  std::vector<CameraEvent> out;
  for (const auto& e : events) {
    detail::check_in(sensor, e, "denoise");
    const int x = e.x, y = e.y;
    // Saturating: a time near INT64_MAX remembers INT64_MAX instead of wrapping negative.
    std::int64_t until;
    if (__builtin_add_overflow(e.t, filter_time, &until)) until = INT64_MAX;
    at(x, y) = until;
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
  const std::size_t pixels = detail::pixels_of(sensor, "refractory_period");
  if (period < 0) throw std::invalid_argument("refractory_period: period must be >= 0");
  std::vector<std::int64_t> last(pixels, 0);
  std::vector<bool> fired(pixels, false);
  std::vector<CameraEvent> out;
  for (const auto& e : events) {
    detail::check_in(sensor, e, "refractory_period");
    const std::size_t k =
        static_cast<std::size_t>(e.y) * static_cast<std::size_t>(sensor.width) + e.x;
    std::int64_t since = 0;  // an overflowing difference is far beyond any period
    if (fired[k] && !__builtin_sub_overflow(e.t, last[k], &since) && since < period) continue;
    last[k] = e.t;
    fired[k] = true;
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
  // In 64 bits: x0 + width cannot overflow.
  const std::int64_t x1 = std::int64_t{x0} + width, y1 = std::int64_t{y0} + height;
  if (x0 < 0 || y0 < 0 || width <= 0 || height <= 0 || (sensor.width > 0 && x1 > sensor.width) ||
      (sensor.height > 0 && y1 > sensor.height))
    throw std::invalid_argument("crop: the box must lie inside the sensor");
  std::vector<CameraEvent> out;
  for (auto e : events) {
    if (e.x < x0 || e.y < y0 || e.x >= x1 || e.y >= y1) continue;
    e.x = static_cast<std::uint16_t>(e.x - x0);
    e.y = static_cast<std::uint16_t>(e.y - y0);
    out.push_back(e);
  }
  sensor = {width, height};
  return out;
}

// A rigid-plus-zoom map of the sensor plane for augmentation (the EGRU paper's random crop,
// translation and rotation): a pixel centre p goes to c + zoom R(rotation) (p - c) + shift, c the
// sensor's centre. A zoom above 1 is a random crop: the border leaves the sensor, the rest is
// enlarged back to its size.
struct SpatialAugmentation {
  double rotation_rad = 0;
  double zoom = 1;
  double shift_x = 0, shift_y = 0;  // pixels
};

// Events mapped by `a`; an event whose pixel leaves the sensor is dropped (as a camera that
// looked that way would not have seen it). Times and polarities are kept.
inline std::vector<CameraEvent> augment_spatially(const std::vector<CameraEvent>& events,
                                                  const SensorSize& sensor,
                                                  const SpatialAugmentation& a) {
  detail::check_sensor(sensor, "augment_spatially");
  if (!std::isfinite(a.rotation_rad) || !(a.zoom > 0) || !std::isfinite(a.zoom) ||
      !std::isfinite(a.shift_x) || !std::isfinite(a.shift_y))
    throw std::invalid_argument("augment_spatially: rotation, shift finite and zoom > 0 needed");
  const double cx = 0.5 * sensor.width, cy = 0.5 * sensor.height;
  const double c = a.zoom * std::cos(a.rotation_rad), s = a.zoom * std::sin(a.rotation_rad);
  std::vector<CameraEvent> out;
  out.reserve(events.size());
  for (auto e : events) {
    detail::check_in(sensor, e, "augment_spatially");
    const double px = e.x + 0.5 - cx, py = e.y + 0.5 - cy;
    const double x = std::floor(cx + c * px - s * py + a.shift_x);
    const double y = std::floor(cy + s * px + c * py + a.shift_y);
    if (x < 0 || y < 0 || x >= sensor.width || y >= sensor.height) continue;
    e.x = static_cast<std::uint16_t>(x);
    e.y = static_cast<std::uint16_t>(y);
    out.push_back(e);
  }
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
  bins = 0;
  if (events.empty()) return {};
  // bins x polarities x height x width counts, checked against kMaxFrameCounts before allocating.
  const std::uint64_t nbins =
      detail::steps_between(events.front().t, events.back().t, bin_length, "to_frames");
  const std::uint64_t plane64 =
      static_cast<std::uint64_t>(sensor.width) * static_cast<std::uint64_t>(sensor.height);
  std::uint64_t counts = 0;
  if (__builtin_mul_overflow(nbins, static_cast<std::uint64_t>(polarities), &counts) ||
      __builtin_mul_overflow(counts, plane64, &counts) || counts > detail::kMaxFrameCounts)
    throw std::invalid_argument(
        "to_frames: " + std::to_string(nbins) + " bins of " + std::to_string(bin_length) +
        " us x " + std::to_string(polarities) + " polarities x " + std::to_string(sensor.width) +
        "x" + std::to_string(sensor.height) + " pixels exceed the cap of 2^28 counts (1 GiB)");
  bins = static_cast<std::size_t>(nbins);
  const auto plane = static_cast<std::size_t>(plane64);
  std::vector<std::uint32_t> frames(static_cast<std::size_t>(counts), 0);
  for (const auto& e : events) {
    detail::check_in(sensor, e, "to_frames");
    if (e.t < events.front().t || e.t > events.back().t)
      throw std::invalid_argument("to_frames: events must be sorted by time");
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
  const std::size_t pixels = detail::pixels_of(sensor, "to_input_stream");
  if (bin_length <= 0) throw std::invalid_argument("to_input_stream: bin_length must be > 0");
  const Index channels = static_cast<Index>(pixels) * (merged_polarity ? 1 : 2);
  std::vector<InputEvent<double>> out;
  std::vector<double> count(static_cast<std::size_t>(channels), 0);
  std::vector<Index> touched;
  std::int64_t bin = INT64_MIN;
  auto flush = [&] {
    // (bin + 1) * bin_length <= (e.t - t0) + bin_length, computed in double: no overflow.
    const double t_ms = (static_cast<double>(bin) + 1) * static_cast<double>(bin_length) * 1e-3;
    std::sort(touched.begin(), touched.end());
    for (Index c : touched) {
      out.push_back({t_ms, c, mode == Coalesce::kSum ? count[static_cast<std::size_t>(c)] : 1.0});
      count[static_cast<std::size_t>(c)] = 0;
    }
    touched.clear();
  };
  for (const auto& e : events) {
    detail::check_in(sensor, e, "to_input_stream");
    std::int64_t since = 0;
    if (e.t < t0 || __builtin_sub_overflow(e.t, t0, &since))
      throw std::invalid_argument("to_input_stream: event at " + std::to_string(e.t) +
                                  " us before t0 or too far from it");
    const std::int64_t b = since / bin_length;
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
