// The shared description of a recording's preprocessing (camera/recording_preprocessing.hpp):
// with the defaults, prepare_recording_window gives exactly the gesture job's samples (its
// prepare() copied here as the reference, on a recording whose timestamps start at 135 s); the
// task section the job stores is read with every key, unknown keys and out-of-range values are
// errors naming them; a hand-worked window with crop, denoise and pooling; the windows, span and
// size checks of camera/recording_classifier.hpp; and kCameraFormats is what the readers detect.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "camera/camera_transforms.hpp"
#include "camera/datasets/dvs_gesture.hpp"
#include "camera/formats/camera_readers.hpp"
#include "camera/recording_classifier.hpp"
#include "camera/recording_preprocessing.hpp"
#include "io/event_csv.hpp"
#include "tests/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using egret::CameraEvent;
using egret::RecordingPreprocessing;
using egret::testing::error_of;

std::string recording_scratch(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "egret_recording_tests";
  fs::create_directories(dir);
  return (dir / name).string();
}

std::string shared_data(const std::string& rel) {
  const fs::path p = fs::path(EGRET_SOURCE_DIR) / ".." / "shared" / "data" / rel;
  if (!fs::exists(p))
    ADD_FAILURE() << "test data missing: " << p << " (shared/ must sit beside the checkout)";
  return p.string();
}

// cli/gesture_command.cpp prepare() as of this change (the reference): pooled pixels x polarity,
// events summed per 5 ms bin, a window readout over the last 80 %.
struct GestureJobSettings {
  double pooling = 0.25;
  std::int64_t bin_us = 5000;
  std::int64_t window_us = 1500000;
};
std::vector<egret::Sample<double>> gesture_job_prepare(const std::vector<egret::GestureSample>& in,
                                                       const GestureJobSettings& job,
                                                       egret::SensorSize& pooled) {
  using namespace egret;
  std::vector<Sample<double>> out;
  for (const auto& g : in) {
    SensorSize s{128, 128};
    auto ev = crop_time(g.events, 0, job.window_us);
    ev = downsample(ev, s, job.pooling);
    pooled = s;
    Sample<double> smp;
    smp.input = to_input_stream(ev, s, false, 0, job.bin_us, Coalesce::kSum);
    smp.end_time = static_cast<double>(job.window_us) * 1e-3;
    smp.readout_windows = {{0.2 * smp.end_time, smp.end_time}};
    smp.targets.labels = {g.label};
    out.push_back(std::move(smp));
  }
  return out;
}

