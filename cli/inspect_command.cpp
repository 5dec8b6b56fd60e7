// `egret inspect`: a summary of a trace file or of an event-camera recording.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "camera/formats/camera_readers.hpp"
#include "cli/commands.hpp"
#include "cli/summary.hpp"
#include "io/hdf5/trace_file.hpp"

namespace egret::cli {

namespace {

// An event-camera recording: format, sensor, events, time span, polarity balance.
int inspect_camera_file(const std::string& path) {
  std::uint64_t on = 0;
  std::int64_t first = -1, last = -1;
  int max_x = -1, max_y = -1;  // the extent the events reach: a lower bound of the sensor
  const auto info = egret::read_camera_file(path, [&](const egret::CameraEvent* e, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      on += e[i].p;
      max_x = std::max<int>(max_x, e[i].x);
      max_y = std::max<int>(max_y, e[i].y);
    }
    if (n > 0 && first < 0) first = e[0].t;
    if (n > 0) last = e[n - 1].t;
  });
  std::string sensor = egret::sensor_text(info.sensor);
  if (!info.sensor.known() && info.events > 0)
    sensor += " (the events reach " + std::to_string(max_x + 1) + "x" + std::to_string(max_y + 1) +
              ": inferred, a lower bound)";
  std::printf("%s: %s event-camera recording, %s, %llu events (%llu other records skipped)\n",
              path.c_str(), info.format.c_str(), sensor.c_str(),
              static_cast<unsigned long long>(info.events),
              static_cast<unsigned long long>(info.skipped));
  if (info.events > 0) {
    const double span_s = static_cast<double>(last - first) * 1e-6;
    std::printf("time %.6f .. %.6f s (%.3f s), %.0f events/s, ON share %.3f\n", first * 1e-6,
                last * 1e-6, span_s, span_s > 0 ? static_cast<double>(info.events) / span_s : 0.0,
                static_cast<double>(on) / static_cast<double>(info.events));
  }
  return 0;
}

}  // namespace

int run_inspect(const Args& args) {
  if (args.positional.empty())
    throw std::invalid_argument("inspect needs a file: egret inspect TRACE.h5 | RECORDING");
  const std::string path = args.positional.front();
  {  // Traces are HDF5 files marked egret_format = "egret-trace"; other HDF5 files and every
     // other file are read as event-camera recordings (event arrays, AEDAT, EVT, ...).
    std::ifstream in(path, std::ios::binary);
    char sig[4] = {0};
    in.read(sig, 4);
    const bool hdf5 = in.gcount() == 4 && std::string(sig + 1, 3) == "HDF";
    if (hdf5) {  // the classification touches the file through libhdf5: validated first
      const bool event_array = egret::h5::read_untrusted(path, [&] {
        const egret::h5::Id file = egret::h5::open_file_read(path);
        return !egret::h5::has_attribute(file.get(), "egret_format") &&
               egret::h5::exists(file.get(), "events");
      });
      if (event_array) return inspect_camera_file(path);
    } else if (!ends_with(path, ".h5") && !ends_with(path, ".hdf5")) {
      return inspect_camera_file(path);
    }
  }
  const egret::TraceData d = egret::read_trace_file(path);
  double total = 0;
  for (double v : d.sample_duration) total += v;
  std::printf("%s: egret trace, %zu layer(s), %zu sample(s), %.3f ms in all\n", path.c_str(),
              d.layers.size(), d.sample_start.size(), total);
  std::printf("%-8s %-16s %6s %10s %22s %9s\n", "layer", "type", "units", "events",
              "time span [ms]", "sorting");
  std::vector<std::string> types;
  std::vector<egret::MetricTable> tables;
  for (const auto& L : d.layers) {
    char span[64] = "-";
    if (!L.timestamps.empty())
      std::snprintf(span, sizeof span, "%.3f .. %.3f", L.timestamps.front(), L.timestamps.back());
    std::printf("%-8s %-16s %6.0f %10zu %22s %9s\n", L.name.c_str(), L.type.c_str(),
                L.metrics.at("units"), L.timestamps.size(), span, L.sorting.c_str());
    types.push_back(L.type);
    egret::MetricTable t;
    for (const std::string& k : egret::layer_metric_names()) {
      const auto it = L.metrics.find(k);
      t.emplace_back(k, it == L.metrics.end() ? std::nan("") : it->second);
    }
    tables.push_back(std::move(t));
  }
  if (d.format_version < egret::kTraceFormatVersion)
    std::printf("(trace format version %lld: written before operation counts; rates only)\n",
                static_cast<long long>(d.format_version));
  print_layer_metrics(types, tables);
  if (!d.snapshot_times.empty()) std::printf("snapshots: %zu\n", d.snapshot_times.size());
  std::printf("written by egret %s (git %s) at %s, seed %s\ncommand: %s\n",
              d.provenance.at("egret_version").c_str(), d.provenance.at("git_revision").c_str(),
              d.provenance.at("utc_time").c_str(), d.provenance.at("seed").c_str(),
              d.provenance.at("command_line").c_str());
  return 0;
}

}  // namespace egret::cli
