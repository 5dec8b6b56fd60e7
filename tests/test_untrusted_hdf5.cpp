// HDF5 files from others: the regression corpus (files that crashed libhdf5, exhausted memory or
// read uninitialised data) gives clear errors naming the file, the HDF5 path and the problem;
// the validating child turns crashes, hangs and memory blow-ups into errors; a checkpoint with
// one flipped bit is refused naming the damaged item (or, where the bit is unused, loads
// identically); a full disk is one clear error that leaves no file behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "camera/formats/camera_readers.hpp"
#include "events/synthetic_input.hpp"
#include "io/config/network_config.hpp"
#include "io/config/train_config.hpp"
#include "io/hdf5/checkpoint.hpp"
#include "io/hdf5/hdf5.hpp"
#include "io/hdf5/trace_file.hpp"
#include "tests/test_support.hpp"
#include "train/delay_copy_task.hpp"
#include "train/trainer.hpp"

namespace {

namespace fs = std::filesystem;

std::string hdf5_corpus(const std::string& name) {
  return std::string(EGRET_SOURCE_DIR) + "/tests/fuzz/corpus/regressions/" + name;
}

std::string hdf5_scratch(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "egret_untrusted_hdf5";
  fs::create_directories(dir);
  return (dir / name).string();
}

using egret::testing::error_of;

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

void no_events(const egret::CameraEvent*, std::size_t) {}

TEST(UntrustedHdf5, RegressionCorpusGivesClearErrorsWithinSeconds) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string dangling = hdf5_corpus("hdf5_events/h5_events_dangling_link.h5");
  EXPECT_EQ(error_of([&] { egret::read_camera_file(dangling, no_events); }),
            dangling + ":/events: a dangling link (its target does not exist)");
  const std::string huge_int = hdf5_corpus("hdf5_events/h5_events_huge_int_type.h5");
  EXPECT_EQ(error_of([&] { egret::read_camera_file(huge_int, no_events); }),
            huge_int + ":/events/p: integer type of 4294770689 bytes (at most 8 supported)");
  const std::string huge_dims = hdf5_corpus("hdf5_trace/trace_huge_dims.h5");
  EXPECT_EQ(error_of([&] { egret::read_trace_file(huge_dims); }),
            huge_dims +
                ":/spikes/layer0/timestamps: the dimensions claim 277076930199554 elements "
                "(2216615441596432 bytes) beyond the end of the 21761-byte file");
  // A heap overflow inside libhdf5 (under H5Aexists): the validating child crashes, or, where
  // the heap layout lets it survive, finds no root group members; the parent never reads it.
  const std::string overflow = hdf5_corpus("hdf5_trace/trace_hdf5_attr_heap_overflow.h5");
  const std::string e = error_of([&] { egret::read_trace_file(overflow); });
  EXPECT_TRUE(starts_with(e, overflow + ": libhdf5 crashed while validating the file (signal") ||
              e == overflow + ": missing group 'spikes'")
      << e;
  for (const auto& f : {dangling, huge_int, huge_dims, overflow})
    EXPECT_TRUE(starts_with(error_of([&] { egret::read_checkpoint(f); }), f + ":")) << f;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20.0);
}

TEST(UntrustedHdf5, ValidatingChildTurnsCrashesHangsAndErrorsIntoErrors) {
  const std::string f = hdf5_scratch("any.h5");  // need not exist: 3 s time limit
  EXPECT_NO_THROW(egret::h5::validate_in_child(f, [] {}));
  EXPECT_TRUE(starts_with(
      error_of([&] { egret::h5::validate_in_child(f, [] { std::abort(); }); }),
      f + ": libhdf5 crashed while validating the file (signal " + std::to_string(SIGABRT)));
  EXPECT_THROW(egret::h5::validate_in_child(f, [] { throw std::invalid_argument("bad"); }),
               std::invalid_argument);
  EXPECT_EQ(error_of([&] {
              egret::h5::validate_in_child(f, [] { throw std::runtime_error("f:/x: broken"); });
            }),
            "f:/x: broken");
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of([&] {
              egret::h5::validate_in_child(f, [] {
                for (;;) pause();
              });
            }),
            f + ": libhdf5 did not finish validating the file within 3 s (malformed HDF5 "
                "metadata can make it loop); the file was not read");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 4.5);
  const std::string m = error_of([&] {
    egret::h5::validate_in_child(f, [] {
      std::vector<char> v(std::size_t{8} << 30, 1);  // 8 GB: beyond the child's limit
      if (v[12345] != 1) throw std::runtime_error("unreachable");
    });
  });
