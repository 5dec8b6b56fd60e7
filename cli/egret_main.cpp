// The `egret` command line: the main job's default run and `simulate`.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "camera/formats/camera_readers.hpp"
#include "camera/formats/frame_files.hpp"
#include "cli/builtin_layers.hpp"
#include "cli/commands.hpp"
#include "events/synthetic_input.hpp"
#include "io/config/network_config.hpp"
#include "io/event_csv.hpp"
#include "io/hdf5/hdf5.hpp"
#include "io/hdf5/trace_file.hpp"
#include "sim/batch_runner.hpp"
#include "sim/precision_cast.hpp"

namespace {

using egret::Index;
using egret::cli::parse_positive_int;
using egret::cli::parse_time;

const char* kUsage = R"(egret — event-driven simulator for activity-sparse recurrent networks

usage:
  egret [gesture] [--dataset DIR] [--out DIR] [--epochs N] [--threads T] [--precision P]
      The main job: DVS gesture classification. Generates the synthetic DVS128 Gesture-style set
      (if absent) or reads the real one (--dataset: userNN_*.aedat, labels, trials_to_*.txt),
      trains a continuous-time EGRU with exact gradients, and reports held-out accuracy,
      activity, operations against a dense GRU at stated steps and events/s; writes checkpoint.h5, trace.h5 and
      training_log.csv to out/dvs_gesture.
  egret demo [--samples S] [--threads T] [--end-time MS] [--precision P]
      A two-layer continuous-time EGRU (32 input channels, 64 and 32 units) on a synthetic
      sweeping event stream, S samples (default 8) in parallel: events per layer, activity,
      wall time, events/s.
  egret simulate --config NET.json --input EVENTS.csv [--trace OUT.h5|OUT.csv] [--end-time MS]
                 [--max-events N] [--precision P]
      Simulate one input stream (lines `t_ms,channel[,value]`) through the configured network;
      print a summary and, with --trace, write every emitted event: HDF5 with SONATA spikes,
      values, metrics, snapshots and provenance (.h5, streamed while the run goes on), or CSV
      lines time_ms,layer,unit,value (.csv). --max-events: the run's event budget (default
      the configuration's simulation.max_events, 100000000); a run that needs more stops with
      an error and writes no trace.
  egret emulate --frames IMAGES.txt --out EVENTS.aedat
      Run the DVS sensor model (contrast thresholds, refractory period, leak, shot noise) on a
      sequence of PNG frames listed as '<seconds> <path>' lines; write AEDAT 3.1.
  egret inspect TRACE.h5 | RECORDING
      Summary of a trace file per layer (events, rate, activity sparsity, time span, and the
      NeuroBench counts: Effective_MACs, Effective_ACs, Dense, MembraneUpdates), or of an
      event-camera recording (AEDAT 2.0/3.1, Prophesee EVT 2.0/3.0/DAT, N-MNIST .bin).
  egret estimate TRACE.h5 [--profile NAME|FILE] [--json OUT.json]
      Energy and latency per sample and per layer on a hardware profile (default
      loihi_davies2018; built in: loihi_davies2018, loihi_sanafe2025, cmos45_horowitz2014,
      kerasspiking_{cpu,gpu,arm,loihi,spinnaker,spinnaker2}; or a profile file of your own,
      docs/metrics.md). Prints a table, writes JSON with --json, adds /egret/estimates/NAME
      to the trace.
  egret train --config TRAIN.json [--out DIR] [--epochs N] [--threads T] [--precision P]
  egret train --resume DIR/checkpoint.h5 [--out DIR] [--epochs N]
      Train a continuous-time EGRU with exact event-based gradients on a built-in task
      (examples/delay_copy.json); prints progress, writes a checkpoint, the training log and
      the data for the figure (scripts/plot_delay_copy.py).
  --precision float|double: the scalar of the run (default: the configuration's "precision",
      float if absent; the main job: float). Double is for verification; files written hold
      float64 either way.
  egret help | --help
  egret --version
)";