// A DVS128 recording from 135 s: a bright moving blob (dense events) over sparse noise, three
// labelled gestures, the second shorter than the 1.5 s window (clipped to its end), the third
// longer; events between the labels are not any sample's.
std::vector<CameraEvent> synthetic_gesture_recording(std::vector<egret::GestureLabel>& labels) {
  std::mt19937_64 rng(11);
  std::vector<CameraEvent> ev;
  const std::int64_t t0 = 135'000'000;
  for (std::int64_t t = t0; t < t0 + 6'000'000; t += 97) {
    const double phase = static_cast<double>(t - t0) * 2e-6;
    const int cx = 64 + static_cast<int>(40 * std::cos(phase)),
              cy = 64 + static_cast<int>(40 * std::sin(phase));
    const auto jitter = [&] { return static_cast<int>(rng() % 9) - 4; };
    if (rng() % 5 == 0) {  // noise anywhere
      ev.push_back({t, static_cast<std::uint16_t>(rng() % 128),
                    static_cast<std::uint16_t>(rng() % 128), static_cast<std::uint8_t>(rng() % 2)});
    } else {
      ev.push_back({t, static_cast<std::uint16_t>(cx + jitter()),
                    static_cast<std::uint16_t>(cy + jitter()),
                    static_cast<std::uint8_t>(rng() % 2)});
    }
  }
  labels = {{3, t0 + 100'000, t0 + 1'900'000},
            {7, t0 + 2'000'000, t0 + 2'800'000},
            {11, t0 + 3'000'000, t0 + 5'900'000}};
  return ev;
}

TEST(RecordingPreprocessing, DefaultsGiveExactlyTheGestureJobsSamples) {
  std::vector<egret::GestureLabel> labels;
  const auto events = synthetic_gesture_recording(labels);
  const fs::path dir = recording_scratch("gesture_set");
  fs::remove_all(dir);
  fs::create_directories(dir);
  egret::write_aedat31((dir / "user24_led.aedat").string(), events, {128, 128});
  egret::write_gesture_labels((dir / "user24_led_labels.csv").string(), labels);
  egret::write_file_atomically((dir / "trials_to_test.txt").string(), "user24_led.aedat\n");

  egret::SensorSize pooled;
  const auto reference =
      gesture_job_prepare(egret::load_gesture_split(dir.string(), "test"), {}, pooled);
  ASSERT_EQ(reference.size(), 3u);
  EXPECT_EQ(pooled.width, 32);

  const egret::CameraRecording rec =
      egret::read_camera_recording((dir / "user24_led.aedat").string());
  const RecordingPreprocessing p;  // the defaults are the job's
  EXPECT_EQ(p.input_channels(rec.sensor), 2048);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto s = egret::prepare_recording_window(rec.events, rec.sensor, p, labels[i].start_us,
                                                   labels[i].cls - 1, labels[i].end_us);
    const auto& r = reference[i];
    ASSERT_GT(r.input.size(), 100u) << "sample " << i;
    ASSERT_EQ(s.input.size(), r.input.size()) << "sample " << i;
    EXPECT_EQ(s.input.channels(), r.input.channels());
    for (std::size_t k = 0; k < r.input.size(); ++k) {
      const auto &a = s.input.events()[k], &b = r.input.events()[k];
      ASSERT_TRUE(a.time == b.time && a.channel == b.channel && a.value == b.value)
          << "sample " << i << " event " << k;
    }
    EXPECT_EQ(s.end_time, r.end_time);
    EXPECT_EQ(s.readout_windows, r.readout_windows);
    EXPECT_EQ(s.targets.labels, r.targets.labels);
  }
  // The clipped gesture (0.8 s) has no input after its end, but the sample lasts 1.5 s.
  const auto clipped = egret::prepare_recording_window(rec.events, rec.sensor, p,
                                                       labels[1].start_us, 6, labels[1].end_us);
  EXPECT_LE(clipped.input.events().back().time, 800.0);
  EXPECT_EQ(clipped.end_time, 1500.0);
  // Without the clip, the window runs on into the next gesture's events.
  const auto unclipped =
      egret::prepare_recording_window(rec.events, rec.sensor, p, labels[1].start_us, 6);
  EXPECT_GT(unclipped.input.events().back().time, 1400.0);
}

