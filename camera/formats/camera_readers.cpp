// N-MNIST binaries, the choice of reader for a file, and whole-file reading.
#include "camera/formats/camera_readers.hpp"

#include <fstream>

#include "camera/formats/camera_block_reader.hpp"

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

std::string detect_camera_format(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CameraFileError(path, 0, "cannot open event file");
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
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

CameraRecording read_camera_recording(const std::string& path) {
  CameraRecording rec;
  const auto info = read_camera_file(path, [&rec](const CameraEvent* e, std::size_t n) {
    rec.events.insert(rec.events.end(), e, e + n);
  });
  rec.sensor = info.sensor;
  return rec;
}

}  // namespace egret