struct Args {
  std::string command;
  std::vector<std::string> positional;  // arguments after the command that are not options
  std::map<std::string, std::string> options;
};

Args parse_args(int argc, char** argv, const std::vector<std::string>& known_options) {
  Args a;
  int i = 1;
  if (i < argc && argv[i][0] != '-') a.command = argv[i++];
  for (; i < argc; ++i) {
    const std::string key = argv[i];
    if (key.rfind("--", 0) != 0) {
      a.positional.push_back(key);
      continue;
    }
    bool known = false;
    for (const auto& k : known_options) known = known || key == k;
    if (!known) throw std::invalid_argument("unknown option '" + key + "' (see egret --help)");
    if (i + 1 >= argc) throw std::invalid_argument("option " + key + " needs a value");
    a.options[key] = argv[++i];
  }
  return a;
}

// One row per layer: events, rate and the NeuroBench-named counts per sample
// (sim/layer_metrics.hpp), with the step of each layer's dense comparison.
void print_layer_metrics(const std::vector<std::string>& types,
                         const std::vector<egret::MetricTable>& tables) {
  std::printf("%-6s %-14s %8s %12s %10s %13s %13s %13s %13s %8s\n", "layer", "type", "events/u/s",
              "activ.sparse", "Membrane", "Eff. MACs", "Eff. ACs", "Dense", "Dense/Eff.",
              "step ms");
  for (std::size_t l = 0; l < tables.size(); ++l) {
    const auto& t = tables[l];
    const double effective = egret::metric(t, "Effective_MACs") + egret::metric(t, "Effective_ACs");
    const double dense = egret::metric(t, "Dense");
    std::printf("%-6zu %-14s %8.2f %12.4f %10.4g %13.4g %13.4g %13.4g %13.3g %8.3g\n", l,
                types[l].c_str(), egret::metric(t, "events_per_unit_per_s"),
                egret::metric(t, "ActivationSparsity"), egret::metric(t, "MembraneUpdates"),
                egret::metric(t, "Effective_MACs"), egret::metric(t, "Effective_ACs"), dense,
                effective > 0 ? dense / effective : 0.0, egret::metric(t, "dense_step_ms"));
  }
  std::printf(
      "(counts per sample; Dense: the same layer run densely at its tick, or at \"dense_step\" "
      "for continuous layers; docs/metrics.md)\n");
}

template <class Scalar>
void print_summary(const egret::Network<Scalar>& net,
                   const std::vector<egret::SimResult<Scalar>>& results, double wall_s) {
  const std::size_t n_layers = static_cast<std::size_t>(net.size());
  std::uint64_t processed = 0, emitted = 0, inputs = 0;
  std::vector<egret::LayerCounts> totals(n_layers);
  double sim_ms = 0;
  for (const auto& r : results) {
    processed += r.events_processed;
    inputs += r.layers[0].inputs_received;
    sim_ms += r.end_time;
    for (std::size_t l = 0; l < n_layers; ++l) {
      totals[l] += r.layers[l];
      emitted += r.layers[l].events;
    }
  }
  std::printf(
      "samples: %zu, simulated time: %.1f ms in all, external input events: %llu, precision: "
      "%s\n",
      results.size(), sim_ms, static_cast<unsigned long long>(inputs),
      sizeof(Scalar) == sizeof(float) ? "float" : "double");
  std::vector<std::string> types;
  std::vector<egret::MetricTable> tables;
  for (std::size_t l = 0; l < n_layers; ++l) {
    types.push_back(net.layer(static_cast<Index>(l)).type_name());
    tables.push_back(egret::layer_metrics(totals[l], results.size(), sim_ms, sizeof(Scalar)));
  }
  print_layer_metrics(types, tables);
  std::printf(
      "emitted events: %llu, events processed (inputs, releases, crossings, ticks, "
      "readouts): %llu\n",
      static_cast<unsigned long long>(emitted), static_cast<unsigned long long>(processed));
  std::printf("wall time: %.3f s, events processed/s: %.0f, emitted events/s: %.0f\n", wall_s,
              wall_s > 0 ? static_cast<double>(processed) / wall_s : 0.0,
              wall_s > 0 ? static_cast<double>(emitted) / wall_s : 0.0);
}

