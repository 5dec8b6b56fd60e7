// Event-camera readers on the real recordings in ../shared/data (counts, coordinate ranges,
// time order, polarity balance), exact round trips through egret's own writers (AEDAT 3.1 with
// timestamp overflow, EVT 3.0 with time-high wraps), and corrupt input: truncated headers and
// packets, wrong sizes, random bytes, all clear errors with a byte offset.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "camera/formats/camera_readers.hpp"
#include "tests/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using egret::CameraEvent;
using egret::testing::error_of;

std::string data(const std::string& rel) {
  const fs::path p = fs::path(EGRET_SOURCE_DIR) / ".." / "shared" / "data" / rel;
  if (!fs::exists(p))
    ADD_FAILURE() << "test data missing: " << p << " (shared/ must sit beside the checkout)";
  return p.string();
}

std::string camera_scratch(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "egret_camera_tests";
  fs::create_directories(dir);
  return (dir / name).string();
}

struct Stats {
  std::uint64_t n = 0, on = 0, backwards = 0;
  int max_x = -1, max_y = -1;
  egret::CameraFileInfo info;
};

Stats scan(const std::string& path) {
  Stats s;
  std::int64_t last = INT64_MIN;
  s.info = egret::read_camera_file(path, [&](const CameraEvent* e, std::size_t k) {
    for (std::size_t i = 0; i < k; ++i) {
      ++s.n;
      s.on += e[i].p;
      s.backwards += e[i].t < last;
      last = e[i].t;
      s.max_x = std::max<int>(s.max_x, e[i].x);
      s.max_y = std::max<int>(s.max_y, e[i].y);
    }
  });
  return s;
}

void expect_plausible(const Stats& s, int width, int height) {
  EXPECT_EQ(s.info.events, s.n);
  EXPECT_EQ(s.backwards, 0u) << "timestamps must not go backwards";
  EXPECT_LT(s.max_x, width);
  EXPECT_LT(s.max_y, height);
  const double on = static_cast<double>(s.on) / static_cast<double>(s.n);
  EXPECT_GT(on, 0.2);
  EXPECT_LT(on, 0.8);
}

TEST(CameraReaders, ProphesseEvt2RealRecording) {
  const Stats s = scan(data("prophesee/evt2_sample.raw"));
  EXPECT_EQ(s.info.format, "evt2");
  EXPECT_EQ(s.n, 539481u);  // the count given with the file (shared/data/README.md)
  EXPECT_EQ(s.info.sensor.width, 640);
  EXPECT_EQ(s.info.sensor.height, 480);
  expect_plausible(s, 640, 480);
}

TEST(CameraReaders, ProphesseEvt3RealRecording) {
  const Stats s = scan(data("prophesee/evt3_sample.raw"));
  EXPECT_EQ(s.info.format, "evt3");
  EXPECT_EQ(s.info.sensor.width, 1280);
  EXPECT_EQ(s.info.sensor.height, 720);
  EXPECT_GT(s.n, 100000u);
  expect_plausible(s, 1280, 720);
}

TEST(CameraReaders, ProphesseDatRealRecording) {
  const std::string path = data("tonic/sample_ncars.dat");
  const Stats s = scan(path);
  // Independent count: every byte after the header and the 2 type/size bytes is an 8-byte event.
  EXPECT_EQ(s.n, (fs::file_size(path) - s.info.header_bytes) / 8);
  EXPECT_EQ((fs::file_size(path) - s.info.header_bytes) % 8, 0u);
  EXPECT_GT(s.n, 1000u);
  expect_plausible(s, 120, 100);  // N-CARS samples are at most 120x100
}

TEST(CameraReaders, NmnistRealRecording) {
  const std::string path = data("tonic/sample_nmnist.bin");
  const Stats s = scan(path);
  EXPECT_EQ(s.n, fs::file_size(path) / 5);  // 5 bytes per event
  expect_plausible(s, 34, 34);
}

