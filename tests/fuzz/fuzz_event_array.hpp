// The event-array targets (.npy, HDF5) read the input, then turn the events into frames as
// `egret.read_events(F)` followed by `egret.to_frames(events, sensor, 1)` does (the sensor:
// 128x128, or the events' extent if larger). A frame tensor that fits in 64 MB must be built; one
// whose size overflows 64 bits must be refused with an error. Sizes in between are legitimate
// requests too large for the fuzzer's memory limit and are not tried.
#pragma once

#include <algorithm>
#include <vector>

#include "camera/camera_transforms.hpp"
#include "tests/fuzz/fuzz_camera.hpp"

namespace egret::fuzz {

inline void frames_from_events(const std::vector<CameraEvent>& events) {
  if (events.empty()) return;
  SensorSize sensor{128, 128};
  for (const auto& e : events) {
    sensor.width = std::max(sensor.width, e.x + 1);
    sensor.height = std::max(sensor.height, e.y + 1);
  }
  const auto [lo, hi] = std::minmax_element(events.begin(), events.end(),
                                            [](const auto& a, const auto& b) { return a.t < b.t; });
  // bins * polarities * plane * 4 bytes, exactly (a span up to 2^64, so 128-bit arithmetic).
  const unsigned __int128 bins =
      static_cast<unsigned __int128>(static_cast<__int128>(hi->t) - lo->t) + 1;
  const unsigned __int128 bytes = bins * 2 * static_cast<unsigned __int128>(sensor.width) *
                                  static_cast<unsigned __int128>(sensor.height) * 4;
  const bool overflows = bytes > static_cast<unsigned __int128>(SIZE_MAX);
  if (!overflows && bytes > (64u << 20)) return;
  std::size_t n_bins = 0;
  try {
    const auto frames = to_frames(events, sensor, 1, 2, n_bins);
    if (overflows) invariant_failed("to_frames accepted a frame tensor whose size overflows");
    std::uint64_t total = 0;
    for (auto c : frames) total += c;
    if (total != events.size())
      invariant_failed("to_frames counted " + std::to_string(total) + " of " +
                       std::to_string(events.size()) + " events");
  } catch (const std::exception&) {
    // A clear error (e.g. the size overflows, or unsorted events).
  }
}

inline void fuzz_event_array_reader(CameraReader reader, const std::uint8_t* data, std::size_t size,
                                    const char* extension) {
  std::vector<CameraEvent> events;
  fuzz_camera_reader(reader, data, size, extension, [&](const CameraEvent* ev, std::size_t n) {
    if (events.size() < (1u << 20)) events.insert(events.end(), ev, ev + n);
  });
  frames_from_events(events);
}

}  // namespace egret::fuzz
