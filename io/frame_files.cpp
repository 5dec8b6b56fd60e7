#include "io/frame_files.hpp"

#include <png.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace egret {

GrayFrame read_png_gray(const std::string& path) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str()))
    throw std::runtime_error(path + ": cannot read PNG: " + image.message);
  image.format = PNG_FORMAT_GRAY;
  std::vector<unsigned char> buf(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, buf.data(), 0, nullptr)) {
    const std::string msg = image.message;
    png_image_free(&image);
    throw std::runtime_error(path + ": corrupt PNG: " + msg);
  }
  GrayFrame f;
  f.width = static_cast<int>(image.width);
  f.height = static_cast<int>(image.height);
  f.pixels.resize(buf.size());
  for (std::size_t i = 0; i < buf.size(); ++i) f.pixels[i] = static_cast<float>(buf[i]) / 255.0f;
  return f;
}

std::vector<FrameListEntry> read_frame_list(const std::string& images_txt) {
  std::ifstream in(images_txt);
  if (!in) throw std::runtime_error(images_txt + ": cannot open frame list");
  const std::filesystem::path base = std::filesystem::path(images_txt).parent_path();
  std::vector<FrameListEntry> out;
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    FrameListEntry e;
    std::string rel;
    if (!(ss >> e.time_s >> rel) || !std::isfinite(e.time_s))
      throw std::invalid_argument(images_txt + ":" + std::to_string(n) +
                                  ": expected '<seconds> <image path>'");
    if (!out.empty() && !(e.time_s > out.back().time_s))
      throw std::invalid_argument(images_txt + ":" + std::to_string(n) +
                                  ": frame times must increase");
    e.path = (base / rel).string();
    out.push_back(e);
  }
  if (out.empty()) throw std::invalid_argument(images_txt + ": no frames listed");
  return out;
}

CameraRecording emulate_events_from_frames(const std::string& images_txt, DvsSensorConfig config) {
  const auto frames = read_frame_list(images_txt);
  const GrayFrame first = read_png_gray(frames.front().path);
  config.width = first.width;
  config.height = first.height;
  DvsSensorModel sensor(config);
  CameraRecording rec;
  rec.sensor = sensor.sensor();
  for (const auto& e : frames) {
    const GrayFrame f = read_png_gray(e.path);
    if (f.width != first.width || f.height != first.height)
      throw std::invalid_argument(e.path + ": frame size differs from the first frame's");
    sensor.add_frame(f.pixels, e.time_s * 1e6, rec.events);
  }
  return rec;
}

}  // namespace egret
