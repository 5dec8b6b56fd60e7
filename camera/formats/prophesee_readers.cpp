// Prophesee EVT 2.0, EVT 3.0 and DAT files (and an EVT 3.0 writer for round-trip tests).
#include <cstdio>
#include <fstream>

#include "camera/formats/camera_block_reader.hpp"
#include "io/event_csv.hpp"

namespace egret {
namespace {

using detail::BlockReader;
using detail::EventBatcher;

// A sensor side from a Prophesee header: digits at `pos` (advanced past them), 1 .. 65535.
// Anything else (no digits, a sign, zero, more than 65535) is an error naming the field.
int header_side(const std::string& line, std::size_t& pos, const char* field,
                const std::string& path, std::uint64_t at) {
  long v = 0;
  const std::size_t digits = pos;
  while (pos < line.size() && line[pos] >= '0' && line[pos] <= '9') {
    if (v <= kMaxSensorSide) v = v * 10 + (line[pos] - '0');  // stops growing once too large
    ++pos;
  }
  if (pos == digits || v < 1 || v > kMaxSensorSide)
    throw CameraFileError(path, at,
                          std::string("header field '") + field + "' is not a sensor size 1.." +
                              std::to_string(kMaxSensorSide) + ": '" + line + "'");
  return static_cast<int>(v);
}

// Sensor size from a Prophesee header: "% geometry WxH", "% format ...;height=H;width=W", or
// the camera plugin (Gen3: 640x480, Gen4.1 / IMX636: 1280x720). Unknown otherwise.
SensorSize prophesee_sensor(const std::vector<std::string>& header,
                            const std::vector<std::uint64_t>& starts, const std::string& path) {
  SensorSize s;
  for (std::size_t i = 0; i < header.size(); ++i) {
    const std::string& line = header[i];
    const std::uint64_t at = starts[i];
    std::size_t k = line.find("geometry");
    if (k != std::string::npos) {  // "% geometry 640x480"
      k = line.find_first_not_of(' ', k + 8);
      if (k == std::string::npos) k = line.size();
      const int w = header_side(line, k, "geometry width", path, at);
      if (k >= line.size() || line[k] != 'x')
        throw CameraFileError(path, at, "header field 'geometry' is not WxH: '" + line + "'");
      ++k;
      return {w, header_side(line, k, "geometry height", path, at)};
    }
    const std::size_t hk = line.find("height="), wk = line.find("width=");
    if (hk != std::string::npos && wk != std::string::npos) {  // "% format EVT3;height=H;width=W"
      std::size_t a = hk + 7, b = wk + 6;
      const int h = header_side(line, a, "height", path, at);
      return {header_side(line, b, "width", path, at), h};
    }
    if (line.find("plugin_name") != std::string::npos) {
      if (line.find("gen3") != std::string::npos) s = {640, 480};
      if (line.find("gen41") != std::string::npos || line.find("imx636") != std::string::npos)
        s = {1280, 720};
    }
  }
  return s;
}

std::string hex_digit(unsigned v) {
  return std::string("0x") + "0123456789ABCDEF"[v & 0xF];
}

void check_evt_version(const std::vector<std::string>& header, const std::string& want,
                       const std::string& path) {
  for (const auto& line : header) {
    if (line.rfind("% evt ", 0) == 0) {
      if (line.substr(6) != want)
        throw CameraFileError(path, 0,
                              "header says 'evt " + line.substr(6) + "', expected " + want);
      return;
    }
  }
}

}  // namespace

CameraFileInfo read_evt2(const std::string& path, const CameraEventSink& sink) {
  BlockReader r(path);
  CameraFileInfo info;
  info.format = "evt2";
  std::vector<std::uint64_t> starts;
  const auto header = r.header_lines('%', &starts);
  check_evt_version(header, "2.0", path);
  info.sensor = prophesee_sensor(header, starts, path);
  info.header_bytes = r.offset();
  EventBatcher out(sink, info);
  std::uint64_t time_high = 0;  // bits 6.. of the timestamp
  unsigned char w[4];
  for (;;) {
    const std::uint64_t at = r.offset();
    if (!r.read(w, 4, "EVT 2.0 word")) break;
    const std::uint32_t word = detail::le32(w);
    const unsigned type = word >> 28;
    switch (type) {
      case 0x0:    // CD_OFF
      case 0x1: {  // CD_ON
        CameraEvent e;
        e.t = static_cast<std::int64_t>((time_high << 6) | ((word >> 22) & 0x3F));
        e.x = static_cast<std::uint16_t>((word >> 11) & 0x7FF);
        e.y = static_cast<std::uint16_t>(word & 0x7FF);
        e.p = static_cast<std::uint8_t>(type);
        detail::check_in_sensor(r, info.sensor, e, at);
        out.push(e);
        break;
      }
      case 0x8:  // EVT_TIME_HIGH
        time_high = word & 0x0FFFFFFF;
        break;
      case 0xA:  // EXT_TRIGGER
      case 0xE:  // OTHERS
      case 0xF:  // CONTINUED
        ++info.skipped;
        break;
      default:
        throw CameraFileError(path, at, "unknown EVT 2.0 word type " + hex_digit(type));
    }
  }
  out.flush();
  return info;
}

CameraFileInfo read_evt3(const std::string& path, const CameraEventSink& sink) {
  BlockReader r(path);
  CameraFileInfo info;
  info.format = "evt3";
  std::vector<std::uint64_t> starts;
  const auto header = r.header_lines('%', &starts);
  check_evt_version(header, "3.0", path);
  info.sensor = prophesee_sensor(header, starts, path);
  info.header_bytes = r.offset();
  EventBatcher out(sink, info);
  std::uint64_t time_high = 0, time_low = 0, wraps = 0;
  bool have_time_high = false;
  std::uint16_t y = 0, x_base = 0;
  std::uint8_t pol = 0;
  auto now = [&] {
    return static_cast<std::int64_t>((wraps << 24) | (time_high << 12) | time_low);
  };
  auto emit = [&](std::uint16_t x, std::uint64_t at) {
    CameraEvent e{now(), x, y, pol};
    detail::check_time(r, e.t, at);
    detail::check_in_sensor(r, info.sensor, e, at);
    out.push(e);
  };
  unsigned char w[2];
  for (;;) {
    const std::uint64_t at = r.offset();
    if (!r.read(w, 2, "EVT 3.0 word")) break;
    const std::uint16_t word = detail::le16(w);
    const unsigned type = word >> 12;
    switch (type) {
      case 0x0:  // EVT_ADDR_Y
        y = word & 0x7FF;
        break;
      case 0x2:  // EVT_ADDR_X: one event
        pol = (word >> 11) & 1;
        emit(word & 0x7FF, at);
        break;
      case 0x3:  // VECT_BASE_X
        pol = (word >> 11) & 1;
        x_base = word & 0x7FF;
        break;
      case 0x4:    // VECT_12
      case 0x5: {  // VECT_8
        const int n = type == 0x4 ? 12 : 8;
        const unsigned mask = word & (type == 0x4 ? 0xFFFu : 0xFFu);
        for (int i = 0; i < n; ++i) {
          if (!(mask & (1u << i))) continue;
          if (x_base + i > 0x7FF)
            throw CameraFileError(path, at, "vector event beyond x = 2047 (11-bit addresses)");
          emit(static_cast<std::uint16_t>(x_base + i), at);
        }
        x_base = static_cast<std::uint16_t>(std::min(x_base + n, 0x800));
        break;
      }
      case 0x6:  // EVT_TIME_LOW
        time_low = word & 0xFFF;
        break;
      case 0x8: {  // EVT_TIME_HIGH: the 24-bit time base wraps every 2^24 us (16.8 s)
        const std::uint64_t th = word & 0xFFF;
        if (have_time_high && th < time_high) ++wraps;
        time_high = th;
        have_time_high = true;
        break;
      }
      case 0x7:  // CONTINUED_4
      case 0xA:  // EXT_TRIGGER
      case 0xE:  // OTHERS
      case 0xF:  // CONTINUED_12
        ++info.skipped;
        break;
      default:
        throw CameraFileError(path, at, "unknown EVT 3.0 word type " + hex_digit(type));
    }
  }
  out.flush();
  return info;
}

CameraFileInfo read_prophesee_dat(const std::string& path, const CameraEventSink& sink) {
  BlockReader r(path);
  CameraFileInfo info;
  info.format = "dat";
  std::vector<std::uint64_t> starts;
  const auto header = r.header_lines('%', &starts);
  info.sensor = prophesee_sensor(header, starts, path);
  std::size_t size = 8;
  if (!header.empty()) {  // DAT v2: an event type byte and an event size byte follow the header
    unsigned char ts[2];
    if (!r.read(ts, 2, "DAT event type and size"))
      throw CameraFileError(path, r.offset(), "no event type/size after the header");
    if (ts[0] != 0x00 && ts[0] != 0x0C)
      throw CameraFileError(
          path, r.offset() - 2,
          "unsupported DAT event type " + std::to_string(ts[0]) + " (expected 0: Event2D)");
    size = ts[1];
    if (size != 8)
      throw CameraFileError(path, r.offset() - 1,
                            "DAT event size " + std::to_string(size) + ", expected 8");
  }
  info.header_bytes = r.offset();
  EventBatcher out(sink, info);
  unsigned char rec[8];
  std::int64_t last = 0;
  for (;;) {
    const std::uint64_t at = r.offset();
    if (!r.read(rec, 8, "DAT event")) break;
    const std::uint32_t ts = detail::le32(rec), data = detail::le32(rec + 4);
    CameraEvent e;
    e.t = ts;
    e.x = static_cast<std::uint16_t>(data & 0x3FFF);
    e.y = static_cast<std::uint16_t>((data >> 14) & 0x3FFF);
    const unsigned p = data >> 28;
    if (p > 1)
      throw CameraFileError(path, at, "polarity " + std::to_string(p) + " is neither 0 nor 1");
    e.p = static_cast<std::uint8_t>(p);
    if (e.t < last) throw CameraFileError(path, at, "timestamp goes backwards");
    last = e.t;
    detail::check_in_sensor(r, info.sensor, e, at);
    out.push(e);
  }
  out.flush();
  return info;
}

// EVT 3.0 writer (events sorted by time): TIME_HIGH / TIME_LOW / ADDR_Y words when they change,
// then one ADDR_X word per event.
void write_evt3(const std::string& path, const std::vector<CameraEvent>& events,
                SensorSize sensor) {
  std::string bytes = "% evt 3.0\n% format EVT3;height=" + std::to_string(sensor.height) +
                      ";width=" + std::to_string(sensor.width) + "\n% end\n";
  auto word = [&bytes](unsigned w) {
    bytes.push_back(static_cast<char>(w & 0xFF));
    bytes.push_back(static_cast<char>((w >> 8) & 0xFF));
  };
  std::int64_t th = -1, tl = -1, yy = -1, last_t = 0, epoch = 0;
  for (const auto& e : events) {
    if (e.t < last_t || e.t < 0)
      throw std::invalid_argument(path + ": write_evt3 needs non-negative events sorted by time");
    last_t = e.t;
    // The reader counts a wrap of the 24-bit time base whenever TIME_HIGH decreases: each
    // 2^24 us epoch crossed is written as TIME_HIGH 0xFFF then 0x000.
    while (epoch < (e.t >> 24)) {
      word(0x8FFFu);
      word(0x8000u);
      th = 0;
      ++epoch;
    }
    const std::int64_t high = (e.t >> 12) & 0xFFF, low = e.t & 0xFFF;
    if (high != th) {
      word(0x8000u | static_cast<unsigned>(high));
      th = high;
    }
    if (low != tl) {
      word(0x6000u | static_cast<unsigned>(low));
      tl = low;
    }
    if (e.y != yy) {
      word(0x0000u | e.y);
      yy = e.y;
    }
    word(0x2000u | (static_cast<unsigned>(e.p & 1) << 11) | e.x);
  }
  write_file_atomically(path, bytes);
}

}  // namespace egret