TEST(CameraReaders, Aedat4RealRecording) {
  const std::string path = data("tonic/sample.aedat4");
  const Stats s = scan(path);
  EXPECT_EQ(s.info.format, "aedat4");
  EXPECT_EQ(s.info.sensor.width, 320);  // DVXplorer, from the stream's XML description
  EXPECT_EQ(s.info.sensor.height, 240);
  EXPECT_GT(s.n, 100000u);
  EXPECT_GT(s.info.skipped, 0u);  // IMU and trigger packets
  expect_plausible(s, 320, 240);
  // A file cut inside a packet, and a packet whose LZ4 data is damaged.
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string bad = camera_scratch("bad.aedat4");
  std::ofstream(bad, std::ios::binary) << bytes.substr(0, 6000);
  EXPECT_NE(error_of([&] { egret::read_camera_recording(bad); }).find("truncated AEDAT 4.0 packet"),
            std::string::npos);
  std::string damaged = bytes;
  for (std::size_t k = 2400; k < 2600; ++k) damaged[k] = static_cast<char>(damaged[k] ^ 0x5A);
  std::ofstream(bad, std::ios::binary) << damaged;
  const std::string e = error_of([&] { egret::read_camera_recording(bad); });
  EXPECT_FALSE(e.empty());
  EXPECT_NE(e.find("byte "), std::string::npos) << e;
}

TEST(CameraReaders, Aedat2HeaderOnly) {
  const Stats s = scan(data("tonic/sample_aedat_header.aedat"));
  EXPECT_EQ(s.info.format, "aedat2");
  EXPECT_EQ(s.n, 0u);
  EXPECT_EQ(s.info.sensor.width, 346);
  EXPECT_EQ(s.info.sensor.height, 260);
}

std::vector<CameraEvent> synthetic_events(std::int64_t t0, std::int64_t step, int n, int w, int h) {
  std::mt19937_64 rng(3);
  std::vector<CameraEvent> ev;
  std::int64_t t = t0;
  for (int i = 0; i < n; ++i) {
    t += static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(step));
    ev.push_back({t, static_cast<std::uint16_t>(rng() % w), static_cast<std::uint16_t>(rng() % h),
                  static_cast<std::uint8_t>(rng() & 1)});
  }
  return ev;
}

TEST(CameraReaders, Aedat31RoundTripAcrossTimestampOverflow) {
  // Times from 2^31 - 50 ms to beyond 2^32 us: the 31-bit timestamps overflow twice.
  const auto events = synthetic_events((std::int64_t{1} << 31) - 50000, 900000, 5000, 128, 128);
  ASSERT_GT(events.back().t, std::int64_t{1} << 32);
  const std::string path = camera_scratch("roundtrip.aedat");
  egret::write_aedat31(path, events, {128, 128}, /*packet_events=*/333);
  const auto back = egret::read_camera_recording(path);
  EXPECT_EQ(back.events, events);
  EXPECT_EQ(back.sensor.width, 128);
  // Another sensor size is recorded in the header and read back.
  egret::write_aedat31(path, {{5, 239, 179, 1}}, {240, 180});
  const auto other = egret::read_camera_recording(path);
  EXPECT_EQ(other.sensor.width, 240);
  EXPECT_EQ(other.sensor.height, 180);
  EXPECT_EQ(other.events.size(), 1u);
}

