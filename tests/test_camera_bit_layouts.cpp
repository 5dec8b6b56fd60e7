// Each camera format against its specification's bit layout: a few records built by hand from
// the layout (written out in a comment above each test), with the decoded x, y, p, t written
// out independently. AEDAT 2.0 follows jAER's DVS128 and DAVIS extractors.
#include <gtest/gtest.h>
#include <lz4frame.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "camera/formats/camera_readers.hpp"
#include "tests/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using egret::CameraEvent;
using egret::testing::error_of;

std::string write(const std::string& name, const std::string& bytes) {
  const fs::path dir = fs::path(::testing::TempDir()) / "egret_bit_layouts";
  fs::create_directories(dir);
  const fs::path p = dir / name;
  std::ofstream(p, std::ios::binary) << bytes;
  return p.string();
}

void le(std::string& s, std::uint64_t v, int bytes) {
  for (int k = 0; k < bytes; ++k) s.push_back(static_cast<char>((v >> (8 * k)) & 0xFF));
}
void be(std::string& s, std::uint64_t v, int bytes) {
  for (int k = bytes - 1; k >= 0; --k) s.push_back(static_cast<char>((v >> (8 * k)) & 0xFF));
}

// AEDAT 2.0 (jAER): header lines starting with '#', then big-endian records of int32 address,
// int32 timestamp (us). DVS128 addresses (jAER DVS128.Extractor):
//   bit 15 (and bit 31): special event (sync / external input), not a pixel;
//   bits 8-14: y;  bits 1-7: x', the pixel's x is 127 - x';  bit 0: raw polarity, ON when CLEAR.
TEST(CameraBitLayouts, Aedat2Dvs128FollowsJaer) {
  std::string f = "#!AER-DAT2.0\r\n# AEChip: ch.unizh.ini.jaer.chip.retina.DVS128\r\n";
  auto rec = [&](std::uint32_t addr, std::uint32_t t) {
    be(f, addr, 4);
    be(f, t, 4);
  };
  rec(0x0000, 10);                // x' 0, y 0, raw pol 0          -> x 127, y 0,   ON
  rec(0x0001, 20);                // raw pol 1                     -> x 127, y 0,   OFF
  rec(0x7FFE, 30);                // x' 127, y 127, raw pol 0      -> x 0,   y 127, ON
  rec(0x8000, 35);                // bit 15: special, skipped
  rec(0x2A15, 40);                // y 0x2A = 42, x' 0x0A = 10, pol 1 -> x 117, y 42, OFF
  rec(0x80000000u | 0x0102, 45);  // bit 31: special, skipped
  rec(0x0102, 50);                // y 1, x' 1, pol 0              -> x 126, y 1,   ON
  const auto r = egret::read_camera_recording(write("dvs128.aedat", f));
  EXPECT_EQ(r.sensor.width, 128);
  EXPECT_EQ(r.sensor.height, 128);
  const std::vector<CameraEvent> expected = {
      {10, 127, 0, 1}, {20, 127, 0, 0}, {30, 0, 127, 1}, {40, 117, 42, 0}, {50, 126, 1, 1}};
  EXPECT_EQ(r.events, expected);
  const auto info =
      egret::read_camera_file(write("dvs128.aedat", f), [](const CameraEvent*, std::size_t) {});
  EXPECT_EQ(info.skipped, 2u);
  EXPECT_EQ(info.events, 5u);
}

