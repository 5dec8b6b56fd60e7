#include "camera/datasets/dvs_gesture.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "camera/camera_transforms.hpp"
#include "camera/formats/camera_readers.hpp"
#include "io/event_csv.hpp"
#include "io/text_fields.hpp"

namespace egret {
namespace {

using text::trim;

bool parse_int(const std::string& f, long long& out) {
  Index v = 0;
  if (!text::parse_index(f, v)) return false;
  out = v;
  return true;
}

}  // namespace

std::vector<GestureLabel> read_gesture_labels(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open gesture label file");
  std::vector<GestureLabel> out;
  std::string line;
  std::size_t n = 0;
  while (text::read_line(in, line, path, n + 1)) {
    ++n;
    line = trim(line);
    if (line.empty()) continue;
    auto fail = [&](const std::string& what) {
      throw std::invalid_argument(path + ":" + std::to_string(n) + ": " + what + ": '" + line +
                                  "'");
    };
    if (n == 1) {
      if (line != "class,startTime_usec,endTime_usec")
        fail("expected the header class,startTime_usec,endTime_usec");
      continue;
    }
    std::stringstream ss(line);
    std::string a, b, c, extra;
    if (!std::getline(ss, a, ',') || !std::getline(ss, b, ',') || !std::getline(ss, c, ',') ||
        std::getline(ss, extra, ','))
      fail("expected class,startTime_usec,endTime_usec");
    // fail() throws; the zeros only quiet -Wsometimes-uninitialized.
    long long cls = 0, s = 0, e = 0;
    if (!parse_int(a, cls) || !parse_int(b, s) || !parse_int(c, e)) fail("not an integer");
    if (cls < 1 || cls > 11) fail("class outside 1-11");
    if (s < 0 || s >= e || e > kMaxCameraTimeUs) fail("need 0 <= start < end <= 2^53 us");
    out.push_back({static_cast<int>(cls), s, e});
  }
  if (n == 0) throw std::invalid_argument(path + ": empty label file");
  return out;
}

void write_gesture_labels(const std::string& path, const std::vector<GestureLabel>& labels) {
  std::ostringstream os;
  os << "class,startTime_usec,endTime_usec\n";
  for (const auto& l : labels) os << l.cls << ',' << l.start_us << ',' << l.end_us << '\n';
  write_file_atomically(path, os.str());
}

std::vector<std::string> read_trial_list(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open trial list");
  std::vector<std::string> out;
  std::string line;
  for (std::size_t n = 1; text::read_line(in, line, path, n); ++n) {
    line = trim(line);
    if (line.empty()) continue;
    // A plain file name in the dataset's folder: no path separators, no "..", an .aedat name.
    const bool plain = line.find_first_of("/\\") == std::string::npos && line != "." &&
                       line != ".." && line.size() > 6 &&
                       line.compare(line.size() - 6, 6, ".aedat") == 0;
    if (!plain)
      throw std::invalid_argument(path + ":" + std::to_string(n) +
                                  ": expected a trial file name like user01_led.aedat: '" + line +
                                  "'");
    out.push_back(line);
  }
  return out;
}

std::vector<GestureSample> load_gesture_split(const std::string& dir, const std::string& split,
                                              std::int64_t slice_us) {
  if (split != "train" && split != "test")
    throw std::invalid_argument("load_gesture_split: split must be 'train' or 'test'");
  namespace fs = std::filesystem;
  const std::string list = (fs::path(dir) / ("trials_to_" + split + ".txt")).string();
  std::vector<GestureSample> out;
  for (const std::string& name : read_trial_list(list)) {
    const fs::path aedat = fs::path(dir) / name;
    const std::string stem = aedat.stem().string();
    const fs::path labels = fs::path(dir) / (stem + "_labels.csv");
    if (!fs::exists(aedat))
      throw std::runtime_error(list + ": trial " + name + " has no file " + aedat.string());
    if (!fs::exists(labels))
      throw std::runtime_error(list + ": trial " + name + " has no label file " + labels.string());
    const CameraRecording rec = read_camera_recording(aedat.string());
    for (const GestureLabel& l : read_gesture_labels(labels.string())) {
      std::vector<CameraEvent> events = crop_time(rec.events, l.start_us, l.end_us);
      auto add = [&](std::int64_t start, std::vector<CameraEvent> ev) {
        for (auto& e : ev) e.t -= start;
        out.push_back({l.cls - 1, stem, start, std::move(ev)});
      };
      if (slice_us <= 0) {
        add(l.start_us, std::move(events));
        continue;
      }
      for (std::int64_t s = l.start_us; s + slice_us <= l.end_us; s += slice_us)
        add(s, crop_time(events, s, s + slice_us));
    }
  }
  return out;
}

}  // namespace egret