#if EGRET_TEST_ASAN  // ASan's allocator aborts instead of throwing bad_alloc
  EXPECT_TRUE(starts_with(m, f + ": ")) << m;
#else
  EXPECT_TRUE(starts_with(m, f + ": reading the file needs more memory than its size can justify"))
      << m;
#endif
}

TEST(UntrustedHdf5, Crc64MatchesTheStandardCheckValue) {
  EXPECT_EQ(egret::crc64("123456789", 9), 0x995DC9BBDF1939FAULL);  // CRC-64/XZ
  EXPECT_EQ(egret::crc64("", 0), 0u);
}

// A real checkpoint: the delay-copy network after one epoch, with its named parameters.
struct RealCheckpoint {
  egret::Checkpoint c;
  std::string path;
};

RealCheckpoint real_checkpoint() {
  const auto cfg =
      egret::load_train_config(std::string(EGRET_SOURCE_DIR) + "/examples/delay_copy.json");
  const auto train = egret::delay_copy_trials<double>(cfg.delay_copy, 32, 5);
  egret::Trainer<double> trainer(egret::build_network<double>(cfg.network), cfg.training);
  trainer.train_epoch(train);
  RealCheckpoint r;
  r.c.config_text = "{\"task\": \"delay_copy\", \"marker\": \"configuration-text\"}";
  r.c.epoch = 0x5EED1234;  // distinctive bytes, found in the file below
  r.c.values = trainer.parameters().values();
  r.c.adam_m = trainer.optimizer().first_moment();
  r.c.adam_v = trainer.optimizer().second_moment();
  r.c.optimizer_steps = trainer.optimizer().steps();
  std::ostringstream rng;
  rng << trainer.rng();
  r.c.rng_state = rng.str();
  r.path = hdf5_scratch("real_checkpoint.h5");
  const egret::Network<double> net = trainer.network();
  egret::write_checkpoint(r.path, r.c, &net);
  return r;
}

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_bytes(const std::string& path, const std::vector<char>& b) {
  std::ofstream(path, std::ios::binary).write(b.data(), static_cast<std::streamsize>(b.size()));
}

std::size_t find_bytes(const std::vector<char>& hay, const void* needle, std::size_t n) {
  const auto* p = static_cast<const char*>(needle);
  const auto it = std::search(hay.begin(), hay.end(), p, p + n);
  return it == hay.end() ? std::string::npos : static_cast<std::size_t>(it - hay.begin());
}

// The file offset of the middle of the first chunk of a chunked dataset.
std::size_t chunk_middle(const std::string& file, const std::string& dataset) {
  egret::h5::Id f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  egret::h5::Id d(H5Dopen2(f.get(), dataset.c_str(), H5P_DEFAULT));
  egret::h5::Id space(H5Dget_space(d.get()));
  hsize_t offset[2] = {0, 0}, size = 0;
  haddr_t addr = HADDR_UNDEF;
  unsigned mask = 0;
  EXPECT_GE(H5Dget_chunk_info(d.get(), space.get(), 0, offset, &mask, &addr, &size), 0) << dataset;
  return static_cast<std::size_t>(addr + size / 2);
}

bool same(const egret::Checkpoint& a, const egret::Checkpoint& b) {
  return a.config_text == b.config_text && a.epoch == b.epoch && a.values == b.values &&
         a.adam_m == b.adam_m && a.adam_v == b.adam_v && a.optimizer_steps == b.optimizer_steps &&
         a.rng_state == b.rng_state;
}

