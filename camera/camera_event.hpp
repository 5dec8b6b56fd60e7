// Events from an event camera (DVS): pixel (x, y), polarity, time in microseconds. Readers
// (camera/formats/camera_readers.hpp) produce them; transforms turn them into the engine's input
// events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace egret {

struct CameraEvent {
  std::int64_t t = 0;  // microseconds
  std::uint16_t x = 0;
  std::uint16_t y = 0;
  std::uint8_t p = 0;  // 1 = ON (brighter), 0 = OFF
  friend bool operator==(const CameraEvent& a, const CameraEvent& b) {
    return a.t == b.t && a.x == b.x && a.y == b.y && a.p == b.p;
  }
};

// Camera times are microseconds in [0, kMaxCameraTimeUs]. 2^53 us (285 years) holds Unix-epoch
// timestamps, stays exact in a double, and the difference of two such times never overflows.
inline constexpr std::int64_t kMaxCameraTimeUs = std::int64_t{1} << 53;
inline bool is_camera_time(std::int64_t t) {
  return t >= 0 && t <= kMaxCameraTimeUs;
}
// A sensor side from a file header is at most 65535 pixels (event coordinates are 16-bit).
inline constexpr int kMaxSensorSide = 65535;

struct SensorSize {
  int width = 0;  // 0: unknown
  int height = 0;
  bool known() const { return width > 0 && height > 0; }
};

// The sensor as printed: "640x480 sensor", or that the file does not say (never "0x0").
inline std::string sensor_text(SensorSize s) {
  if (!s.known()) return "sensor size not recorded in the file";
  return std::to_string(s.width) + "x" + std::to_string(s.height) + " sensor";
}

struct CameraRecording {
  SensorSize sensor;
  std::vector<CameraEvent> events;
};

}  // namespace egret
