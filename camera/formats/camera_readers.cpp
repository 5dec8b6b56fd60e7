// N-MNIST binaries, the choice of reader for a file, and whole-file reading.
#include "camera/formats/camera_readers.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "camera/formats/camera_block_reader.hpp"
#include "io/event_csv.hpp"

namespace egret {

// N-MNIST: 5 bytes per event: x, y, then polarity (bit 7) and a 23-bit microsecond timestamp.
CameraFileInfo read_nmnist_bin(const std::string& path, const CameraEventSink& sink) {
  detail::BlockReader r(path);
  CameraFileInfo info;
  info.format = "nmnist";
  info.sensor = {34, 34};
  detail::EventBatcher out(sink, info);
  unsigned char rec[5];
  for (;;) {
    const std::uint64_t at = r.offset();
    if (!r.read(rec, 5, "N-MNIST event")) break;
    CameraEvent e;
    e.x = rec[0];
    e.y = rec[1];
    e.p = rec[2] >> 7;
    e.t = (static_cast<std::int64_t>(rec[2] & 0x7F) << 16) | (rec[3] << 8) | rec[4];
    detail::check_in_sensor(r, info.sensor, e, at);
    out.push(e);
  }
  out.flush();
  return info;
}

void write_nmnist_bin(const std::string& path, const std::vector<CameraEvent>& events,
                      SensorSize sensor) {
  if (sensor.width <= 0 || sensor.height <= 0 || sensor.width > 256 || sensor.height > 256)
    throw std::invalid_argument(path +
                                ": write_nmnist_bin: the format holds sensors up to 256x256");
  std::string bytes;
  bytes.reserve(events.size() * 5);
  std::int64_t last = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const CameraEvent& e = events[i];
    if (e.t < last || e.t >= (std::int64_t{1} << 23) || e.x >= sensor.width ||
        e.y >= sensor.height || e.p > 1)
      throw std::invalid_argument(path + ": write_nmnist_bin: event " + std::to_string(i) + " (t " +
                                  std::to_string(e.t) + " us, x " + std::to_string(e.x) + ", y " +
                                  std::to_string(e.y) +
                                  ") is unsorted, outside [0, 2^23) us or outside the sensor");
    last = e.t;
    bytes.push_back(static_cast<char>(e.x));
    bytes.push_back(static_cast<char>(e.y));
    bytes.push_back(static_cast<char>((e.p << 7) | ((e.t >> 16) & 0x7F)));
    bytes.push_back(static_cast<char>((e.t >> 8) & 0xFF));
    bytes.push_back(static_cast<char>(e.t & 0xFF));
  }
  write_file_atomically(path, bytes);
}

std::string detect_camera_format(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CameraFileError(path, 0, "cannot open event file");
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  if (head.empty()) throw CameraFileError(path, 0, "empty file (0 bytes): no events");
  auto ends = [&](const char* ext) {
    const std::string e(ext);
    return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  if (head.rfind("#!AER-DAT3", 0) == 0) return "aedat31";
  if (head.rfind("#!AER-DAT2", 0) == 0) return "aedat2";
  if (head.find("% evt 2.0") != std::string::npos) return "evt2";
  if (head.find("% evt 3.0") != std::string::npos) return "evt3";
  if (head.rfind("\x93NUMPY", 0) == 0) return "npy";
  if (head.rfind("\x89HDF", 0) == 0) return "hdf5";
  if (ends(".dat")) return "dat";
  if (ends(".bin")) return "nmnist";
  if (head.rfind("#!AER-DAT4", 0) == 0) return "aedat4";
  return "";
}

CameraFileInfo read_camera_file(const std::string& path, const CameraEventSink& sink) {
  const std::string format = detect_camera_format(path);
  if (format == "aedat31") return read_aedat31(path, sink);
  if (format == "aedat2") return read_aedat2(path, sink);
  if (format == "evt2") return read_evt2(path, sink);
  if (format == "evt3") return read_evt3(path, sink);
  if (format == "npy") return read_npy_events(path, sink);
  if (format == "hdf5") return read_hdf5_events(path, sink);
  if (format == "dat") return read_prophesee_dat(path, sink);
  if (format == "nmnist") return read_nmnist_bin(path, sink);
  if (format == "aedat4") return read_aedat4(path, sink);
  std::string names;
  for (const auto& f : kCameraFormats) names += (names.empty() ? "" : ", ") + std::string(f.name);
  throw CameraFileError(path, 0, "unknown event file format (" + names + ")");
}

namespace {

// Asks the kernel to back the reserved event array with 2 MB pages where it can (Linux, a hint
// only, as numpy does for its large arrays): a page fault per 4 KB of a large recording's array
// was over half of decoding it on a VM (docs/speed.md).
void prefer_huge_pages(const void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{1} << 21;
  if (bytes < 2 * kHuge) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t last = (begin + bytes) & ~(kHuge - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace

CameraRecording read_camera_recording(const std::string& path) {
  CameraRecording rec;
  // Room for one event per 2 bytes of file (EVT 3.0 needs 2 to 5, the other formats more) and
  // at most 2^27 events: a guess, not a limit; it saves the copies of a growing vector, which
  // took a third of decoding a large recording (docs/speed.md). Untouched room costs no memory.
  std::error_code error;
  const std::uintmax_t bytes = std::filesystem::file_size(path, error);
  if (!error) {
    rec.events.reserve(static_cast<std::size_t>(std::min<std::uintmax_t>(bytes / 2, 1u << 27)));
    prefer_huge_pages(rec.events.data(), rec.events.capacity() * sizeof(CameraEvent));
  }
  const auto info = read_camera_file(path, [&rec](const CameraEvent* e, std::size_t n) {
    rec.events.insert(rec.events.end(), e, e + n);
  });
  rec.sensor = info.sensor;
  return rec;
}

}  // namespace egret