// AEDAT 2.0 DAVIS addresses (jAER DavisChip): bit 31 set: APS or IMU sample (skipped); bits
// 10-11 = 01: external input event (skipped); otherwise a DVS event with y = bits 22-30,
// x' = bits 12-21 and the pixel's x = (width - 1) - x', polarity bit 11 (1 = ON).
TEST(CameraBitLayouts, Aedat2DavisFollowsJaer) {
  std::string f = "#!AER-DAT2.0\r\n# AEChip: eu.seebetter.ini.chips.davis.Davis346B\r\n";
  auto rec = [&](std::uint32_t addr, std::uint32_t t) {
    be(f, addr, 4);
    be(f, t, 4);
  };
  auto dvs = [](std::uint32_t y, std::uint32_t xr, std::uint32_t pol) {
    return (y << 22) | (xr << 12) | (pol << 11);
  };
  rec(dvs(0, 0, 1), 5);                // -> x 345, y 0, ON
  rec(dvs(259, 345, 0), 6);            // -> x 0, y 259, OFF
  rec(0x80000000u | dvs(3, 4, 0), 7);  // APS sample: skipped
  rec(dvs(5, 6, 0) | (1u << 10), 8);   // external input (bits 10-11 = 01): skipped
  rec(dvs(100, 200, 1), 9);            // -> x 145, y 100, ON
  const auto r = egret::read_camera_recording(write("davis.aedat", f));
  EXPECT_EQ(r.sensor.width, 346);
  EXPECT_EQ(r.sensor.height, 260);
  const std::vector<CameraEvent> expected = {{5, 345, 0, 1}, {6, 0, 259, 0}, {9, 145, 100, 1}};
  EXPECT_EQ(r.events, expected);
  // A raw x beyond the sensor cannot be mirrored: refused with its offset.
  std::string bad = "#!AER-DAT2.0\r\n# AEChip: Davis346B\r\n";
  const std::size_t at = bad.size();
  be(bad, dvs(0, 400, 1), 4);
  be(bad, 1, 4);
  const std::string e =
      error_of([&] { egret::read_camera_recording(write("davis_bad.aedat", bad)); });
  EXPECT_NE(e.find("byte " + std::to_string(at) + ": DAVIS address with x 400"), std::string::npos)
      << e;
}

// Prophesee EVT 2.0: little-endian 32-bit words, type in bits 28-31.
//   CD_OFF 0x0 / CD_ON 0x1: bits 22-27 timestamp LSBs (6 bits), bits 11-21 x, bits 0-10 y;
//   EVT_TIME_HIGH 0x8: bits 0-27 timestamp MSBs: t = (high << 6) | low;
//   EXT_TRIGGER 0xA, OTHERS 0xE, CONTINUED 0xF: not events.
TEST(CameraBitLayouts, Evt2) {
  std::string f = "% evt 2.0\n% geometry 1280x720\n";
  auto word = [&](std::uint32_t w) { le(f, w, 4); };
  auto cd = [](std::uint32_t type, std::uint32_t low, std::uint32_t x, std::uint32_t y) {
    return (type << 28) | (low << 22) | (x << 11) | y;
  };
  word(0x80000000u | 1000);        // time high 1000 -> base 64000
  word(cd(1, 5, 1279, 719));       // t 64005, ON, x 1279, y 719
  word(cd(0, 63, 0, 0));           // t 64063, OFF
  word(0xA0000000u);               // trigger: skipped
  word(0x80000000u | 0x0FFFFFFF);  // time high 2^28 - 1
  word(cd(1, 1, 7, 9));            // t (2^28 - 1) * 64 + 1
  const auto r = egret::read_camera_recording(write("evt2.raw", f));
  EXPECT_EQ(r.sensor.width, 1280);
  EXPECT_EQ(r.sensor.height, 720);
  const std::vector<CameraEvent> expected = {
      {64005, 1279, 719, 1}, {64063, 0, 0, 0}, {(std::int64_t{0x0FFFFFFF} << 6) + 1, 7, 9, 1}};
  EXPECT_EQ(r.events, expected);
}

