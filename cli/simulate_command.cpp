// `egret simulate`: one input stream through a configured network (--config) or a checkpoint's
// (--checkpoint), with an optional trace. The input is a CSV event file or a window of an
// event-camera recording in any format the camera readers accept, prepared as the gesture job
// prepares its samples (camera/recording_preprocessing.hpp).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "camera/formats/camera_readers.hpp"
#include "camera/recording_classifier.hpp"
#include "camera/recording_preprocessing.hpp"
#include "cli/commands.hpp"
#include "cli/summary.hpp"
#include "io/config/network_config.hpp"
#include "io/event_csv.hpp"
#include "io/hdf5/checkpoint_network.hpp"
#include "io/hdf5/trace_file.hpp"

namespace egret::cli {

namespace {

// The options that describe how a recording becomes the network's input.
const char* const kRecordingOptions[] = {"--pooling",   "--bin-us",   "--denoise-us", "--coalesce",
                                         "--window-us", "--start-us", "--crop"};

struct SimulateRun {
  const Args& args;
  const egret::NetworkConfig& cfg;
  const std::string& config_text;
  const std::string& command_line;
  const std::string& trace_path;
  bool hdf5 = false;
  const egret::Checkpoint* checkpoint = nullptr;  // --checkpoint: the trained values
  std::string checkpoint_path;
  const egret::Sample<double>* recording = nullptr;  // a recording's window: end and readouts
};

// An integer in [min, 2^53] (microseconds).
std::int64_t parse_us(const std::string& s, const char* what, std::int64_t min) {
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || end != s.c_str() + s.size() || v < min || v > egret::kMaxCameraTimeUs)
    throw std::invalid_argument(std::string(what) + " must be an integer in [" +
                                std::to_string(min) + ", 2^53] (microseconds), got '" + s + "'");
  return v;
}

// `egret simulate` in the configuration's precision; traces hold float64 in both.
template <class Scalar>
int simulate_in_precision(const SimulateRun& run, const egret::InputStream<double>& input_d) {
  const Args& args = run.args;
  const egret::NetworkConfig& cfg = run.cfg;
  auto net = run.checkpoint
                 ? egret::network_from_checkpoint<Scalar>(run.checkpoint_path, *run.checkpoint, cfg)
                 : egret::build_network<Scalar>(cfg);
  const auto input = egret::cast_input<Scalar>(input_d);
  auto options = egret::sim_options<Scalar>(cfg);
  if (run.recording) {  // the window's end and readout window instead of the configuration's
    const auto s = egret::cast_sample<Scalar>(*run.recording);
    options.end_time = s.end_time;
    options.readout_times.clear();
    options.snapshot_times.clear();
    options.readout_windows = s.readout_windows;
  }
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

// The window of the recording as the network's input; prints what was done.
egret::Sample<double> prepare_recording_input(const Args& args, const std::string& path,
                                              const egret::NetworkConfig& cfg,
                                              const std::string& config_origin,
                                              const std::string& config_text,
                                              bool from_checkpoint) {
  if (args.options.count("--end-time"))
    throw std::invalid_argument(
        "--end-time does not apply to a camera recording: its window (--window-us) is the run");
  egret::RecordingPreprocessing p;
  std::string source = "the defaults (no checkpoint)";
  if (from_checkpoint) {
    bool has_task = false;
    p = egret::preprocessing_from_config(config_text, config_origin, &has_task);
    source = has_task ? "the checkpoint's task section"
                      : "the defaults (the checkpoint has no task section)";
  }
  const egret::RecordingPreprocessing from_source = p;
  std::string overrides;
  auto note = [&](const char* option, const std::string& before, const std::string& after) {
    overrides +=
        std::string(overrides.empty() ? "" : ", ") + option + " " + after + " (was " + before + ")";
  };
  auto number = [](double v) {
    std::ostringstream os;
    os << v;
    return os.str();
  };
  const auto& o = args.options;
  if (o.count("--pooling")) {
    p.pooling = parse_nonnegative(o.at("--pooling"), "--pooling");
    note("--pooling", number(from_source.pooling), number(p.pooling));
  }
  if (o.count("--bin-us")) {
    p.bin_us = parse_us(o.at("--bin-us"), "--bin-us", 1);
    note("--bin-us", std::to_string(from_source.bin_us), std::to_string(p.bin_us));
  }
  if (o.count("--window-us")) {
    p.window_us = parse_us(o.at("--window-us"), "--window-us", 1);
    note("--window-us", std::to_string(from_source.window_us), std::to_string(p.window_us));
  }
  if (o.count("--denoise-us")) {
    p.denoise_us = parse_us(o.at("--denoise-us"), "--denoise-us", 0);
    note("--denoise-us", std::to_string(from_source.denoise_us), std::to_string(p.denoise_us));
  }
  if (o.count("--coalesce")) {
    p.coalesce = egret::parse_coalesce(o.at("--coalesce"), "--coalesce");
    note("--coalesce", egret::coalesce_name(from_source.coalesce),
         egret::coalesce_name(p.coalesce));
  }
  if (o.count("--crop")) {
    p.crop = egret::parse_crop_box(o.at("--crop"), "--crop");
    note("--crop", from_source.crop ? egret::crop_box_text(*from_source.crop) : "none",
         egret::crop_box_text(*p.crop));
  }
  p.validate();

  egret::CameraRecording rec;
  const egret::CameraFileInfo info =
      egret::read_camera_file(path, [&rec](const egret::CameraEvent* e, std::size_t n) {
        rec.events.insert(rec.events.end(), e, e + n);
      });
  rec.sensor = info.sensor;
  const egret::RecordingSpan span = egret::recording_span(rec, path);
  egret::check_recording_fits_network(rec.sensor, p, cfg.input_channels, path);
  const bool given_start = o.count("--start-us") > 0;
  const std::int64_t start =
      given_start ? parse_us(o.at("--start-us"), "--start-us", 0) : span.first_us;
  const auto notes = egret::check_recording_window(span, start, p.window_us, path);
  auto sample = egret::prepare_recording_window(rec.events, rec.sensor, p, start);

  std::printf("recording: %s (%s, %s), %llu events, %.6f .. %.6f s; first event at %lld us\n",
              path.c_str(), info.format.c_str(), egret::sensor_text(rec.sensor).c_str(),
              static_cast<unsigned long long>(span.events), span.first_us * 1e-6,
              span.last_us * 1e-6, static_cast<long long>(span.first_us));
  std::printf("window: %lld .. %lld us (%s), shifted to start at 0 ms: %.6g ms\n",
              static_cast<long long>(start), static_cast<long long>(start + p.window_us),
              given_start ? "from --start-us" : "from the recording's first event",
              static_cast<double>(p.window_us) * 1e-3);
  std::printf("preprocessing from %s%s%s\n", source.c_str(),
              overrides.empty() ? "" : "; overridden: ", overrides.c_str());
  std::printf("input: %s -> %zu input events; readout window %.6g .. %.6g ms\n",
              egret::describe_preprocessing(p, rec.sensor).c_str(), sample.input.size(),
              sample.readout_windows.front().first, sample.readout_windows.front().second);
  for (const auto& n : notes) std::printf("note: %s\n", n.c_str());
  return sample;
}

void write_input_csv(const std::string& path, const egret::InputStream<double>& input) {
  std::ostringstream os;
  os.precision(17);
  os << "t_ms,channel,value\n";
  for (const auto& e : input.events()) os << e.time << ',' << e.channel << ',' << e.value << '\n';
  egret::write_file_atomically(path, os.str());
  std::printf("wrote the input (%zu events) to %s\n", input.size(), path.c_str());
}

}  // namespace

int run_simulate(const Args& args, const std::string& command_line) {
  const bool has_config = args.options.count("--config") > 0;
  const bool has_checkpoint = args.options.count("--checkpoint") > 0;
  if (has_config == has_checkpoint)
    throw std::invalid_argument("simulate needs --config FILE or --checkpoint CKPT.h5 (one)");
  if (!args.options.count("--input")) throw std::invalid_argument("simulate needs --input FILE");
  if (args.options.count("--trace"))
    egret::cli::check_output_file(args.options.at("--trace"), "--trace");
  if (args.options.count("--dump-input"))
    egret::cli::check_output_file(args.options.at("--dump-input"), "--dump-input");
  std::string config_text, config_origin;
  egret::Checkpoint checkpoint;
  egret::NetworkConfig cfg;
  std::string checkpoint_path;
  if (has_checkpoint) {
    checkpoint_path = args.options.at("--checkpoint");
    checkpoint = egret::read_checkpoint(checkpoint_path);
    config_text = checkpoint.config_text;
    config_origin = checkpoint_path + " (configuration)";
    cfg = egret::checkpoint_network_config(checkpoint_path, checkpoint);
  } else {
    config_origin = args.options.at("--config");
    config_text = egret::read_text_file(config_origin, "configuration file");
    cfg = egret::parse_network_config(config_text, config_origin);
  }
  if (args.options.count("--end-time"))
    cfg.end_time = parse_time(args.options.at("--end-time"), "--end-time");
  if (args.options.count("--precision"))
    cfg.precision = egret::parse_precision(args.options.at("--precision"), "--precision");
  // A camera recording (any format the readers detect) or CSV events.
  const std::string input_path = args.options.at("--input");
  bool recording = false;
  if (!ends_with(input_path, ".csv")) {
    try {
      recording = !egret::detect_camera_format(input_path).empty();
    } catch (const egret::CameraFileError&) {  // unreadable: the CSV reader says so
    }
  }
  std::optional<egret::Sample<double>> sample;
  egret::InputStream<double> input;
  if (recording) {
    sample =
        prepare_recording_input(args, input_path, cfg, config_origin, config_text, has_checkpoint);
    input = sample->input;
  } else {
    for (const char* k : kRecordingOptions)
      if (args.options.count(k))
        throw std::invalid_argument(std::string(k) + " applies to a camera recording; " +
                                    input_path + " is read as CSV events (t_ms,channel[,value])");
    input = egret::read_input_events_csv(input_path, cfg.input_channels);
    // A run without input is useful (a network's resting activity), a file that meant to hold
    // events and holds none is a mistake: said, not refused.
    if (input.size() == 0)
      std::fprintf(stderr, "egret: warning: %s: no events: the network runs without input\n",
                   input_path.c_str());
  }
  if (args.options.count("--dump-input")) write_input_csv(args.options.at("--dump-input"), input);
  const std::string trace_path = args.options.count("--trace") ? args.options.at("--trace") : "";
  const bool hdf5 = ends_with(trace_path, ".h5") || ends_with(trace_path, ".hdf5");
  if (!trace_path.empty() && !hdf5 && !ends_with(trace_path, ".csv"))
    throw std::invalid_argument("--trace must end in .h5 / .hdf5 (HDF5) or .csv, got '" +
                                trace_path + "'");
  const SimulateRun run{args,
                        cfg,
                        config_text,
                        command_line,
                        trace_path,
                        hdf5,
                        has_checkpoint ? &checkpoint : nullptr,
                        checkpoint_path,
                        sample ? &*sample : nullptr};
  return egret::with_precision(cfg.precision, [&](auto scalar) {
    return simulate_in_precision<decltype(scalar)>(run, input);
  });
}

}  // namespace egret::cli