TEST(CameraReaders, Evt3RoundTripAcrossTimeHighWraps) {
  // 2^24 us = 16.8 s: the events span several wraps of EVT 3.0's 24-bit time base.
  const auto events = synthetic_events(1000, 40000, 3000, 1280, 720);
  ASSERT_GT(events.back().t, std::int64_t{3} << 24);
  const std::string path = camera_scratch("roundtrip.raw");
  egret::write_evt3(path, events, {1280, 720});
  const auto back = egret::read_camera_recording(path);
  EXPECT_EQ(back.events, events);
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(CameraReaders, CorruptAedat31IsANamedError) {
  const auto events = synthetic_events(0, 100, 200, 128, 128);
  const std::string good = camera_scratch("good.aedat");
  egret::write_aedat31(good, events, {128, 128}, 50);
  const std::string bytes = read_bytes(good);
  const std::size_t header_end = bytes.find("#!END-HEADER\r\n") + 14;
  const std::string bad = camera_scratch("bad.aedat");
  auto error_for = [&](const std::string& content) {
    write_bytes(bad, content);
    return error_of([&] { egret::read_camera_recording(bad); });
  };
  // Header cut before #!END-HEADER.
  EXPECT_NE(error_for(bytes.substr(0, 30)).find("header"), std::string::npos);
  // A packet header cut short.
  EXPECT_NE(error_for(bytes.substr(0, header_end + 10)).find("truncated AEDAT 3.1 packet header"),
            std::string::npos);
  // A packet cut inside an event, and one cut between its events.
  std::string e = error_for(bytes.substr(0, header_end + 28 + 8 * 10 + 3));
  EXPECT_NE(e.find("truncated AEDAT 3.1 polarity event (3 of 8 bytes)"), std::string::npos) << e;
  EXPECT_NE(e.find("byte " + std::to_string(header_end + 28 + 80)), std::string::npos) << e;
  e = error_for(bytes.substr(0, header_end + 28 + 8 * 10));
  EXPECT_NE(e.find("file ends inside a polarity packet (event 10 of 50)"), std::string::npos) << e;
  // Wrong event size in the packet header.
  std::string wrong = bytes;
  wrong[header_end + 4] = 12;
  e = error_for(wrong);
  EXPECT_NE(e.find("event size 12"), std::string::npos) << e;
  EXPECT_NE(e.find("byte " + std::to_string(header_end)), std::string::npos) << e;
  // Number larger than capacity.
  wrong = bytes;
  wrong[header_end + 20] = static_cast<char>(0xFF);
  EXPECT_NE(error_for(wrong).find("corrupt AEDAT 3.1 packet header"), std::string::npos);
  // Invalid events (valid bit 0) are skipped and counted, not returned.
  wrong = bytes;
  wrong[header_end + 28] &= ~1;
  const auto rec_info = [&] {
    write_bytes(bad, wrong);
    return egret::read_camera_file(bad, [](const CameraEvent*, std::size_t) {});
  }();
  EXPECT_EQ(rec_info.events, events.size() - 1);
  EXPECT_EQ(rec_info.skipped, 1u);
}

TEST(CameraReaders, CorruptProphesseFilesAreNamedErrors) {
  const std::string bytes = read_bytes(data("prophesee/evt2_sample.raw"));
  const std::string bad = camera_scratch("bad.raw");
  const std::size_t header = bytes.find("% evt 2.0\n") + 10;
  write_bytes(bad, bytes.substr(0, header + 4 * 1000 + 2));
  std::string e = error_of([&] { egret::read_camera_recording(bad); });
  EXPECT_NE(e.find("truncated EVT 2.0 word (2 of 4 bytes)"), std::string::npos) << e;
  EXPECT_NE(e.find("byte " + std::to_string(header + 4000)), std::string::npos) << e;
  std::string wrong = bytes.substr(0, header + 4 * 100);
  wrong[header + 4 * 50 + 3] = 0x30;  // word type 0x3: reserved
  write_bytes(bad, wrong);
  e = error_of([&] { egret::read_camera_recording(bad); });
  EXPECT_NE(e.find("unknown EVT 2.0 word type"), std::string::npos) << e;
  // A CD event outside the 640x480 sensor.
  wrong = bytes.substr(0, header + 4 * 100);
  for (std::size_t k = header; k < wrong.size(); k += 4) {
    if ((static_cast<unsigned char>(wrong[k + 3]) >> 4) <= 1) {
      wrong[k + 1] = static_cast<char>(wrong[k + 1] | 0xF8);  // x bits 0-4
      wrong[k + 2] = static_cast<char>(wrong[k + 2] | 0x3F);  // x bits 5-10: x = 2047
      break;
    }
  }
  write_bytes(bad, wrong);
  EXPECT_NE(error_of([&] { egret::read_camera_recording(bad); }).find("outside the 640x480 sensor"),
            std::string::npos);
  // A truncated DAT event and a bad event size byte.
  const std::string dat = read_bytes(data("tonic/sample_ncars.dat"));
  write_bytes(bad + ".dat", dat.substr(0, dat.size() - 3));
  EXPECT_NE(
      error_of([&] { egret::read_camera_recording(bad + ".dat"); }).find("truncated DAT event"),
      std::string::npos);
}

// Random bytes after a valid header: an error or a clean read, never a crash (also under ASan).
TEST(CameraReaders, RandomBytesNeverCrash) {
  std::mt19937_64 rng(11);
  const std::string bad = camera_scratch("random");
  int errors = 0;
  for (const char* head : {"#!AER-DAT3.1\r\n#!END-HEADER\r\n", "% evt 2.0\n", "% evt 3.0\n",
                           "#!AER-DAT2.0\r\n# AEChip: DVS128\r\n"}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::string bytes = head;
      const std::size_t n = 1 + rng() % 4000;
      for (std::size_t i = 0; i < n; ++i) bytes.push_back(static_cast<char>(rng() & 0xFF));
      write_bytes(bad, bytes);
      try {
        egret::read_camera_recording(bad);
      } catch (const egret::CameraFileError& e) {
        ++errors;
        EXPECT_NE(std::string(e.what()).find("byte "), std::string::npos);
      }
    }
  }
  EXPECT_GT(errors, 20);  // random data is mostly rejected, with an offset
}

}  // namespace