// Prophesee EVT 3.0: little-endian 16-bit words, type in bits 12-15.
//   EVT_ADDR_Y 0x0: bits 0-10 y;  EVT_ADDR_X 0x2: bit 11 polarity, bits 0-10 x (one event);
//   VECT_BASE_X 0x3: bit 11 polarity, bits 0-10 base x;  VECT_12 0x4: bits 0-11 a mask of
//   events at base x + i (then base x += 12);  VECT_8 0x5: bits 0-7 (base x += 8);
//   EVT_TIME_LOW 0x6: bits 0-11;  EVT_TIME_HIGH 0x8: bits 0-11: t = (high << 12) | low.
TEST(CameraBitLayouts, Evt3) {
  std::string f = "% evt 3.0\n% format EVT3;height=480;width=640\n";
  auto word = [&](std::uint16_t w) { le(f, w, 2); };
  word(0x8003);          // time high 3
  word(0x6005);          // time low 5: t = 3 * 4096 + 5 = 12293
  word(0x0011);          // y 17
  word(0x2800 | 100);    // x 100, ON
  word(0x3000 | 200);    // base x 200, OFF
  word(0x4000 | 0x805);  // VECT_12 mask bits 0, 2, 11: x 200, 202, 211; base -> 212
  word(0x5000 | 0x81);   // VECT_8 mask bits 0, 7: x 212, 219
  word(0x6010);          // time low 16: t = 12304
  word(0x2000 | 639);    // x 639, OFF (polarity bit 11 clear)
  const auto r = egret::read_camera_recording(write("evt3.raw", f));
  EXPECT_EQ(r.sensor.width, 640);
  EXPECT_EQ(r.sensor.height, 480);
  const std::vector<CameraEvent> expected = {
      {12293, 100, 17, 1}, {12293, 200, 17, 0}, {12293, 202, 17, 0}, {12293, 211, 17, 0},
      {12293, 212, 17, 0}, {12293, 219, 17, 0}, {12304, 639, 17, 0}};
  EXPECT_EQ(r.events, expected);
  // A vector reaching past x = 2047 (11-bit addresses) is refused, not wrapped.
  std::string bad = "% evt 3.0\n";
  le(bad, 0x3000 | 2040, 2);
  le(bad, 0x4000 | 0x800, 2);  // bit 11: x 2051
  EXPECT_NE(error_of([&] {
              egret::read_camera_recording(write("evt3_bad.raw", bad));
            }).find("vector event beyond x = 2047"),
            std::string::npos);
}

// Prophesee DAT (Event2D): '%' header lines, an event type byte (0) and size byte (8), then
// records of uint32 timestamp (us) and uint32 data: bits 0-13 x, 14-27 y, 28-31 polarity.
TEST(CameraBitLayouts, Dat) {
  std::string f = "% Data file containing Event2D events.\n% Height 240\n% Width 304\n";
  f.push_back(0);
  f.push_back(8);
  auto rec = [&](std::uint32_t t, std::uint32_t x, std::uint32_t y, std::uint32_t p) {
    le(f, t, 4);
    le(f, (p << 28) | (y << 14) | x, 4);
  };
  rec(7, 303, 239, 1);
  rec(4000000000u, 0, 1, 0);
  const auto r = egret::read_camera_recording(write("events.dat", f));
  const std::vector<CameraEvent> expected = {{7, 303, 239, 1}, {4000000000LL, 0, 1, 0}};
  EXPECT_EQ(r.events, expected);
}

// N-MNIST: 5-byte records: byte 0 x, byte 1 y, byte 2 bit 7 polarity (1 = ON), then a 23-bit
// timestamp: byte 2 bits 0-6 (t bits 16-22), byte 3 (bits 8-15), byte 4 (bits 0-7).
TEST(CameraBitLayouts, Nmnist) {
  std::string f;
  for (unsigned char b : {33, 0, 0x80 | 0x7F, 0xFF, 0xFE}) f.push_back(static_cast<char>(b));
  for (unsigned char b : {0, 33, 0x01, 0x02, 0x03}) f.push_back(static_cast<char>(b));
  const auto r = egret::read_camera_recording(write("digit.bin", f));
  const std::vector<CameraEvent> expected = {{0x7FFFFE, 33, 0, 1}, {0x010203, 0, 33, 0}};
  EXPECT_EQ(r.events, expected);
}