egret::NetworkConfig default_config(double end_ms) {
  egret::NetworkConfig cfg;
  cfg.seed = 7;
  cfg.input_channels = 32;
  egret::LayerConfig l0 =
      egret::parse_layer_config(egret::builtin::kDemoLayer, "built-in demo layer");
  egret::LayerConfig l1 = l0;
  l1.units = 32;
  cfg.layers = {l0, l1};
  cfg.end_time = end_ms;
  cfg.readout_times = {end_ms};
  return cfg;
}

int run_demo(const Args& args) {
  const long samples = args.options.count("--samples")
                           ? parse_positive_int(args.options.at("--samples"), "--samples")
                           : 8;
  const long threads = args.options.count("--threads")
                           ? parse_positive_int(args.options.at("--threads"), "--threads")
                           : 0;
  const double end_ms = args.options.count("--end-time")
                            ? parse_time(args.options.at("--end-time"), "--end-time")
                            : 1000.0;
  egret::NetworkConfig cfg = default_config(end_ms);
  if (args.options.count("--precision"))
    cfg.precision = egret::parse_precision(args.options.at("--precision"), "--precision");
  std::printf(
      "egret main job (built-in default): %zu continuous-time EGRU layers (box kernel), "
      "%lld input channels, %ld samples of %.0f ms of synthetic sweeping input\n",
      cfg.layers.size(), static_cast<long long>(cfg.input_channels), samples, end_ms);
  return egret::with_precision(cfg.precision, [&](auto scalar) {
    using Scalar = decltype(scalar);
    auto net = egret::build_network<Scalar>(cfg);
    std::vector<egret::InputStream<Scalar>> inputs;
    for (long s = 0; s < samples; ++s) {
      inputs.push_back(egret::sweep_input<Scalar>(cfg.input_channels, 6, 200.0, 5.0,
                                                  250.0 + 25.0 * s, end_ms,
                                                  1000 + static_cast<std::uint64_t>(s)));
    }
    const auto t0 = std::chrono::steady_clock::now();
    const auto results = egret::simulate_batch(net, inputs, egret::sim_options<Scalar>(cfg),
                                               static_cast<int>(threads));
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    print_summary(net, results, wall);
    return 0;
  });
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct SimulateRun {
  const Args& args;
  const egret::NetworkConfig& cfg;
  const std::string& config_text;
  const std::string& command_line;
  const std::string& trace_path;
  bool hdf5 = false;
};

// `egret simulate` in the configuration's precision; traces hold float64 in both.
template <class Scalar>
int simulate_in_precision(const SimulateRun& run, const egret::InputStream<double>& input_d) {
  const Args& args = run.args;
  const egret::NetworkConfig& cfg = run.cfg;
  auto net = egret::build_network<Scalar>(cfg);
  const auto input = egret::cast_input<Scalar>(input_d);
  auto options = egret::sim_options<Scalar>(cfg);
  if (args.options.count("--max-events"))
    options.max_events = static_cast<std::uint64_t>(
        parse_positive_int(args.options.at("--max-events"), "--max-events"));
  std::unique_ptr<egret::TraceFileWriter> writer;
  std::unique_ptr<egret::CastingTraceSink<Scalar, double>> sink;
  if (run.hdf5) {  // streamed to disk while the run goes on: memory stays bounded
    writer = std::make_unique<egret::TraceFileWriter>(run.trace_path, egret::trace_layers(net));
    writer->set_provenance(
        {run.config_text, static_cast<std::int64_t>(cfg.seed), run.command_line});
    writer->begin_sample(-1);
    sink = std::make_unique<egret::CastingTraceSink<Scalar, double>>(*writer);
    options.sink = sink.get();
    options.record_trace = false;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto result = egret::simulate(net, input, options);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  print_summary(net, {result}, wall);
  for (const auto& r : result.readouts) {
    std::printf("readout at %.6g ms: output trace", static_cast<double>(r.time));
    for (const Scalar v : r.trace) std::printf(" %.4g", static_cast<double>(v));
    if (!r.logits.empty()) {
      std::printf("; logits");
      for (const Scalar v : r.logits) std::printf(" %.4g", static_cast<double>(v));
    }
    std::printf("\n");
  }
  if (writer) {
    const auto wide = egret::cast_result<double>(result);
    writer->end_sample(wide);
    writer->write_snapshots(wide.snapshots);
    const auto n = writer->events_written();
    writer->finish();
    std::printf("trace: %llu events written to %s (HDF5, SONATA spikes)\n",
                static_cast<unsigned long long>(n), run.trace_path.c_str());
  } else if (!run.trace_path.empty()) {
    egret::write_trace_csv(run.trace_path, egret::cast_result<double>(result).trace);
    std::printf("trace: %zu events written to %s\n", result.trace.size(), run.trace_path.c_str());
  }
  return 0;
}

int run_simulate(const Args& args, const std::string& command_line) {
  if (!args.options.count("--config")) throw std::invalid_argument("simulate needs --config FILE");
  if (!args.options.count("--input")) throw std::invalid_argument("simulate needs --input FILE");
  if (args.options.count("--trace"))
    egret::cli::check_output_file(args.options.at("--trace"), "--trace");
  const std::string config_path = args.options.at("--config");
  const std::string config_text = egret::read_text_file(config_path, "configuration file");
  egret::NetworkConfig cfg = egret::parse_network_config(config_text, config_path);
  if (args.options.count("--end-time"))
    cfg.end_time = parse_time(args.options.at("--end-time"), "--end-time");
  if (args.options.count("--precision"))
    cfg.precision = egret::parse_precision(args.options.at("--precision"), "--precision");
  const auto input = egret::read_input_events_csv(args.options.at("--input"), cfg.input_channels);
  const std::string trace_path = args.options.count("--trace") ? args.options.at("--trace") : "";
  const bool hdf5 = ends_with(trace_path, ".h5") || ends_with(trace_path, ".hdf5");
  if (!trace_path.empty() && !hdf5 && !ends_with(trace_path, ".csv"))
    throw std::invalid_argument("--trace must end in .h5 / .hdf5 (HDF5) or .csv, got '" +
                                trace_path + "'");
  SimulateRun run{args, cfg, config_text, command_line, trace_path, hdf5};
  return egret::with_precision(cfg.precision, [&](auto scalar) {
    return simulate_in_precision<decltype(scalar)>(run, input);
  });
}

// An event-camera recording: format, sensor, events, time span, polarity balance.
int inspect_camera_file(const std::string& path) {
  std::uint64_t on = 0;
  std::int64_t first = -1, last = -1;
  const auto info = egret::read_camera_file(path, [&](const egret::CameraEvent* e, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) on += e[i].p;
    if (n > 0 && first < 0) first = e[0].t;
    if (n > 0) last = e[n - 1].t;
  });
  std::printf(
      "%s: %s event-camera recording, sensor %dx%d, %llu events (%llu other records "
      "skipped)\n",
      path.c_str(), info.format.c_str(), info.sensor.width, info.sensor.height,
      static_cast<unsigned long long>(info.events), static_cast<unsigned long long>(info.skipped));
  if (info.events > 0) {
    const double span_s = static_cast<double>(last - first) * 1e-6;
    std::printf("time %.6f .. %.6f s (%.3f s), %.0f events/s, ON share %.3f\n", first * 1e-6,
                last * 1e-6, span_s, span_s > 0 ? static_cast<double>(info.events) / span_s : 0.0,
                static_cast<double>(on) / static_cast<double>(info.events));
  }
  return 0;
}

// The DVS sensor model on a frame sequence (images.txt with PNG frames) -> AEDAT 3.1.
int run_emulate(const Args& args) {
  if (!args.options.count("--frames") || !args.options.count("--out"))
    throw std::invalid_argument("emulate needs --frames IMAGES.txt --out EVENTS.aedat");
  egret::cli::check_output_file(args.options.at("--out"), "--out");
  egret::DvsSensorConfig cfg;
  cfg.eps = 0.1;  // lin-log floor for noisy APS frames
  const auto rec = egret::emulate_events_from_frames(args.options.at("--frames"), cfg);
  egret::write_aedat31(args.options.at("--out"), rec.events, rec.sensor);
  std::size_t on = 0;
  for (const auto& e : rec.events) on += e.p;
  std::printf("%zu events (ON share %.3f) from %dx%d frames written to %s (AEDAT 3.1)\n",
              rec.events.size(),
              rec.events.empty() ? 0.0 : static_cast<double>(on) / rec.events.size(),
              rec.sensor.width, rec.sensor.height, args.options.at("--out").c_str());
  return 0;
}

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

}  // namespace