TEST(RecordingPreprocessing, HandWorkedWindowWithCropDenoiseAndPooling) {
  RecordingPreprocessing p;
  p.pooling = 0.5;
  p.bin_us = 1000;
  p.window_us = 4000;
  p.denoise_us = 500;
  p.readout_from = 0.25;
  p.crop = egret::CropBox{10, 20, 8, 8};
  // Sensor 40x40; the crop keeps x 10..17, y 20..27 (shifted to 0..7). Window from 10000 us.
  const std::vector<CameraEvent> ev = {
      {9000, 12, 22, 1},   // before the window
      {10100, 12, 22, 1},  // kept: within filter_time of the window's start (tonic's memory)
      {10200, 13, 22, 1},  // kept: its neighbour (12, 22) fired 100 us before
      {10300, 30, 30, 1},  // outside the crop
      {12000, 16, 26, 0},  // isolated: dropped by denoise
      {12100, 16, 27, 0},  // kept: (16, 26) fired 100 us before
      {14000, 12, 22, 1},  // at the window's end: not in it
  };
  const auto s = egret::prepare_recording_window(ev, {40, 40}, p, 10000, 4);
  // Pooled 4x4: (2, 2) and (3, 2) -> (1, 1), ON: channel (1 * 4 + 1) * 4 + 1 = 21, bin 0 (ends at
  // 1 ms), count 2; (6, 7) -> (3, 3), OFF: channel 3 * 4 + 3 = 15, bin 2 (ends at 3 ms), count 1.
  ASSERT_EQ(s.input.size(), 2u);
  EXPECT_EQ(s.input.channels(), 32);
  EXPECT_EQ(s.input.events()[0].time, 1.0);
  EXPECT_EQ(s.input.events()[0].channel, 21);
  EXPECT_EQ(s.input.events()[0].value, 2.0);
  EXPECT_EQ(s.input.events()[1].time, 3.0);
  EXPECT_EQ(s.input.events()[1].channel, 15);
  EXPECT_EQ(s.input.events()[1].value, 1.0);
  EXPECT_EQ(s.end_time, 4.0);
  ASSERT_EQ(s.readout_windows.size(), 1u);
  EXPECT_EQ(s.readout_windows[0], std::make_pair(1.0, 4.0));
  EXPECT_EQ(s.targets.labels, std::vector<int>{4});
  // Binary coalescing: 1 per occupied (channel, bin).
  p.coalesce = egret::Coalesce::kBinary;
  EXPECT_EQ(egret::prepare_recording_window(ev, {40, 40}, p, 10000).input.events()[0].value, 1.0);
  // A crop outside the sensor, an unknown sensor without a crop.
  EXPECT_NE(error_of([&] {
              egret::prepare_recording_window(ev, {16, 16}, p, 10000);
            }).find("does not lie inside the 16x16 sensor"),
            std::string::npos);
  p.crop.reset();
  EXPECT_NE(error_of([&] {
              egret::prepare_recording_window(ev, {0, 0}, p, 10000);
            }).find("does not state its sensor size"),
            std::string::npos);
}