// AEDAT 3.1 (cAER): text header, then packets: a 28-byte header (int16 type, int16 source,
// int32 event size, int32 timestamp offset, int32 timestamp overflow, int32 capacity, number,
// valid), then capacity events. Polarity events (type 1, 8 bytes): uint32 data with bit 0
// valid, bit 1 polarity, bits 2-16 y, bits 17-31 x; int32 timestamp: t = overflow << 31 | ts.
TEST(CameraBitLayouts, Aedat31Polarity) {
  std::string f = "#!AER-DAT3.1\r\n#Format: RAW\r\n#Source 1: DVS128\r\n#!END-HEADER\r\n";
  auto packet = [&](std::int16_t type, std::int32_t overflow, std::int32_t n) {
    le(f, static_cast<std::uint16_t>(type), 2);
    le(f, 1, 2);
    le(f, 8, 4);
    le(f, 4, 4);
    le(f, static_cast<std::uint32_t>(overflow), 4);
    for (int k = 0; k < 3; ++k) le(f, static_cast<std::uint32_t>(n), 4);
  };
  auto event = [&](std::uint32_t x, std::uint32_t y, std::uint32_t p, std::uint32_t valid,
                   std::uint32_t ts) {
    le(f, (x << 17) | (y << 2) | (p << 1) | valid, 4);
    le(f, ts, 4);
  };
  packet(1, 0, 3);
  event(127, 0, 1, 1, 100);
  event(5, 6, 0, 0, 150);  // valid bit clear: skipped
  event(0, 127, 0, 1, 0x7FFFFFFF);
  packet(1, 3, 1);
  event(64, 65, 1, 1, 9);  // t = 3 * 2^31 + 9
  const auto r = egret::read_camera_recording(write("polarity.aedat", f));
  const std::vector<CameraEvent> expected = {
      {100, 127, 0, 1}, {0x7FFFFFFF, 0, 127, 0}, {(std::int64_t{3} << 31) + 9, 64, 65, 1}};
  EXPECT_EQ(r.events, expected);
}

// AEDAT 4.0 (iniVation DV): "#!AER-DAT4.0\r\n", uint32 size of the IOHeader flatbuffer, the
// IOHeader (root table: 0 compression int32, 1 data table position int64, 2 XML description),
// then packets: int32 stream id, int32 size, a flatbuffer with identifier "EVTS" whose root
// table's field 0 is a vector of 16-byte events {int64 t; int16 x; int16 y; bool on; 3 pad}.
class Aedat4File {
 public:
  explicit Aedat4File(int compression) {
    const std::string xml =
        "<dv version=\"2.0\"><node name=\"outInfo\" path=\"/outInfo/\"><node name=\"0\" "
        "path=\"/outInfo/0/\"><attr key=\"typeIdentifier\" type=\"string\">EVTS</attr><node "
        "name=\"info\" path=\"/outInfo/0/info/\"><attr key=\"sizeX\" type=\"int\">346</attr><attr "
        "key=\"sizeY\" type=\"int\">260</attr></node></node></node></dv>";
    std::string h;
    le(h, 20, 4);  // root table at 20
    h += "IOHE";
    le(h, 10, 2);  // vtable at 8: 10 bytes, table of 20 bytes, fields at +4, +0 (absent), +8
    le(h, 20, 2);
    le(h, 4, 2);
    le(h, 0, 2);
    le(h, 8, 2);
    le(h, 0, 2);                                        // padding to 20
    le(h, 20 - 8, 4);                                   // table: offset back to its vtable
    le(h, static_cast<std::uint32_t>(compression), 4);  // field 0 at 24
    le(h, 4, 4);  // field 2 at 28: the string starts 4 bytes on, at 32
    le(h, xml.size(), 4);
    h += xml;
    bytes_ = "#!AER-DAT4.0\r\n";
    le(bytes_, h.size(), 4);
    bytes_ += h;
    compression_ = compression;
  }

  // The EVTS flatbuffer of `events`, with `padding` zero bytes after the events vector.
  static std::string events_buffer(const std::vector<CameraEvent>& events, std::size_t padding) {
    std::string b;
    le(b, 16, 4);  // root table at 16
    b += "EVTS";
    le(b, 6, 2);  // vtable at 8: 6 bytes, table 8 bytes, field 0 at +4
    le(b, 8, 2);
    le(b, 4, 2);
    le(b, 0, 2);  // padding to 16
    le(b, 8, 4);  // table at 16: offset back to the vtable at 8
    le(b, 4, 4);  // field 0 at 20: the vector starts 4 bytes on, at 24
    le(b, events.size(), 4);
    for (const auto& e : events) {
      le(b, static_cast<std::uint64_t>(e.t), 8);
      le(b, e.x, 2);
      le(b, e.y, 2);
      b.push_back(static_cast<char>(e.p));
      b.append(3, '\0');
    }
    b.append(padding, '\0');
    return b;
  }

