// AEDAT 4.0 (iniVation DV): "#!AER-DAT4.0\r\n", an IOHeader flatbuffer (compression, position
// of the data table, the XML description of the streams), then packets: int32 stream id, int32
// size, and the (LZ4- or un-compressed) flatbuffer of the packet. Event packets ("EVTS") hold a
// vector of 16-byte structs {int64 t; int16 x; int16 y; bool on}. Other streams (frames, IMU,
// triggers) are skipped and counted. The flatbuffers are read by hand with bounds checks.
#include <lz4frame.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "camera/formats/camera_block_reader.hpp"

namespace egret {
namespace {

// Bounds-checked little-endian reads inside one flatbuffer.
struct Flat {
  const unsigned char* data;
  std::size_t size;
  const std::string& path;
  std::uint64_t at;  // file offset of the buffer, for errors
  void need(std::size_t pos, std::size_t n) const {
    if (pos > size || n > size - pos)
      throw CameraFileError(path, at,
                            "corrupt flatbuffer (offset " + std::to_string(pos) + " beyond its " +
                                std::to_string(size) + " bytes)");
  }
  std::uint32_t u32(std::size_t pos) const {
    need(pos, 4);
    return detail::le32(data + pos);
  }
  std::uint16_t u16(std::size_t pos) const {
    need(pos, 2);
    return detail::le16(data + pos);
  }
  // Position of field `k` of the table at `table` (0 if absent).
  std::size_t field(std::size_t table, int k) const {
    const auto soff = static_cast<std::int32_t>(u32(table));
    const std::int64_t vt = static_cast<std::int64_t>(table) - soff;
    if (vt < 0) throw CameraFileError(path, at, "corrupt flatbuffer vtable");
    const std::uint16_t vsize = u16(static_cast<std::size_t>(vt));
    if (4 + 2 * static_cast<std::size_t>(k) + 2 > vsize) return 0;
    const std::uint16_t off =
        u16(static_cast<std::size_t>(vt) + 4 + 2 * static_cast<std::size_t>(k));
    return off ? table + off : 0;
  }
  std::size_t deref(std::size_t pos) const { return pos + u32(pos); }
};

// A decompressed event packet is at most this large: 64 MiB holds 4 million 16-byte events,
// far beyond the packets DV writes (it commits packets every few milliseconds).
constexpr std::size_t kMaxDecompressedPacket = std::size_t{1} << 26;
// Bytes a packet may hold after its events vector (flatbuffer alignment padding).
constexpr std::size_t kMaxPacketSlack = 64;

std::vector<unsigned char> lz4_decompress(const std::vector<unsigned char>& in,
                                          const std::string& path, std::uint64_t at) {
  LZ4F_dctx* ctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION)))
    throw CameraFileError(path, at, "cannot create an LZ4 decompression context");
  struct Free {
    LZ4F_dctx* ctx;
    ~Free() { LZ4F_freeDecompressionContext(ctx); }
  } free_ctx{ctx};
  std::vector<unsigned char> out;
  std::size_t src = 0;
  unsigned char buf[65536];
  std::size_t ret = 1;
  while (src < in.size() && ret != 0) {
    std::size_t dst_size = sizeof buf, src_size = in.size() - src;
    ret = LZ4F_decompress(ctx, buf, &dst_size, in.data() + src, &src_size, nullptr);
    if (LZ4F_isError(ret))
      throw CameraFileError(path, at, std::string("corrupt LZ4 packet: ") + LZ4F_getErrorName(ret));
    if (src_size == 0 && dst_size == 0)
      throw CameraFileError(path, at, "LZ4 packet makes no progress");
    src += src_size;
    if (dst_size > kMaxDecompressedPacket - out.size())
      throw CameraFileError(path, at,
                            "LZ4 packet of " + std::to_string(in.size()) +
                                " bytes decompresses to more than the 64 MiB cap of a packet");
    out.insert(out.end(), buf, buf + dst_size);
  }
  if (ret != 0) throw CameraFileError(path, at, "truncated LZ4 packet");
  return out;
}

// A sensor side from the XML description: digits only, 1 .. kMaxSensorSide.
int xml_sensor_side(const std::string& body, std::size_t pos, const char* key,
                    const std::string& path, std::uint64_t at) {
  long v = 0;
  const std::size_t digits = pos;
  while (pos < body.size() && body[pos] >= '0' && body[pos] <= '9' && v <= kMaxSensorSide)
    v = v * 10 + (body[pos++] - '0');
  if (pos == digits || v < 1 || v > kMaxSensorSide)
    throw CameraFileError(path, at,
                          std::string("IOHeader XML: ") + key + " is not a sensor size 1.." +
                              std::to_string(kMaxSensorSide));
  return static_cast<int>(v);
}