TEST(RecordingPreprocessing, TaskSectionOfTheGestureJob) {
  const auto today = nlohmann::json::parse(
      R"({"name":"dvs_gesture","dataset":"out/dvs_gesture_synthetic","pooling":0.25,
          "bin_us":5000,"window_us":1500000,"epochs":12})");
  EXPECT_TRUE(RecordingPreprocessing::from_task_json(today, "ckpt") == RecordingPreprocessing());
  auto next = today;
  next["denoise_us"] = 10000;
  next["coalesce"] = "binary";
  next["readout_from"] = 0.5;
  next["bin_us"] = 2000;
  next["pooling"] = 0.5;
  next["seed"] = 3;
  next["model"] = "egru";
  const RecordingPreprocessing p = RecordingPreprocessing::from_task_json(next, "ckpt");
  EXPECT_EQ(p.denoise_us, 10000);
  EXPECT_EQ(p.coalesce, egret::Coalesce::kBinary);
  EXPECT_EQ(p.readout_from, 0.5);
  EXPECT_EQ(p.bin_us, 2000);
  EXPECT_EQ(p.pooling, 0.5);
  EXPECT_EQ(p.window_us, 1500000);
  EXPECT_FALSE(p.crop.has_value());
  // Round trip, with a crop.
  RecordingPreprocessing q = p;
  q.crop = egret::CropBox{96, 56, 128, 128};
  EXPECT_TRUE(RecordingPreprocessing::from_task_json(q.to_task_json(), "x") == q);
  EXPECT_EQ(q.to_task_json()["crop"], nlohmann::json({96, 56, 128, 128}));

  auto error = [](nlohmann::json j) {
    return error_of([&] { RecordingPreprocessing::from_task_json(j, "ckpt.h5"); });
  };
  auto with = [&](const char* key, nlohmann::json v) {
    auto j = today;
    j[key] = v;
    return error(j);
  };
  EXPECT_NE(with("bins", 3).find("ckpt.h5: task: unknown key 'bins'"), std::string::npos);
  EXPECT_NE(with("pooling", 0).find("pooling = 0 is outside (0, 1]"), std::string::npos);
  EXPECT_NE(with("pooling", 1.5).find("pooling = 1.5 is outside (0, 1]"), std::string::npos);
  EXPECT_NE(with("bin_us", 7000).find("window_us = 1500000 is not a multiple of bin_us = 7000"),
            std::string::npos);
  EXPECT_NE(with("bin_us", 0).find("task.bin_us: expected an integer >= 1"), std::string::npos);
  EXPECT_NE(with("bin_us", 2000000).find("bin_us = 2000000 is outside [1, window_us = 1500000]"),
            std::string::npos);
  EXPECT_NE(with("window_us", 1.5e6).find("task.window_us: expected an integer"),
            std::string::npos);
  EXPECT_NE(with("denoise_us", -1).find("task.denoise_us: expected an integer >= 0"),
            std::string::npos);
  EXPECT_NE(with("coalesce", "max").find("expected \"sum\" or \"binary\", got 'max'"),
            std::string::npos);
  EXPECT_NE(with("readout_from", 1).find("readout_from = 1 is outside [0, 1)"), std::string::npos);
  EXPECT_NE(with("crop", nlohmann::json({1, 2, 3})).find("task.crop: expected [X, Y, W, H]"),
            std::string::npos);
  EXPECT_NE(error(nlohmann::json::parse(R"({"name": "delay_copy", "bits": 2})"))
                .find("the task 'delay_copy' is not one that reads camera recordings"),
            std::string::npos);
  EXPECT_NE(error(nlohmann::json::array()).find("task: expected an object"), std::string::npos);

  // A configuration without a task section: the defaults, and it says so.
  bool has_task = true;
  EXPECT_TRUE(egret::preprocessing_from_config(R"({"input_channels": 4})", "c", &has_task) ==
              RecordingPreprocessing());
  EXPECT_FALSE(has_task);

  EXPECT_EQ(egret::crop_box_text(egret::parse_crop_box("96,56,128,128", "--crop")),
            "96,56,128,128");
  for (const char* bad : {"1,2,3", "1,2,3,4,", "a,2,3,4", "-1,0,3,4", "0,0,0,4", "0,0,4,70000"})
    EXPECT_NE(error_of([&] { egret::parse_crop_box(bad, "--crop"); }).find("--crop"),
              std::string::npos)
        << bad;
}

TEST(RecordingWindows, ConsecutiveLabelledAndTheirErrors) {
  RecordingPreprocessing p;
  p.window_us = 1000;
  p.bin_us = 100;
  const egret::RecordingSpan span{135'000'000, 135'002'500, 100};
  // Consecutive windows from the first event; the last one holds the last event, partially.
  const auto w = egret::recording_windows(span, p, nullptr, "");
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].start_us, 135'000'000);
  EXPECT_EQ(w[2].start_us, 135'002'000);
  EXPECT_EQ(w[2].end_us, 135'003'000);
  EXPECT_FALSE(w[1].partial);
  EXPECT_TRUE(w[2].partial);
  // Labels: clipped to the label's end; a label outside the recording is an error.
  std::vector<egret::GestureLabel> labels = {{2, 135'000'100, 135'000'600},
                                             {5, 135'001'000, 135'009'000}};
  const auto l = egret::recording_windows(span, p, &labels, "l.csv");
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].end_us, 135'000'600);
  EXPECT_EQ(l[0].label, 1);
  EXPECT_EQ(l[1].end_us, 135'002'000);
  EXPECT_EQ(l[1].label, 4);
  labels.push_back({3, 1'000, 2'000});
  const std::string outside =
      error_of([&] { egret::recording_windows(span, p, &labels, "l.csv"); });
  EXPECT_NE(outside.find("l.csv: label 3 (class 3, 1000 .. 2000 us) lies outside the recording"),
            std::string::npos)
      << outside;
  EXPECT_NE(outside.find("135000000 .. 135002500 us"), std::string::npos) << outside;

  // A window: none of the events is an error giving the span; beyond the end, a note.
  const std::string before = error_of([&] { egret::check_recording_window(span, 0, 1000, "r"); });
  EXPECT_NE(before.find("r: the window 0 .. 1000 us"), std::string::npos) << before;
  EXPECT_NE(before.find("holds none of its events: the recording's events span 135000000 .. "
                        "135002500 us (135.000000 s .. 135.002500 s)"),
            std::string::npos)
      << before;
  EXPECT_NE(error_of([&] {
              egret::check_recording_window(span, 135'002'501, 1000, "r");
            }).find("holds none of its events"),
            std::string::npos);
  const auto notes = egret::check_recording_window(span, 135'002'000, 1000, "r");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("ends 0.000499 s after the recording's last event"), std::string::npos)
      << notes[0];
  EXPECT_TRUE(egret::check_recording_window(span, 135'000'000, 1000, "r").empty());

  // An empty recording.
  EXPECT_EQ(error_of([] {
              egret::recording_span({{128, 128}, {}}, "e.aedat");
            }),
            "e.aedat: the recording holds no events");
}