  void packet(const std::string& buffer) {
    std::string data = buffer;
    if (compression_ == 1) {
      std::string out(LZ4F_compressFrameBound(buffer.size(), nullptr), '\0');
      const std::size_t n =
          LZ4F_compressFrame(out.data(), out.size(), buffer.data(), buffer.size(), nullptr);
      ASSERT_FALSE(LZ4F_isError(n));
      data = out.substr(0, n);
    }
    le(bytes_, 0, 4);  // stream 0
    le(bytes_, data.size(), 4);
    bytes_ += data;
  }
  // A packet of another stream (not described as EVTS): skipped and counted.
  void other_stream_packet(std::int32_t stream, std::size_t size) {
    le(bytes_, static_cast<std::uint32_t>(stream), 4);
    le(bytes_, size, 4);
    bytes_.append(size, '\x5A');
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
  int compression_ = 0;
};

TEST(CameraBitLayouts, Aedat4EventPackets) {
  const std::vector<CameraEvent> a = {{1700000000000000LL, 345, 259, 1},
                                      {1700000000000007LL, 0, 3, 0}};
  const std::vector<CameraEvent> b = {{1700000000000100LL, 17, 18, 1}};
  for (int compression : {0, 1}) {
    Aedat4File f(compression);
    f.packet(Aedat4File::events_buffer(a, 0));
    f.other_stream_packet(7, 1000);
    f.packet(Aedat4File::events_buffer(b, 8));  // alignment padding is allowed
    const auto info = egret::read_camera_file(write("events.aedat4", f.bytes()),
                                              [](const CameraEvent*, std::size_t) {});
    EXPECT_EQ(info.skipped, 1u);
    const auto r = egret::read_camera_recording(write("events.aedat4", f.bytes()));
    EXPECT_EQ(r.sensor.width, 346);
    EXPECT_EQ(r.sensor.height, 260);
    std::vector<CameraEvent> expected = a;
    expected.push_back(b[0]);
    EXPECT_EQ(r.events, expected) << "compression " << compression;
  }
}

TEST(CameraBitLayouts, Aedat4Lz4BombsAndEmptyTablesAreRefused) {
  // Two events followed by 10 MB of zeros: LZ4 packs it into ~40 kB.
  Aedat4File padded(1);
  padded.packet(Aedat4File::events_buffer({{5, 1, 2, 1}, {6, 3, 4, 0}}, 10'000'000));
  ASSERT_LT(padded.bytes().size(), 100'000u);
  std::string e =
      error_of([&] { egret::read_camera_recording(write("pad.aedat4", padded.bytes())); });
  EXPECT_NE(e.find("holds 2 events, which need only 60"), std::string::npos) << e;
  // 100 MB of zeros: refused at the 64 MiB cap while decompressing.
  Aedat4File bomb(1);
  bomb.packet(Aedat4File::events_buffer({}, 100'000'000));
  e = error_of([&] { egret::read_camera_recording(write("bomb.aedat4", bomb.bytes())); });
  EXPECT_NE(e.find("decompresses to more than the 64 MiB cap"), std::string::npos) << e;
  // A packet whose table has no events vector (a vtable of 4 bytes: no fields).
  std::string empty;
  le(empty, 12, 4);
  empty += "EVTS";
  le(empty, 4, 2);
  le(empty, 4, 2);
  le(empty, 4, 4);  // table at 12, vtable at 8
  Aedat4File no_table(0);
  no_table.packet(empty);
  e = error_of([&] { egret::read_camera_recording(write("empty.aedat4", no_table.bytes())); });
  EXPECT_NE(e.find("whose table holds no events vector"), std::string::npos) << e;
  // A packet claiming more events than its bytes hold.
  std::string claim = Aedat4File::events_buffer({{5, 1, 2, 1}}, 0);
  claim[24] = static_cast<char>(0xFF);
  claim[25] = static_cast<char>(0xFF);
  Aedat4File over(0);
  over.packet(claim);
  e = error_of([&] { egret::read_camera_recording(write("claim.aedat4", over.bytes())); });
  EXPECT_NE(e.find("claims 65535 events"), std::string::npos) << e;
  // Times beyond 2^53 us are refused.
  Aedat4File late(0);
  late.packet(Aedat4File::events_buffer({{std::int64_t{1} << 62, 1, 2, 1}}, 0));
  e = error_of([&] { egret::read_camera_recording(write("late.aedat4", late.bytes())); });
  EXPECT_NE(e.find("timestamp 4611686018427387904 us outside [0, 2^53] us"), std::string::npos)
      << e;
}

}  // namespace