TEST(UntrustedHdf5, CheckpointWithOneFlippedBitIsRefusedNamingTheDamage) {
  const RealCheckpoint r = real_checkpoint();
  EXPECT_TRUE(same(egret::read_checkpoint(r.path), r.c));
  const std::vector<char> good = bytes_of(r.path);
  const std::int64_t epoch = r.c.epoch;
  const std::string damaged = hdf5_scratch("damaged.h5");
  struct Region {
    std::size_t at;
    std::string item;  // what the error must name
  };
  const std::vector<Region> regions = {
      {find_bytes(good, r.c.rng_state.data(), 64) + 30, "/@rng_state is damaged"},
      {find_bytes(good, "configuration-text", 18) + 3, "/@configuration is damaged"},
      // The root's attributes are in a fractal heap whose blocks carry libhdf5's own checksum:
      // that check fires first and names the attribute storage of "/".
      {find_bytes(good, &epoch, 8), ":/: cannot look up attribute"},
      {chunk_middle(r.path, "/training/values"), ":/training/values: cannot read the data"},
      {chunk_middle(r.path, "/training/adam_v"), ":/training/adam_v: cannot read the data"},
      {chunk_middle(r.path, "/parameters/layer0/U_z"),
       ":/parameters/layer0/U_z: cannot read the data"},
  };
  for (const Region& region : regions) {
    ASSERT_LT(region.at, good.size()) << region.item;
    std::vector<char> b = good;
    b[region.at] = static_cast<char>(b[region.at] ^ 0x08);
    write_bytes(damaged, b);
    const std::string e = error_of([&] { egret::read_checkpoint(damaged); });
    EXPECT_TRUE(starts_with(e, damaged)) << region.item << ": " << e;
    EXPECT_NE(e.find(region.item), std::string::npos) << region.item << ": " << e;
  }
  // Every 211th byte: refused, or (a bit nothing reads: padding, free space) loaded identically.
  int refused = 0, identical = 0;
  for (std::size_t at = 0; at < good.size(); at += 211) {
    std::vector<char> b = good;
    b[at] = static_cast<char>(b[at] ^ 0x10);
    write_bytes(damaged, b);
    egret::Checkpoint back;
    const std::string e = error_of([&] { back = egret::read_checkpoint(damaged); });
    if (!e.empty()) {
      EXPECT_TRUE(starts_with(e, damaged)) << "byte " << at << ": " << e;
      ++refused;
    } else {
      EXPECT_TRUE(same(back, r.c)) << "byte " << at << " changed the checkpoint silently";
      ++identical;
    }
  }
  EXPECT_GT(refused, 25);
  std::printf("  %d flipped bits refused, %d in unused bytes loaded identically\n", refused,
              identical);
}

// RLIMIT_FSIZE with SIGXFSZ ignored: write() fails with EFBIG, as on a full disk.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_ = signal(SIGXFSZ, SIG_IGN);
    const rlimit l{bytes, saved_.rlim_max};
    setrlimit(RLIMIT_FSIZE, &l);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    signal(SIGXFSZ, old_);
  }

 private:
  rlimit saved_{};
  void (*old_)(int) = nullptr;
};

TEST(UntrustedHdf5, FullDiskIsOneClearErrorNamingTheFileAndLeavesNothing) {
  egret::Checkpoint c;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200000; ++i) c.values.push_back(std::uniform_real_distribution<>(-1, 1)(rng));
  const std::string ckpt = hdf5_scratch("full_disk_checkpoint.h5");
  const std::string trace = hdf5_scratch("full_disk_trace.h5");
  fs::remove(ckpt);  // left by an earlier run (written at the end without the limit)
  fs::remove(trace);
  std::string ckpt_error, trace_error;
  {
    FileSizeLimit limit(20000);
    ckpt_error = error_of([&] { egret::write_checkpoint(ckpt, c); });
    trace_error = error_of([&] {
      egret::TraceFileWriter w(trace, {{"layer0", "continuous_egru", 4, 2}}, 1000);
      for (int i = 0; i < 200000; ++i)
        w.on_event({static_cast<double>(i) * 1e-3, 0, static_cast<egret::Index>(i % 4), 0.5});
      egret::SimResult<double> result;
      result.end_time = 300;
      w.end_sample(result);
      w.finish();
    });
  }
  EXPECT_EQ(ckpt_error, ckpt + ": cannot write the file (" + ckpt + ".tmp-egret): File too large");
  EXPECT_EQ(trace_error,
            trace + ": cannot write the file (" + trace + ".tmp-egret): File too large");
  for (const auto& p : {ckpt, trace}) {
    EXPECT_FALSE(fs::exists(p));
    EXPECT_FALSE(fs::exists(p + ".tmp-egret"));
  }
  // libhdf5 is left in a sound state: the same writes succeed without the limit.
  egret::write_checkpoint(ckpt, c);
  EXPECT_EQ(egret::read_checkpoint(ckpt).values, c.values);
}

TEST(UntrustedHdf5, EventTimesThatAreNotInt64MicrosecondsAreRefused) {
  const std::string path = hdf5_scratch("float_times.h5");
  {
    egret::h5::OutputFile f(path);
    egret::h5::Id g = egret::h5::create_group(f.get(), "events");
    egret::h5::write_vector(g.get(), "x", std::vector<std::int64_t>{1, 2});
    egret::h5::write_vector(g.get(), "y", std::vector<std::int64_t>{1, 2});
    egret::h5::write_vector(g.get(), "p", std::vector<std::int64_t>{0, 1});
    egret::h5::write_vector(g.get(), "t", std::vector<double>{5, 1e300});
    g.reset();
    f.commit();
  }
  EXPECT_EQ(error_of([&] { egret::read_camera_file(path, no_events); }),
            path + ":/events: event 1: field 't' = " + std::to_string(1e300) +
                " is not a whole number in int64 range");
}

}  // namespace
