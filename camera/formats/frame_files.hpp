// Intensity frames from disk for the DVS sensor model: 8/16-bit PNG images (libpng) listed with
// their times in an `images.txt` ("<seconds> <relative path>" per line, the Event Camera
// Dataset's layout).
#pragma once

#include <string>
#include <vector>

#include "camera/camera_event.hpp"
#include "camera/dvs_sensor_model.hpp"

namespace egret {

struct GrayFrame {
  int width = 0, height = 0;
  std::vector<float> pixels;  // row-major, intensities in [0, 1]
};

GrayFrame read_png_gray(const std::string& path);

struct FrameListEntry {
  double time_s = 0;
  std::string path;  // resolved against the list's folder
};
// Errors name the file and line (times not increasing, missing fields).
std::vector<FrameListEntry> read_frame_list(const std::string& images_txt);

// Runs the sensor model over the frames of `images_txt` (times converted to microseconds).
CameraRecording emulate_events_from_frames(const std::string& images_txt, DvsSensorConfig config);

}  // namespace egret
