// The regression corpus of untrusted files (tests/fuzz/corpus/regressions): each once crashed,
// hung, allocated without bound or silently returned wrong data. Each must now give a clear
// error naming the file and the specific problem. Also the strictness of the text inputs (event
// CSVs) that go with them: headers are recognised by name, everything else is data.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "camera/camera_transforms.hpp"
#include "camera/formats/camera_readers.hpp"
#include "camera/formats/frame_files.hpp"
#include "io/event_csv.hpp"
#include "tests/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using egret::testing::error_of;

std::string corpus(const std::string& name) {
  const fs::path p =
      fs::path(EGRET_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / "regressions" / name;
  if (!fs::exists(p)) ADD_FAILURE() << "corpus file missing: " << p;
  return p.string();
}

// The error of reading `name` through the reader chosen by read_camera_file; it must name the
// file and contain `problem`.
void expect_refused(const std::string& name, const std::string& problem) {
  const std::string path = corpus(name);
  const std::string e = error_of([&] { egret::read_camera_recording(path); });
  EXPECT_NE(e.find(path + ": byte "), std::string::npos) << e;
  EXPECT_NE(e.find(problem), std::string::npos) << e;
}

TEST(UntrustedInputs, Aedat31CorruptHeaderIsRefused) {
  // No #Format / #Source lines, then a packet whose timestamp offset is 2^31 - 1.
  expect_refused("aedat31/aedat31_tsoffset_overflow.aedat", "header without a #Format: RAW line");
}

TEST(UntrustedInputs, Aedat4PacketClaimingOneGiBIsRefusedBeforeAllocating) {
  expect_refused("aedat4/aedat4_1GiB_packet_claim.aedat4",
                 "its size 1073741824 exceeds the 0 bytes left in the file");
}

TEST(UntrustedInputs, Evt3GeometryOverflowNamesTheHeaderField) {
  expect_refused("evt3/evt3_format_overflow.raw",
                 "header field 'height' is not a sensor size 1..65535");
}

TEST(UntrustedInputs, NpyDescrThatNeverClosesIsRefused) {
  expect_refused("npy_events/npy_descr_hang.npy",
                 "npy header ends inside the descr (it never closes)");
}

TEST(UntrustedInputs, FramesOverTwoToThe49MicrosecondsAreRefusedBeforeAllocating) {
  // The three events' times (0, 1, 2^49 us) are representable: the read succeeds.
  const auto rec =
      egret::read_camera_recording(corpus("npy_events/to_frames_heap_overflow_t0_1_2p49.npy"));
  ASSERT_EQ(rec.events.size(), 3u);
  EXPECT_EQ(rec.events[0].t, 0);
  EXPECT_EQ(rec.events[1].t, 1);
  EXPECT_EQ(rec.events[2].t, std::int64_t{1} << 49);
  std::size_t bins = 0;
  const std::string e = error_of([&] { egret::to_frames(rec.events, {128, 128}, 1, 2, bins); });
  EXPECT_NE(e.find("to_frames: 562949953421313 bins of 1 us x 2 polarities x 128x128 pixels "
                   "exceed the cap of 2^28 counts"),
            std::string::npos)
      << e;
  EXPECT_EQ(bins, 0u);
}

TEST(UntrustedInputs, EventsCsvWithNanOnTheFirstLineIsRefused) {
  const std::string path = corpus("event_csv/events_first_line_nan_dropped.csv");
  const std::string e = error_of([&] { egret::read_input_events_csv(path, 8); });
  EXPECT_NE(e.find(path + ":1: time is not finite: 'nan,0'"), std::string::npos) << e;
}

std::string scratch(const std::string& name, const std::string& text) {
  const fs::path dir = fs::path(::testing::TempDir()) / "egret_untrusted";
  fs::create_directories(dir);
  const fs::path p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

TEST(UntrustedInputs, EventsCsvHeaderIsRecognisedByItsColumnNames) {
  // Recognised headers are skipped; the data after them is read.
  for (const char* header :
       {"t,channel,value", "t_ms,channel,value", "time_ms,channel", "t,channel"}) {
    const std::string p = scratch("h.csv", std::string(header) + "\n1.5,1,2\n");
    const auto s = egret::read_input_events_csv(p, 2);
    ASSERT_EQ(s.size(), 1u) << header;
    EXPECT_EQ(s[0].time, 1.5);
    EXPECT_EQ(s[0].channel, 1);
    EXPECT_EQ(s[0].value, 2.0);
  }
  // Anything else on the first line is data, and refused when it is not valid data.
  const std::string inf = scratch("inf.csv", "inf,0\n2,1\n");
  EXPECT_NE(
      error_of([&] { egret::read_input_events_csv(inf, 2); }).find("inf.csv:1: time is not finite"),
      std::string::npos);
  const std::string words = scratch("words.csv", "time,chan\n2,1\n");
  EXPECT_NE(error_of([&] {
              egret::read_input_events_csv(words, 2);
            }).find("words.csv:1: time is not a number"),
            std::string::npos);
  const std::string value = scratch("value.csv", "1,0,nan\n");
  EXPECT_NE(error_of([&] {
              egret::read_input_events_csv(value, 2);
            }).find("value.csv:1: value is not finite"),
            std::string::npos);
  const std::string channel = scratch("channel.csv", "1,99999999999999999999\n");
  EXPECT_NE(error_of([&] {
              egret::read_input_events_csv(channel, 2);
            }).find("channel.csv:1: channel is not an integer"),
            std::string::npos);
  // A header anywhere but the first data line is data (and not a number).
  const std::string late = scratch("late.csv", "1,0\nt,channel\n");
  EXPECT_NE(error_of([&] {
              egret::read_input_events_csv(late, 2);
            }).find("late.csv:2: time is not a number"),
            std::string::npos);
  // A line longer than 4096 bytes is refused, not read into memory.
  const std::string long_line = scratch("long.csv", "1," + std::string(5000, '0') + "\n");
  EXPECT_NE(error_of([&] {
              egret::read_input_events_csv(long_line, 2);
            }).find("long.csv:1: line longer than 4096 bytes"),
            std::string::npos);
}

TEST(UntrustedInputs, FrameListsAreStrict) {
  auto error_for = [](const std::string& text) {
    const std::string p = scratch("images.txt", text);
    return error_of([&] { egret::read_frame_list(p); });
  };
  EXPECT_NE(error_for("nan a.png\n").find("images.txt:1: time is not a number of seconds"),
            std::string::npos);
  EXPECT_NE(error_for("0 a.png\ninf b.png\n").find("images.txt:2: time is not a number"),
            std::string::npos);
  EXPECT_NE(error_for("-1 a.png\n").find("images.txt:1: time is not a number"), std::string::npos);
  EXPECT_NE(error_for("1e10 a.png\n").find("images.txt:1: time is not a number"),
            std::string::npos);  // 1e16 us: beyond 2^53 us
  EXPECT_NE(error_for("0.5x a.png\n").find("images.txt:1: time is not a number"),
            std::string::npos);
  EXPECT_NE(error_for("0.5 a.png extra\n").find("images.txt:1: expected '<seconds> <image path>'"),
            std::string::npos);
  EXPECT_NE(error_for("0.5\n").find("images.txt:1: expected '<seconds> <image path>'"),
            std::string::npos);
  EXPECT_NE(error_for("0 " + std::string(5000, 'a') + "\n").find("line longer than 4096 bytes"),
            std::string::npos);
  const std::string ok =
      scratch("images.txt", "# comment\n0.000000000 images/a.png\r\n0.5\tb.png\n");
  const auto list = egret::read_frame_list(ok);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].time_s, 0.0);
  EXPECT_EQ(list[1].time_s, 0.5);
  EXPECT_EQ(fs::path(list[1].path).filename(), "b.png");
}

}  // namespace
