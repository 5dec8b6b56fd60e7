// The camera-format targets: read the input with one reader and check what it returns. A reader
// that succeeds must have delivered exactly the events it counts, each with polarity 0 or 1 and,
// when the sensor size is known, inside the sensor.
#pragma once

#include <string>

#include "camera/formats/camera_readers.hpp"
#include "tests/fuzz/fuzz_input.hpp"

namespace egret::fuzz {

using CameraReader = CameraFileInfo (*)(const std::string&, const CameraEventSink&);

inline void check_events(const CameraFileInfo& info, std::uint64_t delivered,
                         const CameraEvent* events, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const CameraEvent& e = events[i];
    if (e.p > 1) invariant_failed(info.format + ": polarity " + std::to_string(e.p));
    if (info.sensor.width > 0 && info.sensor.height > 0 &&
        (e.x >= info.sensor.width || e.y >= info.sensor.height)) {
      invariant_failed(info.format + ": event " + std::to_string(delivered + i) + " at (" +
                       std::to_string(e.x) + ", " + std::to_string(e.y) + ") outside the " +
                       std::to_string(info.sensor.width) + "x" +
                       std::to_string(info.sensor.height) + " sensor");
    }
  }
}

// Reads the input as `extension` with `reader`; `on_events` (optional) sees every batch.
template <class OnEvents>
void fuzz_camera_reader(CameraReader reader, const std::uint8_t* data, std::size_t size,
                        const char* extension, OnEvents&& on_events) {
  const std::string& path = write_input(data, size, extension);
  expect_result_or_clear_error([&] {
    std::uint64_t delivered = 0;
    // The sensor is only known once the header is read, i.e. after the call returns; the
    // batches are checked for polarity as they come and for the sensor at the end.
    std::vector<CameraEvent> kept;
    const CameraFileInfo info = reader(path, [&](const CameraEvent* ev, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i)
        if (ev[i].p > 1) invariant_failed("polarity " + std::to_string(ev[i].p));
      if (kept.size() < (1u << 20)) kept.insert(kept.end(), ev, ev + n);
      on_events(ev, n);
      delivered += n;
    });
    if (info.events != delivered)
      invariant_failed(info.format + ": reports " + std::to_string(info.events) +
                       " events but delivered " + std::to_string(delivered));
    check_events(info, 0, kept.data(), kept.size());
  });
}

inline void fuzz_camera_reader(CameraReader reader, const std::uint8_t* data, std::size_t size,
                               const char* extension) {
  fuzz_camera_reader(reader, data, size, extension, [](const CameraEvent*, std::size_t) {});
}

}  // namespace egret::fuzz
