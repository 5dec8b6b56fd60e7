// Writing 10 million events to an HDF5 trace while "simulating": the events are produced one by
// one (as the engine's sink sees them) and streamed to disk in chunks, so memory stays bounded.
// Reports write throughput and peak resident memory, against the same events kept in memory as
// the in-process baseline.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "io/hdf5/trace_file.hpp"

namespace {

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::uint64_t n_events = quick ? 1'000'000 : 10'000'000;
  const int layers = 2;
  const egret::Index units = 256;
  const std::string path =
      (std::filesystem::temp_directory_path() / "egret_bench_trace.h5").string();
  std::vector<egret::TraceLayerInfo> info;
  for (int l = 0; l < layers; ++l)
    info.push_back({"layer" + std::to_string(l), "continuous_egru", units, 64});
  const long rss_before = peak_rss_kib();
  std::mt19937_64 rng(1);
  const auto t0 = std::chrono::steady_clock::now();
  {
    egret::TraceFileWriter writer(path, info);
    writer.begin_sample(0);
    double t = 0;
    for (std::uint64_t i = 0; i < n_events; ++i) {
      t += static_cast<double>(rng() % 1000) * 1e-5;  // ~200 events per ms
      writer.on_event({t, static_cast<egret::Index>(rng() % layers),
                       static_cast<egret::Index>(rng() % static_cast<std::uint64_t>(units)), 0.3});
    }
    egret::SimResult<double> r;
    r.end_time = t + 1;
    r.layers.resize(layers);
    writer.end_sample(r);
    writer.finish();
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const long rss_after = peak_rss_kib();
  const auto bytes = std::filesystem::file_size(path);
  std::printf(
      "HDF5 trace: %llu events in %.2f s = %.2f M events/s, file %.1f MB (%.2f bytes/event, "
      "shuffle+deflate), peak RSS %.1f MB (grew by %.1f MB while writing)\n",
      static_cast<unsigned long long>(n_events), secs, n_events / secs / 1e6, bytes / 1e6,
      static_cast<double>(bytes) / static_cast<double>(n_events), rss_after / 1024.0,
      (rss_after - rss_before) / 1024.0);
  std::printf(
      "(kept in memory instead, the same events as egret::TraceEvent<double> would take "
      "%.1f MB)\n",
      static_cast<double>(n_events * sizeof(egret::TraceEvent<double>)) / 1e6);
  std::filesystem::remove(path);
  return 0;
}
