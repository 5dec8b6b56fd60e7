// AEDAT 2.0 (jAER) and AEDAT 3.1 (cAER; the DVS128 Gesture container) files, and the AEDAT 3.1
// writer used by the synthetic gesture generator and the round-trip tests.
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "io/camera_block_reader.hpp"
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
      // jAER DVS128 addresses: bit 0 polarity (1 = ON), bits 1-7 x, bits 8-14 y, bit 15 external.
      if (addr & 0x8000u) {
        ++info.skipped;
        continue;
      }
      e.p = addr & 1u;
      e.x = static_cast<std::uint16_t>((addr >> 1) & 0x7F);
      e.y = static_cast<std::uint16_t>((addr >> 8) & 0x7F);
    } else {
      // jAER DAVIS addresses: bit 31 APS/IMU sample, bit 10 external input; DVS events have
      // polarity at bit 11, x at bits 12-21, y at bits 22-30.
      if ((addr >> 31) || (addr & (1u << 10))) {
        ++info.skipped;
        continue;
      }
      e.p = (addr >> 11) & 1u;
      e.x = static_cast<std::uint16_t>((addr >> 12) & 0x3FF);
      e.y = static_cast<std::uint16_t>((addr >> 22) & 0x1FF);
    }
    detail::check_in_sensor(r, info.sensor, e, at);
    out.push(e);
  }
  out.flush();
  return info;
}

CameraFileInfo read_aedat31(const std::string& path, const CameraEventSink& sink) {
  BlockReader r(path);
  CameraFileInfo info;
  info.format = "aedat31";
  const auto header = r.header_lines('#');
  if (header.empty() || header.front().rfind("#!AER-DAT3", 0) != 0)
    throw CameraFileError(path, 0, "not an AEDAT 3.x file (no #!AER-DAT3.1 first line)");
  bool end_seen = false;
  info.sensor = {128, 128};  // DVS128 unless the header names another source
  for (const auto& l : header) {
    if (l == "#!END-HEADER") end_seen = true;
    if (l.rfind("#Source", 0) == 0 && l.find("DVS128") == std::string::npos) {
      int w = 0, h = 0;
      const std::size_t k = l.find("DVS ");  // egret's writer: "#Source 1: DVS WxH"
      if (l.find("DAVIS240") != std::string::npos) {
        info.sensor = {240, 180};
      } else if (l.find("DAVIS346") != std::string::npos) {
        info.sensor = {346, 260};
      } else if (k != std::string::npos && std::sscanf(l.c_str() + k + 4, "%dx%d", &w, &h) == 2) {
        info.sensor = {w, h};
      } else {
        info.sensor = {0, 0};
      }
    }
  }
  if (!end_seen) throw CameraFileError(path, r.offset(), "header without #!END-HEADER");
  info.header_bytes = r.offset();
  EventBatcher out(sink, info);
  unsigned char h[kPacketHeader];
  std::vector<unsigned char> rec(8);
  for (;;) {
    const std::uint64_t at = r.offset();
    if (!r.read(h, kPacketHeader, "AEDAT 3.1 packet header")) break;
    const std::int16_t type = static_cast<std::int16_t>(detail::le16(h));
    const std::int32_t size = as_i32(detail::le32(h + 4));
    const std::int32_t ts_offset = as_i32(detail::le32(h + 8));
    const std::int32_t overflow = as_i32(detail::le32(h + 12));
    const std::int32_t capacity = as_i32(detail::le32(h + 16));
    const std::int32_t number = as_i32(detail::le32(h + 20));
    const std::int32_t valid = as_i32(detail::le32(h + 24));
    if (size <= 0 || capacity < 0 || number < 0 || valid < 0 || number > capacity ||
        valid > number || ts_offset < 0 || ts_offset + 4 > size || overflow < 0 ||
        static_cast<std::uint64_t>(size) * static_cast<std::uint64_t>(capacity) > (1ULL << 32)) {
      std::ostringstream os;
      os << "corrupt AEDAT 3.1 packet header (type " << type << ", size " << size << ", offset "
         << ts_offset << ", capacity " << capacity << ", number " << number << ", valid " << valid
         << ", overflow " << overflow << ")";
      throw CameraFileError(path, at, os.str());
    }
    const std::uint64_t bytes =
        static_cast<std::uint64_t>(size) * static_cast<std::uint64_t>(capacity);
    if (type != kPolarityEvent) {  // other packet types are skipped, their events counted
      info.skipped += static_cast<std::uint64_t>(number);
      r.skip(bytes, "AEDAT 3.1 packet");
      continue;
    }
    if (size != 8 || ts_offset != 4)
      throw CameraFileError(path, at,
                            "polarity packet with event size " + std::to_string(size) +
                                " and timestamp offset " + std::to_string(ts_offset) +
                                " (expected 8 and 4)");
    for (std::int32_t i = 0; i < capacity; ++i) {
      const std::uint64_t eat = r.offset();
      if (!r.read(rec.data(), 8, "AEDAT 3.1 polarity event"))
        throw CameraFileError(path, eat,
                              "file ends inside a polarity packet (event " + std::to_string(i) +
                                  " of " + std::to_string(capacity) + ")");
      if (i >= number) continue;  // capacity beyond the events in use
      const std::uint32_t data = detail::le32(rec.data());
      const std::int32_t ts = as_i32(detail::le32(rec.data() + 4));
      if (!(data & 1u)) {  // valid bit
        ++info.skipped;
        continue;
      }
      if (ts < 0) throw CameraFileError(path, eat + 4, "negative timestamp");
      CameraEvent e;
      e.t = (static_cast<std::int64_t>(overflow) << 31) + ts;
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
      if (e.t < 0 || (j > 0 && e.t < events[j - 1].t))
        throw std::invalid_argument(path +
                                    ": write_aedat31 needs non-negative events sorted by time");
      if (e.x > 0x7FFF || e.y > 0x7FFF || e.p > 1)
        throw std::invalid_argument(path + ": event does not fit the AEDAT 3.1 polarity layout");
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