// What the IOHeader says: the compression, where the data table starts (-1: not given) and the
// ids of the event streams (sorted: looked up once per packet).
struct IoHeader {
  std::int32_t compression = 0;
  std::int64_t table_pos = -1;
  std::vector<int> event_streams;
};

// Stream ids of event streams from the XML description (<node name="ID"> ... typeIdentifier ...
// EVTS), and the sensor size of the first one that states it.
std::vector<int> xml_event_streams(const std::string& xml, CameraFileInfo& info,
                                   const std::string& path, std::uint64_t at) {
  // Stream nodes have numeric names; their body runs to the next numeric node (it contains the
  // nested "info" node with sizeX / sizeY).
  auto next_stream = [&xml](std::size_t from) {
    for (std::size_t p = xml.find("<node name=\"", from); p != std::string::npos;
         p = xml.find("<node name=\"", p + 1))
      if (p + 12 < xml.size() && xml[p + 12] >= '0' && xml[p + 12] <= '9') return p;
    return std::string::npos;
  };
  std::vector<int> event_streams;
  for (std::size_t p = next_stream(0); p != std::string::npos;) {
    const std::size_t next = next_stream(p + 1);
    const std::string body =
        xml.substr(p, next == std::string::npos ? std::string::npos : next - p);
    long id = 0;
    for (std::size_t q = p + 12;
         q < xml.size() && xml[q] >= '0' && xml[q] <= '9' && id < (1L << 31); ++q)
      id = id * 10 + (xml[q] - '0');
    if (id >= (1L << 31)) throw CameraFileError(path, at, "IOHeader XML: stream id overflows");
    if (body.find(">EVTS<") != std::string::npos) {
      event_streams.push_back(static_cast<int>(id));
      const std::string kx = "key=\"sizeX\" type=\"int\">", ky = "key=\"sizeY\" type=\"int\">";
      const std::size_t sx = body.find(kx), sy = body.find(ky);
      if (sx != std::string::npos && sy != std::string::npos && info.sensor.width == 0)
        info.sensor = {xml_sensor_side(body, sx + kx.size(), "sizeX", path, at),
                       xml_sensor_side(body, sy + ky.size(), "sizeY", path, at)};
    }
    p = next;
  }
  std::sort(event_streams.begin(), event_streams.end());
  return event_streams;
}

// The first line, then the IOHeader flatbuffer (size-prefixed, identifier IOHE).
IoHeader read_io_header(detail::BlockReader& r, const std::string& path, CameraFileInfo& info) {
  const auto header = r.header_lines('#');
  if (header.empty() || header.front() != "#!AER-DAT4.0")
    throw CameraFileError(path, 0, "not an AEDAT 4.0 file (no #!AER-DAT4.0 first line)");
  unsigned char w[4];
  if (!r.read(w, 4, "IOHeader size")) throw CameraFileError(path, r.offset(), "no IOHeader");
  const std::uint32_t hsize = detail::le32(w);
  if (hsize < 8 || hsize > (1u << 24) || hsize > r.remaining())
    throw CameraFileError(path, r.offset() - 4,
                          "IOHeader size " + std::to_string(hsize) + " is below 8 or beyond the " +
                              std::to_string(r.remaining()) + " bytes left in the file");
  std::vector<unsigned char> ioh(hsize);
  const std::uint64_t ioh_at = r.offset();
  if (!r.read(ioh.data(), hsize, "IOHeader"))
    throw CameraFileError(path, ioh_at, "truncated IOHeader");
  const Flat h{ioh.data(), ioh.size(), path, ioh_at};
  if (std::memcmp(ioh.data() + 4, "IOHE", 4) != 0)
    throw CameraFileError(path, ioh_at, "IOHeader lacks its IOHE identifier");
  const std::size_t root = h.u32(0);
  const std::size_t fc = h.field(root, 0), fd = h.field(root, 1), fx = h.field(root, 2);
  IoHeader out;
  out.compression = fc ? static_cast<std::int32_t>(h.u32(fc)) : 0;
  if (fd) {
    h.need(fd, 8);
    std::memcpy(&out.table_pos, ioh.data() + fd, 8);
  }
  if (out.compression != 0 && out.compression != 1 && out.compression != 2)
    throw CameraFileError(path, ioh_at,
                          "compression " + std::to_string(out.compression) +
                              " (ZSTD) is not supported; LZ4 and none are");
  if (fx) {
    const std::size_t s = h.deref(fx);
    const std::size_t len = h.u32(s);
    h.need(s + 4, len);
    const std::string xml(reinterpret_cast<const char*>(ioh.data() + s + 4), len);
    out.event_streams = xml_event_streams(xml, info, path, ioh_at);
  }
  return out;
}

