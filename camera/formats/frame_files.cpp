#include "camera/formats/frame_files.hpp"

#include <png.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "io/text_fields.hpp"

namespace egret {

GrayFrame read_png_gray(const std::string& path) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str()))
    throw std::runtime_error(path + ": cannot read PNG: " + image.message);
  image.format = PNG_FORMAT_GRAY;
  // Frames of at most 2^26 pixels (8192 x 8192): the size is checked before allocating.
  if (static_cast<std::uint64_t>(image.width) * image.height > (std::uint64_t{1} << 26)) {
    png_image_free(&image);
    throw std::runtime_error(path + ": PNG of " + std::to_string(image.width) + "x" +
                             std::to_string(image.height) + " pixels exceeds the 2^26-pixel cap");
  }
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
  std::ifstream in(images_txt, std::ios::binary);
  if (!in) throw std::runtime_error(images_txt + ": cannot open frame list");
  const std::filesystem::path base = std::filesystem::path(images_txt).parent_path();
  std::vector<FrameListEntry> out;
  std::string line;
  for (std::size_t n = 1; text::read_line(in, line, images_txt, n); ++n) {
    const std::string t = text::trim(line);
    if (t.empty() || t[0] == '#') continue;
    auto fail = [&](const std::string& what) {
      throw std::invalid_argument(images_txt + ":" + std::to_string(n) + ": " + what + ": '" + t +
                                  "'");
    };
    // "<seconds> <image path>": exactly two fields separated by whitespace.
    const std::size_t gap = t.find_first_of(" \t");
    if (gap == std::string::npos) fail("expected '<seconds> <image path>'");
    const std::string rel = text::trim(t.substr(gap));
    if (rel.empty() || rel.find_first_of(" \t") != std::string::npos)
      fail("expected '<seconds> <image path>'");
    FrameListEntry e;
    // Times become microseconds of camera events: finite, in [0, 2^53] us.
    if (!text::parse_double(t.substr(0, gap), e.time_s) || !std::isfinite(e.time_s) ||
        e.time_s < 0 || e.time_s * 1e6 > static_cast<double>(kMaxCameraTimeUs))
      fail("time is not a number of seconds in [0, 2^53 us]");
    if (!out.empty() && !(e.time_s > out.back().time_s)) fail("frame times must increase");
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