namespace egret::cli {

long parse_positive_int(const std::string& s, const char* what) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (end != s.c_str() + s.size() || v <= 0)
    throw std::invalid_argument(std::string(what) + " must be a positive integer, got '" + s + "'");
  return v;
}

double parse_time(const std::string& s, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !(v >= 0) || !std::isfinite(v))
    throw std::invalid_argument(std::string(what) + " must be a finite time >= 0, got '" + s + "'");
  return v;
}

void check_output_directory(const std::string& dir, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir))
    throw std::runtime_error(what + " " + dir + ": cannot create the directory" +
                             (ec ? ": " + ec.message() : std::string(" (a file is in the way)")));
  const std::string probe =
      (fs::path(dir) / (".egret-write-test-" + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    throw std::runtime_error(what + " " + dir +
                             ": cannot create files in it: " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_output_file(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  if (path.empty()) throw std::invalid_argument(what + ": empty path");
  if (fs::is_directory(path)) throw std::runtime_error(what + " " + path + ": is a directory");
  const fs::path parent = fs::path(path).parent_path();
  check_output_directory(parent.empty() ? "." : parent.string(), what);
}

}  // namespace egret::cli

int main(int argc, char** argv) {
  try {
    if (argc >= 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "help" ||
                      std::string(argv[1]) == "-h")) {
      std::cout << kUsage;
      return 0;
    }
    if (argc >= 2 && std::string(argv[1]) == "--version") {
      std::cout << "egret " << EGRET_VERSION << "\n";
      return 0;
    }
    const Args args =
        parse_args(argc, argv,
                   {"--samples", "--threads", "--end-time", "--config", "--input", "--trace",
                    "--out", "--epochs", "--resume", "--dataset", "--frames", "--max-events",
                    "--profile", "--json", "--precision"});
    if (!args.positional.empty() && args.command != "inspect" && args.command != "estimate")
      throw std::invalid_argument("unexpected argument '" + args.positional.front() +
                                  "' (see egret --help)");
    std::string command_line;
    for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
    auto with_command_line = [&] {
      auto options = args.options;
      options["command_line"] = command_line;
      return options;
    };
    if (args.command.empty() || args.command == "gesture")
      return egret::cli::run_gesture(with_command_line());
    if (args.command == "demo") return run_demo(args);
    if (args.command == "simulate") return run_simulate(args, command_line);
    if (args.command == "inspect") return run_inspect(args);
    if (args.command == "estimate") {
      if (args.positional.size() != 1)
        throw std::invalid_argument("estimate: expected one trace file (egret estimate TRACE.h5)");
      return egret::cli::run_estimate(args.positional.front(), args.options);
    }
    if (args.command == "emulate") return run_emulate(args);
    if (args.command == "train") return egret::cli::run_train(with_command_line());
    throw std::invalid_argument("unknown command '" + args.command + "' (see egret --help)");
  } catch (const std::exception& e) {
    std::cerr << "egret: error: " << e.what() << "\n";
    return 1;
  }
}