// The events of one (decompressed) event packet, `at` the file offset of its header, into `out`.
void read_event_packet(const std::vector<unsigned char>& data, const detail::BlockReader& r,
                       std::uint64_t at, const CameraFileInfo& info, detail::EventBatcher& out) {
  const std::string& path = r.path();
  // Size-prefixed flatbuffer with identifier "EVTS".
  const Flat f{data.data(), data.size(), path, at + 8};
  std::size_t base = 0;
  if (data.size() >= 12 && std::memcmp(data.data() + 8, "EVTS", 4) == 0)
    base = 4;
  else if (!(data.size() >= 8 && std::memcmp(data.data() + 4, "EVTS", 4) == 0))
    throw CameraFileError(path, at + 8, "event packet without its EVTS identifier");
  const std::size_t table = base + f.u32(base);
  const std::size_t fe = f.field(table, 0);
  if (!fe)
    throw CameraFileError(path, at + 8,
                          "event packet of " + std::to_string(data.size()) +
                              " bytes whose table holds no events vector");
  const std::size_t vec = f.deref(fe);
  const std::size_t n = f.u32(vec);
  if (n > (data.size() - std::min(data.size(), vec + 4)) / 16)
    throw CameraFileError(path, at + 8,
                          "event packet claims " + std::to_string(n) + " events, beyond its " +
                              std::to_string(data.size()) + " bytes");
  // The builder writes the events vector last, at the end of the buffer: a packet much larger
  // than its events (an LZ4 bomb of padding) is refused.
  const std::size_t needed = vec + 4 + 16 * n;
  if (data.size() - needed > kMaxPacketSlack)
    throw CameraFileError(path, at + 8,
                          "event packet of " + std::to_string(data.size()) + " bytes holds " +
                              std::to_string(n) + " events, which need only " +
                              std::to_string(needed));
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char* e = data.data() + vec + 4 + 16 * i;
    std::int64_t t;
    std::memcpy(&t, e, 8);
    CameraEvent ev;
    detail::check_time(r, t, at + 8);
    ev.t = t;
    const auto x = static_cast<std::int16_t>(detail::le16(e + 8)),
               y = static_cast<std::int16_t>(detail::le16(e + 10));
    if (x < 0 || y < 0) throw CameraFileError(path, at + 8, "negative event coordinates");
    ev.x = static_cast<std::uint16_t>(x);
    ev.y = static_cast<std::uint16_t>(y);
    ev.p = e[12] ? 1 : 0;
    detail::check_in_sensor(r, info.sensor, ev, at);
    out.push(ev);
  }
}

}  // namespace

CameraFileInfo read_aedat4(const std::string& path, const CameraEventSink& sink) {
  detail::BlockReader r(path);
  CameraFileInfo info;
  info.format = "aedat4";
  const IoHeader header = read_io_header(r, path, info);
  info.header_bytes = r.offset();
  detail::EventBatcher out(sink, info);
  std::vector<unsigned char> packet;
  for (;;) {
    const std::uint64_t at = r.offset();
    if (header.table_pos > 0 && at >= static_cast<std::uint64_t>(header.table_pos))
      break;  // the data table
    unsigned char w[8];
    if (!r.read(w, 8, "AEDAT 4.0 packet header")) break;
    const auto stream = static_cast<std::int32_t>(detail::le32(w));
    const std::uint32_t size = detail::le32(w + 4);
    // Checked against the file before anything is allocated.
    if (size > r.remaining())
      throw CameraFileError(path, at,
                            "truncated AEDAT 4.0 packet: its size " + std::to_string(size) +
                                " exceeds the " + std::to_string(r.remaining()) +
                                " bytes left in the file");
    // Other streams (frames, IMU, triggers) are skipped in bounded steps, never allocated.
    if (!std::binary_search(header.event_streams.begin(), header.event_streams.end(), stream)) {
      r.skip(size, "AEDAT 4.0 packet");
      ++info.skipped;
      continue;
    }
    if (size > kMaxDecompressedPacket)
      throw CameraFileError(
          path, at,
          "event packet of " + std::to_string(size) + " bytes beyond the 64 MiB cap of a packet");
    packet.resize(size);
    if (size > 0 && !r.read(packet.data(), size, "AEDAT 4.0 packet"))
      throw CameraFileError(path, at + 8,
                            "file ends before the packet's " + std::to_string(size) + " bytes");
    // Uncompressed packets are read in place; compressed ones from their decompressed copy.
    if (header.compression == 0)
      read_event_packet(packet, r, at, info, out);
    else
      read_event_packet(lz4_decompress(packet, path, at + 8), r, at, info, out);
  }
  out.flush();
  return info;
}

}  // namespace egret
