// AEDAT 2.0 (jAER) and AEDAT 3.1 (cAER; the DVS128 Gesture container) files, and the AEDAT 3.1
// writer used by the synthetic gesture generator and the round-trip tests.
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <vector>

#include "camera/formats/camera_block_reader.hpp"
#include "io/event_csv.hpp"

namespace egret {
namespace {

using detail::BlockReader;
using detail::EventBatcher;

constexpr std::int16_t kPolarityEvent = 1;
constexpr std::size_t kPacketHeader = 28;

std::int32_t as_i32(std::uint32_t v) {
  std::int32_t out;
  std::memcpy(&out, &v, 4);
  return out;
}

}  // namespace

CameraFileInfo read_aedat2(const std::string& path, const CameraEventSink& sink) {
  BlockReader r(path);
  CameraFileInfo info;
  info.format = "aedat2";
  const auto header = r.header_lines('#');
  if (header.empty() || header.front().rfind("#!AER-DAT2", 0) != 0)
    throw CameraFileError(path, 0, "not an AEDAT 2.0 file (no #!AER-DAT2.0 first line)");
  enum class Chip { kDvs128, kDavis } chip = Chip::kDvs128;
  std::string chip_name = "DVS128";  // jAER's default when the header does not say
  for (const auto& l : header) {
    const auto k = l.find("AEChip:");
    if (k == std::string::npos) continue;
    chip_name = l.substr(k + 7);
    if (l.find("DVS128") != std::string::npos) {
      chip = Chip::kDvs128;
    } else if (l.find("Davis346") != std::string::npos) {
      chip = Chip::kDavis;
      info.sensor = {346, 260};
    } else if (l.find("Davis240") != std::string::npos || l.find("DAVIS240") != std::string::npos) {
      chip = Chip::kDavis;
      info.sensor = {240, 180};
    } else {
      throw CameraFileError(path, 0,
                            "unsupported AEChip" + chip_name + " (DVS128, DAVIS240, DAVIS346)");
    }
  }
  if (chip == Chip::kDvs128) info.sensor = {128, 128};
  info.header_bytes = r.offset();
  EventBatcher out(sink, info);
  unsigned char rec[8];
  for (;;) {
    const std::uint64_t at = r.offset();
    if (!r.read(rec, 8, "AEDAT 2.0 event")) break;
    const std::uint32_t addr = detail::be32(rec), ts = detail::be32(rec + 4);
    CameraEvent e;
    e.t = ts;
    if (chip == Chip::kDvs128) {
      // jAER's DVS128 extractor: bit 15 (sync / external input) or bit 31 marks a special event;
      // x = 127 - bits 1-7 (the sensor's x is mirrored), y = bits 8-14, raw polarity bit 0 is
      // OFF when set (jAER flips it: ON when clear).
      if (addr & 0x80008000u) {
        ++info.skipped;
        continue;
      }
      e.p = (addr & 1u) ? 0 : 1;
      e.x = static_cast<std::uint16_t>(127 - ((addr & 0xFEu) >> 1));
      e.y = static_cast<std::uint16_t>((addr & 0x7F00u) >> 8);
    } else {
      // jAER's DAVIS extractor (DavisChip): bit 31 set is an APS or IMU sample; a DVS address
      // with event-type bits 10-11 = 01 is an external input event. Pixel events: polarity at
      // bit 11 (1 = ON), x = (width - 1) - bits 12-21 (mirrored), y = bits 22-30.
      if ((addr >> 31) || ((addr >> 10) & 3u) == 1u) {
        ++info.skipped;
        continue;
      }
      const std::uint32_t raw_x = (addr >> 12) & 0x3FF;
      if (raw_x >= static_cast<std::uint32_t>(info.sensor.width))
        throw CameraFileError(path, at,
                              "DAVIS address with x " + std::to_string(raw_x) + " outside the " +
                                  std::to_string(info.sensor.width) + "-pixel-wide sensor");
      e.p = (addr >> 11) & 1u;
      e.x = static_cast<std::uint16_t>(static_cast<std::uint32_t>(info.sensor.width) - 1 - raw_x);
      e.y = static_cast<std::uint16_t>((addr >> 22) & 0x1FF);
    }
    detail::check_in_sensor(r, info.sensor, e, at);
    out.push(e);
  }
  out.flush();
  return info;
}

namespace {

// "W" or "WxH" digits: a positive side up to 32768 (AEDAT 3.1 addresses are 15-bit).
int source_side(const std::string& line, std::size_t& pos, const std::string& path,
                std::uint64_t at) {
  long v = 0;
  const std::size_t digits = pos;
  while (pos < line.size() && line[pos] >= '0' && line[pos] <= '9') {
    if (v <= 0x8000) v = v * 10 + (line[pos] - '0');
    ++pos;
  }
  if (pos == digits || v < 1 || v > 0x8000)
    throw CameraFileError(path, at,
                          "#Source line with a sensor size outside 1..32768: '" + line + "'");
  return static_cast<int>(v);
}

// The AEDAT 3.1 text header, checked line by line: "#!AER-DAT3.1", "#Format: RAW", one or more
// "#Source N: NAME", then "#!END-HEADER" (other '#' lines, e.g. #Start-Time, are allowed).
// Returns the sensor of the first source: DVS128 unless it names another.
SensorSize read_aedat31_header(BlockReader& r) {
  const std::string& path = r.path();
  std::vector<std::uint64_t> starts;
  const auto header = r.header_lines('#', &starts, "#!END-HEADER");
  if (header.empty() || header.front() != "#!AER-DAT3.1")
    throw CameraFileError(path, 0, "not an AEDAT 3.1 file (no #!AER-DAT3.1 first line)");
  if (header.back() != "#!END-HEADER")
    throw CameraFileError(path, r.offset(), "header without #!END-HEADER");
  bool format_seen = false;
  SensorSize sensor;
  for (std::size_t i = 1; i + 1 < header.size(); ++i) {
    const std::string& l = header[i];
    if (l.rfind("#Format:", 0) == 0) {
      if (l != "#Format: RAW")
        throw CameraFileError(path, starts[i],
                              "unsupported '" + l + "' (only uncompressed RAW is read)");
      format_seen = true;
    } else if (l.rfind("#Source", 0) == 0 && sensor.width == 0) {
      const std::size_t k = l.find("DVS ");  // egret's writer: "#Source 1: DVS WxH"
      if (l.find("DVS128") != std::string::npos) {
        sensor = {128, 128};
      } else if (l.find("DAVIS240") != std::string::npos) {
        sensor = {240, 180};
      } else if (l.find("DAVIS346") != std::string::npos) {
        sensor = {346, 260};
      } else if (k != std::string::npos) {
        std::size_t pos = k + 4;
        const int w = source_side(l, pos, path, starts[i]);
        if (pos >= l.size() || l[pos] != 'x')
          throw CameraFileError(path, starts[i], "#Source size is not WxH: '" + l + "'");
        ++pos;
        sensor = {w, source_side(l, pos, path, starts[i])};
      } else {
        sensor = {-1, -1};  // a source egret does not know: sensor size unknown
      }
    }
  }
  if (!format_seen) throw CameraFileError(path, 0, "header without a #Format: RAW line");
  if (sensor.width == 0) throw CameraFileError(path, 0, "header without a #Source line");
  if (sensor.width < 0) sensor = {0, 0};
  return sensor;
}

struct PacketHeader {
  std::int16_t type;
  std::int32_t size, ts_offset, overflow, capacity, number, valid;
};

// A packet header, checked: positive sizes, the timestamp inside the event, counts consistent.
// Returns the bytes of the packet's events (read or skipped in bounded steps, never allocated).
std::uint64_t check_packet(const PacketHeader& h, const BlockReader& r, std::uint64_t at) {
  const std::int64_t size = h.size, capacity = h.capacity;
  const std::uint64_t bytes = static_cast<std::uint64_t>(size > 0 ? size : 0) *
                              static_cast<std::uint64_t>(capacity > 0 ? capacity : 0);
  if (size <= 0 || capacity <= 0 || h.number < 0 || h.valid < 0 || h.number > h.capacity ||
      h.valid > h.number || h.ts_offset < 0 || std::int64_t{h.ts_offset} + 4 > size ||
      h.overflow < 0) {
    std::ostringstream os;
    os << "corrupt AEDAT 3.1 packet header (type " << h.type << ", size " << h.size << ", offset "
       << h.ts_offset << ", capacity " << h.capacity << ", number " << h.number << ", valid "
       << h.valid << ", overflow " << h.overflow << ")";
    throw CameraFileError(r.path(), at, os.str());
  }
  return bytes;
}

}  // namespace

CameraFileInfo read_aedat31(const std::string& path, const CameraEventSink& sink) {
  BlockReader r(path);
  CameraFileInfo info;
  info.format = "aedat31";
  info.sensor = read_aedat31_header(r);
  info.header_bytes = r.offset();
  EventBatcher out(sink, info);
  unsigned char b[kPacketHeader];
  std::vector<unsigned char> rec(8);
  for (;;) {
    const std::uint64_t at = r.offset();
    if (!r.read(b, kPacketHeader, "AEDAT 3.1 packet header")) break;
    const PacketHeader h{static_cast<std::int16_t>(detail::le16(b)),
                         as_i32(detail::le32(b + 4)),
                         as_i32(detail::le32(b + 8)),
                         as_i32(detail::le32(b + 12)),
                         as_i32(detail::le32(b + 16)),
                         as_i32(detail::le32(b + 20)),
                         as_i32(detail::le32(b + 24))};
    if (h.type == kPolarityEvent && (h.size != 8 || h.ts_offset != 4))
      throw CameraFileError(path, at,
                            "polarity packet with event size " + std::to_string(h.size) +
                                " and timestamp offset " + std::to_string(h.ts_offset) +
                                " (expected 8 and 4)");
    const std::uint64_t bytes = check_packet(h, r, at);
    if (h.type != kPolarityEvent) {  // other packet types are skipped, their events counted
      info.skipped += static_cast<std::uint64_t>(h.number);
      r.skip(bytes, "AEDAT 3.1 packet");
      continue;
    }
    for (std::int32_t i = 0; i < h.capacity; ++i) {
      const std::uint64_t eat = r.offset();
      if (!r.read(rec.data(), 8, "AEDAT 3.1 polarity event"))
        throw CameraFileError(path, eat,
                              "file ends inside a polarity packet (event " + std::to_string(i) +
                                  " of " + std::to_string(h.capacity) + ")");
      if (i >= h.number) continue;  // capacity beyond the events in use
      const std::uint32_t data = detail::le32(rec.data());
      const std::int32_t ts = as_i32(detail::le32(rec.data() + 4));
      if (!(data & 1u)) {  // valid bit
        ++info.skipped;
        continue;
      }
      if (ts < 0) throw CameraFileError(path, eat + 4, "negative timestamp");
      CameraEvent e;
      e.t = (static_cast<std::int64_t>(h.overflow) << 31) + ts;  // overflow < 2^31: no wrap
      detail::check_time(r, e.t, eat + 4);
      e.p = (data >> 1) & 1u;
      e.y = static_cast<std::uint16_t>((data >> 2) & 0x7FFF);
      e.x = static_cast<std::uint16_t>((data >> 17) & 0x7FFF);
      detail::check_in_sensor(r, info.sensor, e, eat);
      out.push(e);
    }
  }
  out.flush();
  return info;
}

void write_aedat31(const std::string& path, const std::vector<CameraEvent>& events,
                   SensorSize sensor, std::size_t packet_events) {
  if (packet_events == 0) throw std::invalid_argument("write_aedat31: packet_events must be > 0");
  // Only what read_aedat31 accepts: a sensor of 1..32768 per side (15-bit addresses), events
  // inside it, times in [0, 2^53] us, sorted.
  if (sensor.width < 1 || sensor.width > 0x8000 || sensor.height < 1 || sensor.height > 0x8000)
    throw std::invalid_argument(path + ": write_aedat31: sensor " + std::to_string(sensor.width) +
                                "x" + std::to_string(sensor.height) +
                                " outside the AEDAT 3.1 range 1..32768 per side");
  std::string bytes = "#!AER-DAT3.1\r\n#Format: RAW\r\n#Source 1: ";
  bytes += sensor.width == 128 && sensor.height == 128
               ? "DVS128"
               : "DVS " + std::to_string(sensor.width) + "x" + std::to_string(sensor.height);
  bytes += "\r\n#Start-Time: egret\r\n#!END-HEADER\r\n";
  auto put32 = [&bytes](std::uint32_t v) {
    for (int k = 0; k < 4; ++k) bytes.push_back(static_cast<char>((v >> (8 * k)) & 0xFF));
  };
  std::size_t i = 0;
  while (i < events.size()) {
    // A packet: consecutive events sharing one overflow value, at most packet_events of them.
    const std::int64_t overflow = events[i].t >> 31;
    std::size_t j = i;
    while (j < events.size() && j - i < packet_events && (events[j].t >> 31) == overflow) {
      const auto& e = events[j];
      if (!is_camera_time(e.t) || (j > 0 && e.t < events[j - 1].t))
        throw std::invalid_argument(path + ": write_aedat31: event " + std::to_string(j) + " at " +
                                    std::to_string(e.t) +
                                    " us: times must be sorted and in [0, 2^53] us");
      if (e.x >= sensor.width || e.y >= sensor.height || e.p > 1)
        throw std::invalid_argument(path + ": write_aedat31: event " + std::to_string(j) + " at (" +
                                    std::to_string(e.x) + ", " + std::to_string(e.y) +
                                    ") does not fit the " + std::to_string(sensor.width) + "x" +
                                    std::to_string(sensor.height) + " sensor");
      ++j;
    }
    const auto n = static_cast<std::uint32_t>(j - i);
    bytes.push_back(static_cast<char>(kPolarityEvent & 0xFF));
    bytes.push_back(0);
    bytes.push_back(1);  // source 1
    bytes.push_back(0);
    put32(8);                                     // event size
    put32(4);                                     // timestamp offset
    put32(static_cast<std::uint32_t>(overflow));  // timestamp overflow
    put32(n);                                     // capacity
    put32(n);                                     // number
    put32(n);                                     // valid
    for (; i < j; ++i) {
      const auto& e = events[i];
      put32(1u | (static_cast<std::uint32_t>(e.p) << 1) | (static_cast<std::uint32_t>(e.y) << 2) |
            (static_cast<std::uint32_t>(e.x) << 17));
      put32(static_cast<std::uint32_t>(e.t & 0x7FFFFFFF));
    }
  }
  write_file_atomically(path, bytes);
}

}  // namespace egret
