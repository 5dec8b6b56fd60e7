// `egret simulate`: one input stream through a configured network, with an optional trace.
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "cli/commands.hpp"
#include "cli/summary.hpp"
#include "io/config/network_config.hpp"
#include "io/event_csv.hpp"
#include "io/hdf5/trace_file.hpp"

namespace egret::cli {

namespace {

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

}  // namespace

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

}  // namespace egret::cli
