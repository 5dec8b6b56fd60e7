// Readers for event-camera files. Each streams the file in fixed-size blocks and hands the
// decoded events to a callback in batches, so memory does not grow with the file. Truncated or
// corrupt input is an error naming the file and the byte offset; nothing is silently dropped.
//
//   Prophesee EVT 2.0 (.raw), EVT 3.0 (.raw), DAT (.dat, Event2D), N-MNIST (.bin),
//   AEDAT 2.0 (jAER: DVS128 and DAVIS addresses), AEDAT 3.1 (polarity packets; the DVS128
//   Gesture container) and its writer, and event arrays (.npy, HDF5) with fields x, y, p, t.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "camera/camera_event.hpp"

namespace egret {

// Receives consecutive batches of decoded events.
using CameraEventSink = std::function<void(const CameraEvent* events, std::size_t n)>;

struct CameraFileInfo {
  std::string format;
  SensorSize sensor;          // from the header where it says, else the format's sensor
  std::uint64_t events = 0;   // events delivered
  std::uint64_t skipped = 0;  // records that are not change-detection events (counted)
  std::uint64_t header_bytes = 0;
};

class CameraFileError : public std::runtime_error {
 public:
  CameraFileError(const std::string& path, std::uint64_t offset, const std::string& what)
      : std::runtime_error(path + ": byte " + std::to_string(offset) + ": " + what) {}
};

CameraFileInfo read_evt2(const std::string& path, const CameraEventSink& sink);
CameraFileInfo read_evt3(const std::string& path, const CameraEventSink& sink);
CameraFileInfo read_prophesee_dat(const std::string& path, const CameraEventSink& sink);
CameraFileInfo read_nmnist_bin(const std::string& path, const CameraEventSink& sink);
CameraFileInfo read_aedat2(const std::string& path, const CameraEventSink& sink);
CameraFileInfo read_aedat31(const std::string& path, const CameraEventSink& sink);
CameraFileInfo read_aedat4(const std::string& path, const CameraEventSink& sink);
// Event arrays with fields x, y, p, t (t in us, sorted): .npy structured arrays; HDF5 files
// with a compound dataset "events" or a group "events" of datasets x, y, p, t.
CameraFileInfo read_npy_events(const std::string& path, const CameraEventSink& sink);
CameraFileInfo read_hdf5_events(const std::string& path, const CameraEventSink& sink);

// Every format read_camera_file accepts: the id its reader reports (CameraFileInfo::format) and
// the name the documentation, the errors and `egret --help` use.
struct CameraFormat {
  const char* id;
  const char* name;
};
inline constexpr std::array<CameraFormat, 9> kCameraFormats = {{{"aedat2", "AEDAT 2.0"},
                                                                {"aedat31", "AEDAT 3.1"},
                                                                {"aedat4", "AEDAT 4.0"},
                                                                {"evt2", "Prophesee EVT 2.0"},
                                                                {"evt3", "Prophesee EVT 3.0"},
                                                                {"dat", "Prophesee DAT"},
                                                                {"nmnist", "N-MNIST .bin"},
                                                                {"npy", ".npy event arrays"},
                                                                {"hdf5", "HDF5 event arrays"}}};

// The format of a file from its header / extension: a kCameraFormats id, or "" when it is none
// of them (the file must be readable; errors name it).
std::string detect_camera_format(const std::string& path);

// Chooses the reader with detect_camera_format.
CameraFileInfo read_camera_file(const std::string& path, const CameraEventSink& sink);

// Convenience: the whole file in memory.
CameraRecording read_camera_recording(const std::string& path);

// EVT 3.0 writer (events sorted by time; for round trips and test data): TIME_HIGH, TIME_LOW and
// ADDR_Y words when they change, one ADDR_X word per event, wraps of the 24-bit time base
// marked so that the reader counts them.
void write_evt3(const std::string& path, const std::vector<CameraEvent>& events, SensorSize sensor);

// AEDAT 3.1 writer: polarity packets of at most `packet_events` events, timestamps split into
// 31-bit values and the packet's overflow counter (so times beyond 2^31 us round-trip). Written
// to a temporary name and renamed.
void write_aedat31(const std::string& path, const std::vector<CameraEvent>& events,
                   SensorSize sensor = {128, 128}, std::size_t packet_events = 4096);

// N-MNIST .bin writer (5 bytes per event: x, y, polarity bit and a 23-bit time in us, big-endian;
// the layout read_nmnist_bin reads). Refuses what the format cannot hold: coordinates beyond
// 255 or outside `sensor`, times outside [0, 2^23) us or not sorted. Written to a temporary name
// and renamed.
void write_nmnist_bin(const std::string& path, const std::vector<CameraEvent>& events,
                      SensorSize sensor = {34, 34});

}  // namespace egret