namespace {

void put_le(std::string& s, std::uint64_t v, int bytes) {
  for (int k = 0; k < bytes; ++k) s.push_back(static_cast<char>((v >> (8 * k)) & 0xFF));
}

// A .npy file (version 1.0) with the given header dict and raw record bytes.
std::string npy_file(const std::string& dict, const std::string& records) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string f = "\x93NUMPY";
  f.push_back(1);
  f.push_back(0);
  put_le(f, header.size(), 2);
  return f + header + records;
}

std::string npy_error(const std::string& name, const std::string& dict,
                      const std::string& records) {
  const std::string path = camera_scratch(name);
  write_bytes(path, npy_file(dict, records));
  return error_of([&] { egret::read_camera_recording(path); });
}

}  // namespace

TEST(CameraReaders, NpyHeadersAreParsedWithinTheirBounds) {
  const std::string rec(8, '\0');
  // A descr that never closes, a tuple that never closes, a quote that never closes.
  EXPECT_NE(npy_error("a.npy", "{'descr': [('x', '<i2'", "").find("never closes"),
            std::string::npos);
  EXPECT_NE(npy_error("b.npy", "{'descr': [('x', '<i2'), ", "").find("never closes"),
            std::string::npos);
  EXPECT_NE(npy_error("c.npy", "{'descr': [('x", "").find("never closes"), std::string::npos);
  // Sub-arrays, unsupported types, duplicate names, a shape that is not (N,).
  EXPECT_NE(npy_error("d.npy", "{'descr': [('x', '<i2', (2,))], 'shape': (1,)}", rec)
                .find("sub-arrays are not supported"),
            std::string::npos);
  EXPECT_NE(npy_error("e.npy", "{'descr': [('x', '<f2')], 'shape': (1,)}", rec)
                .find("type '<f2' of field 'x' is not supported"),
            std::string::npos);
  EXPECT_NE(npy_error("f.npy", "{'descr': [('x', '<i2'), ('x', '<i2')], 'shape': (1,)}", rec)
                .find("field 'x' appears twice"),
            std::string::npos);
  const std::string four = "{'descr': [('x', '<u1'), ('y', '<u1'), ('p', '<u1'), ('t', '<u1')], ";
  EXPECT_NE(npy_error("g.npy", four + "'shape': (2, 2)}", rec).find("not one-dimensional"),
            std::string::npos);
  // The header length field against the file size: 60000 bytes claimed by a 12-byte file.
  std::string f = "\x93NUMPY";
  f.push_back(1);
  f.push_back(0);
  put_le(f, 60000, 2);
  f += "{}";
  write_bytes(camera_scratch("h.npy"), f);
  const std::string e = error_of([&] { egret::read_camera_recording(camera_scratch("h.npy")); });
  EXPECT_NE(e.find("byte 8: npy header length 60000 exceeds the 2 bytes left in the file"),
            std::string::npos)
      << e;
  // Records must match the shape: one record more or one fewer than (N,) says.
  EXPECT_NE(npy_error("i.npy", four + "'shape': (1,)}", std::string(8, '\0'))
                .find("data beyond the 1 records the npy shape declares"),
            std::string::npos);
  EXPECT_NE(npy_error("j.npy", four + "'shape': (3,)}", std::string(8, '\0'))
                .find("the file holds 2 records, its npy shape 3"),
            std::string::npos);
}