TEST(RecordingWindows, SizeCheckNamesBothNumbers) {
  RecordingPreprocessing p;
  const std::string e = error_of([&] {
    egret::check_recording_fits_network({320, 240}, p, 2048, "rec.aedat4");
  });
  EXPECT_NE(e.find("rec.aedat4: the 320x240 sensor, pooled by 0.25, gives 80x60 pixels x 2 "
                   "polarities = 9600 input channels, but the network has 2048 input channels"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("--crop X,Y,W,H"), std::string::npos);
  EXPECT_NE(e.find("the centred crop 96,56,128,128 with pooling 0.25"), std::string::npos) << e;
  p.crop = egret::CropBox{96, 56, 128, 128};
  EXPECT_EQ(error_of([&] { egret::check_recording_fits_network({320, 240}, p, 2048, "r"); }), "");
}

// Every format the readers detect is listed, with the id its reader reports, and nothing else.
TEST(CameraFormats, TheListIsWhatTheReadersDetect) {
  std::set<std::string> listed;
  for (const auto& f : egret::kCameraFormats) listed.insert(f.id);
  EXPECT_EQ(listed.size(), egret::kCameraFormats.size());
  std::set<std::string> detected;
  auto check = [&](const std::string& path, bool read) {
    const std::string id = egret::detect_camera_format(path);
    EXPECT_TRUE(listed.count(id)) << path << ": " << id;
    detected.insert(id);
    if (read) {
      EXPECT_EQ(egret::read_camera_file(path, [](const CameraEvent*, std::size_t) {}).format, id);
    }
  };
  check(shared_data("prophesee/evt2_sample.raw"), true);
  check(shared_data("prophesee/evt3_sample.raw"), true);
  check(shared_data("tonic/sample.aedat4"), true);
  check(shared_data("tonic/sample_ncars.dat"), true);
  check(shared_data("tonic/sample_nmnist.bin"), true);
  check(shared_data("tonic/sample_aedat_header.aedat"), true);
  const std::string a31 = recording_scratch("formats.aedat");
  egret::write_aedat31(a31, {{5, 1, 2, 1}}, {128, 128});
  check(a31, true);
  for (const auto& [name, head] : std::vector<std::pair<std::string, std::string>>{
           {"formats.npy", "\x93NUMPY\x01"}, {"formats.h5", "\x89HDF\r\n\x1a\n"}}) {
    const std::string path = recording_scratch(name);
    std::ofstream(path, std::ios::binary) << head << std::string(64, '\0');
    check(path, false);
  }
  EXPECT_EQ(detected, listed);
  const std::string csv = recording_scratch("formats.csv");
  std::ofstream(csv) << "t_ms,channel\n1,0\n";
  EXPECT_EQ(egret::detect_camera_format(csv), "");
  const std::string unknown =
      error_of([&] { egret::read_camera_file(csv, [](const CameraEvent*, std::size_t) {}); });
  for (const auto& f : egret::kCameraFormats)
    EXPECT_NE(unknown.find(f.name), std::string::npos) << unknown;
}

}  // namespace