TEST(CameraReaders, NpyValuesThatCannotBeRepresentedAreRefused) {
  const std::string dict_f8 =
      "{'descr': [('x', '<u2'), ('y', '<u2'), ('p', '<u1'), ('t', '<f8')], 'fortran_order': "
      "False, 'shape': (2,), }";
  auto record_f8 = [](double t) {
    std::string r;
    put_le(r, 3, 2);
    put_le(r, 4, 2);
    r.push_back(1);
    std::uint64_t bits;
    std::memcpy(&bits, &t, 8);
    put_le(r, bits, 8);
    return r;
  };
  const std::size_t header = npy_file(dict_f8, "").size();
  for (double bad : {1e300, 1e308, std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    const std::string e = npy_error("t.npy", dict_f8, record_f8(5) + record_f8(bad));
    EXPECT_NE(e.find("byte " + std::to_string(header + 13) + ": record 1: field 't' = "),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("is not a whole number in the int64 range"), std::string::npos) << e;
  }
  // Whole numbers in range but beyond 2^53 us, or negative: outside the camera time range.
  for (double bad : {9.2e18, 1e16, -1.0}) {
    const std::string e = npy_error("t.npy", dict_f8, record_f8(5) + record_f8(bad));
    EXPECT_NE(e.find("record 1: time "), std::string::npos) << e;
    EXPECT_NE(e.find("us outside [0, 2^53] us"), std::string::npos) << e;
  }
  // The boundary itself is read back exactly.
  const std::string path = camera_scratch("edge.npy");
  write_bytes(path, npy_file(dict_f8, record_f8(0) + record_f8(9007199254740992.0)));
  const auto ok = egret::read_camera_recording(path);
  ASSERT_EQ(ok.events.size(), 2u);
  EXPECT_EQ(ok.events[1].t, egret::kMaxCameraTimeUs);
  // uint64 2^64 - 1 in any field is refused, not wrapped to -1 (which read as polarity OFF).
  const std::string dict_u8 =
      "{'descr': [('x', '<u8'), ('y', '<u8'), ('p', '<u8'), ('t', '<u8')], 'fortran_order': "
      "False, 'shape': (1,), }";
  for (int field = 0; field < 4; ++field) {
    std::string r;
    for (int k = 0; k < 4; ++k) put_le(r, k == field ? ~std::uint64_t{0} : 1, 8);
    const std::string e = npy_error("u.npy", dict_u8, r);
    EXPECT_NE(e.find("= 18446744073709551615 is not a whole number in the int64 range"),
              std::string::npos)
        << field << ": " << e;
  }
  // Coordinates and polarities out of range, with the record index.
  std::string r;
  for (std::uint64_t v : {70000, 1, 1, 1}) put_le(r, v, 8);
  EXPECT_NE(npy_error("x.npy", dict_u8, r).find("record 0: coordinates (70000, 1) out of range"),
            std::string::npos);
}

TEST(CameraReaders, Aedat31HeaderAndPacketNumbersAreChecked) {
  const std::string head = "#!AER-DAT3.1\r\n#Format: RAW\r\n#Source 1: DVS128\r\n#!END-HEADER\r\n";
  auto error_for = [&](const std::string& content) {
    write_bytes(camera_scratch("h.aedat"), content);
    return error_of([&] { egret::read_camera_recording(camera_scratch("h.aedat")); });
  };
  // Required lines, and only uncompressed data.
  EXPECT_NE(error_for("#!AER-DAT3.1\r\n#Source 1: DVS128\r\n#!END-HEADER\r\n")
                .find("header without a #Format: RAW line"),
            std::string::npos);
  EXPECT_NE(error_for("#!AER-DAT3.1\r\n#Format: RAW\r\n#!END-HEADER\r\n")
                .find("header without a #Source line"),
            std::string::npos);
  EXPECT_NE(error_for("#!AER-DAT3.1\r\n#Format: SerializedTS\r\n#Source 1: DVS128\r\n#!END-"
                      "HEADER\r\n")
                .find("unsupported '#Format: SerializedTS'"),
            std::string::npos);
  EXPECT_NE(error_for("#!AER-DAT3.1\r\n#Format: RAW\r\n#Source 1: DVS 99999999999x2\r\n#!END-"
                      "HEADER\r\n")
                .find("#Source line with a sensor size outside 1..32768"),
            std::string::npos);
  // A packet whose timestamp offset is 2^31 - 1 (offset + 4 once overflowed int32).
  std::string p = head;
  put_le(p, 2, 2);
  put_le(p, 1, 2);
  put_le(p, 8, 4);
  put_le(p, 0x7FFFFFFF, 4);
  for (int k = 0; k < 4; ++k) put_le(p, 1, 4);
  p += std::string(8, '\0');
  const std::string e = error_for(p);
  EXPECT_NE(e.find("byte " + std::to_string(head.size()) +
                   ": corrupt AEDAT 3.1 packet header (type 2, size 8, offset 2147483647"),
            std::string::npos)
      << e;
  // A binary packet starting with '#' (type 35) is data, not a header line.
  std::string hash = head;
  put_le(hash, 35, 2);
  put_le(hash, 1, 2);
  put_le(hash, 4, 4);
  put_le(hash, 0, 4);
  put_le(hash, 0, 4);
  for (int k = 0; k < 3; ++k) put_le(hash, 1, 4);
  put_le(hash, 0, 4);
  write_bytes(camera_scratch("hash.aedat"), hash);
  const auto info =
      egret::read_camera_file(camera_scratch("hash.aedat"), [](const CameraEvent*, std::size_t) {});
  EXPECT_EQ(info.skipped, 1u);
  EXPECT_EQ(info.events, 0u);
}

TEST(CameraReaders, Aedat31WriterRefusesWhatItsReaderRefuses) {
  const std::string path = camera_scratch("edge.aedat");
  // The largest time, the last pixel of the sensor: written and read back exactly.
  const std::vector<CameraEvent> edge = {{0, 0, 0, 0}, {egret::kMaxCameraTimeUs, 239, 179, 1}};
  egret::write_aedat31(path, edge, {240, 180});
  EXPECT_EQ(egret::read_camera_recording(path).events, edge);
  // One microsecond more, or one pixel outside the sensor: refused when writing.
  std::string e = error_of([&] {
    egret::write_aedat31(path, {{egret::kMaxCameraTimeUs + 1, 0, 0, 1}}, {240, 180});
  });
  EXPECT_NE(e.find("write_aedat31: event 0 at 9007199254740993 us: times must be sorted and in "
                   "[0, 2^53] us"),
            std::string::npos)
      << e;
  e = error_of([&] { egret::write_aedat31(path, {{5, 240, 0, 1}}, {240, 180}); });
  EXPECT_NE(e.find("event 0 at (240, 0) does not fit the 240x180 sensor"), std::string::npos) << e;
  e = error_of([&] { egret::write_aedat31(path, {{5, 0, 0, 1}}, {0, 0}); });
  EXPECT_NE(e.find("sensor 0x0 outside the AEDAT 3.1 range"), std::string::npos) << e;
  // The file written before the refusals is untouched.
  EXPECT_EQ(egret::read_camera_recording(path).events, edge);
}

TEST(CameraReaders, PropheseeHeaderNumbersAreChecked) {
  auto error_for = [&](const std::string& header) {
    write_bytes(camera_scratch("h.raw"), "% evt 3.0\n" + header + "\n");
    return error_of([&] { egret::read_camera_recording(camera_scratch("h.raw")); });
  };
  EXPECT_NE(error_for("% format EVT3;height=0;width=640")
                .find("byte 10: header field 'height' is not a sensor size 1..65535"),
            std::string::npos);
  EXPECT_NE(error_for("% format EVT3;height=480;width=65536").find("header field 'width'"),
            std::string::npos);
  EXPECT_NE(error_for("% format EVT3;height=-480;width=640").find("header field 'height'"),
            std::string::npos);
  EXPECT_NE(error_for("% geometry 99999999999999999999x480").find("header field 'geometry width'"),
            std::string::npos);
  EXPECT_NE(error_for("% geometry 640-480").find("header field 'geometry' is not WxH"),
            std::string::npos);
  // The largest sensor is accepted.
  write_bytes(camera_scratch("max.raw"), "% evt 3.0\n% format EVT3;height=65535;width=65535\n");
  EXPECT_EQ(egret::read_camera_recording(camera_scratch("max.raw")).sensor.width, 65535);
}

TEST(CameraReaders, HugeHeaderLinesAreRefused) {
  write_bytes(camera_scratch("long.raw"), "% evt 3.0\n%" + std::string(70000, 'a') + "\n");
  EXPECT_NE(error_of([&] {
              egret::read_camera_recording(camera_scratch("long.raw"));
            }).find("byte 10: header line longer than 65536 bytes"),
            std::string::npos);
}
