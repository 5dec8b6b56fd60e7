// The `egret` command line: the usage, the parsing of arguments, and the dispatch to the
// commands (one file each: cli/*_command.cpp).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/interrupt.hpp"
#include "sim/precision_cast.hpp"

namespace {

using egret::Index;
using egret::cli::parse_positive_int;
using egret::cli::parse_time;

const char* kUsage = R"(egret — event-driven simulator for activity-sparse recurrent networks

usage:
  egret [gesture] [--dataset DIR] [--out DIR] [--full] [--seeds 3,4,5]
                  [--models egret,paper,dense_gru] [--epochs N] [--threads T] [--precision P]
                  [--units N] [--frame-units N] [--users TRAIN,TEST] [--lightings-per-user L]
                  [--augment on|off] [--layer LAYER.json] [--state-regularizer W]
                  [--activity-regularizer W,HZ]
  egret [gesture] --resume DIR [--threads T]
      The main job: DVS gesture classification, the EGRU paper's Table 1 analog. Generates the
      synthetic DVS128 Gesture-style set (users 01-23 train, 24-29 held out, 2 lighting
      conditions each; not the real data; --full: all 5 conditions and larger models) if
      absent, or reads the real one (--dataset: userNN_*.aedat, labels, trials_to_*.txt). Trains
      three models for every seed: egret (a continuous-time EGRU with exact gradients on 5 ms
      event bins), paper (the EGRU paper's two discrete EGRU layers on 25 ms frames, 32x32
      max-pool, 10 ms denoise, its regularisers) and dense_gru (two dense GRU layers on the
      same frames), all with the same augmentation (rotation, zoom, shift); reports per model
      parameters, effective MACs/ACs, held-out accuracy (mean ± sd over seeds), activity and
      backward sparsity and estimated energy (Loihi, CMOS). Writes results.json, table1.csv and
      per model and seed checkpoint.h5, trace.h5, training_log.csv to out/dvs_gesture.
      --layer: the egret model's layer (default examples/networks/dvs_gesture_layer.json);
      --state-regularizer W, --activity-regularizer W,HZ: the egret model's regularisers.
      Ctrl-C (or SIGTERM) keeps the finished runs and the running one's last complete epoch
      (exit status 130/143); --resume DIR goes on with the options in DIR/job.json and ends
      with the results of a job that never stopped.
  egret demo [--samples S] [--threads T] [--end-time MS] [--precision P]
      A two-layer continuous-time EGRU (32 input channels, 64 and 32 units) on a synthetic
      sweeping event stream, S samples (default 8) in parallel: events per layer, activity,
      wall time, events/s.
  egret simulate (--config NET.json | --checkpoint CKPT.h5) --input EVENTS.csv|RECORDING
                 [--trace OUT.h5|OUT.csv] [--end-time MS] [--max-events N] [--precision P]
                 [--dump-input OUT.csv] [--window-us N] [--start-us N] [--crop X,Y,W,H]
                 [--pooling F] [--bin-us N] [--denoise-us N] [--coalesce sum|binary]
      Simulate one input stream through a network: a configuration (--config) or a trained
      checkpoint's (--checkpoint, e.g. out/dvs_gesture/checkpoint.h5). The input is CSV lines
      `t_ms,channel[,value]`, or a window of an event-camera recording in any format egret
      reads (see inspect), prepared as the gesture job prepares its samples: the window of
      --window-us from --start-us (default: the recording's first event; timestamps are the
      recording's own, and the summary prints them), shifted to start at 0 ms, cropped to
      --crop (e.g. 96,56,128,128: 128x128 of a 320x240 sensor), denoised (--denoise-us, 0:
      off), pooled by --pooling, events coalesced per channel and --bin-us bin (--coalesce:
      the count or 1), read out over the last 80 % (readout_from 0.2). The defaults are
      pooling 0.25, bin 5000 us, window 1500000 us, no denoise, sum; with --checkpoint they
      come from its "task" section, and options override them (the summary says which). The
      pooled sensor x 2 polarities must equal the network's input channels. Prints a summary
      and the readouts; --dump-input writes the prepared input (t_ms,channel,value); with
      --trace, writes every emitted event: HDF5 with SONATA spikes, values, metrics,
      snapshots and provenance (.h5, streamed while the run goes on), or CSV lines
      time_ms,layer,unit,value (.csv). --max-events: the run's event budget (default the
      configuration's simulation.max_events, 100000000); a run that needs more stops with an
      error and writes no trace.
  egret classify --checkpoint CKPT.h5 RECORDING [--labels LABELS.csv] [--crop X,Y,W,H]
                 [--json OUT.json] [--threads T]
      Classify a recording with a trained checkpoint (it needs a readout) and the
      preprocessing its "task" section describes: with a DvsGesture label file
      (class,startTime_usec,endTime_usec) one window per label, from its start, window_us long
      and clipped to its end; without, consecutive windows from the first event. Prints per
      window its start and end, the true and the predicted class (DVS gesture names) and the
      softmax maximum, then the accuracy; --json writes the same.
  egret emulate --frames IMAGES.txt --out EVENTS.aedat
      Run the DVS sensor model (contrast thresholds, refractory period, leak, shot noise) on a
      sequence of PNG frames listed as '<seconds> <path>' lines; write AEDAT 3.1.
  egret inspect TRACE.h5 | RECORDING
      Summary of a trace file per layer (events, rate, activity sparsity, time span, and the
      NeuroBench counts: Effective_MACs, Effective_ACs, Dense, MembraneUpdates), or of an
      event-camera recording (format, sensor, events, time span, ON share) in any of these
      formats, found by header and extension: AEDAT 2.0, AEDAT 3.1, AEDAT 4.0,
      Prophesee EVT 2.0, Prophesee EVT 3.0, Prophesee DAT, N-MNIST .bin, .npy event arrays
      and HDF5 event arrays (fields x, y, p, t).
  egret estimate TRACE.h5 [--profile NAME|FILE] [--json OUT.json]
      Energy and latency per sample and per layer on a hardware profile (default
      loihi_davies2018; built in: loihi_davies2018, loihi_sanafe2025, cmos45_horowitz2014,
      kerasspiking_{cpu,gpu,arm,loihi,spinnaker,spinnaker2}; or a profile file of your own,
      docs/metrics.md). Prints a table, writes JSON with --json, adds /egret/estimates/NAME
      to the trace.
  egret train --config TRAIN.json [--out DIR] [--epochs N] [--threads T] [--precision P]
  egret train --resume DIR/checkpoint.h5 [--out DIR] [--epochs N]
      Train a network of any cell family with a backward pass on the built-in delay-copy task
      (the continuous-time EGRU with exact event-based gradients, the tick families such as
      discrete_egru, lif, bmru, surnn, sugru, su_snn, ds_gru and spiking_gated with BPTT;
      examples/delay_copy*.json, one per family); prints progress, writes a checkpoint, the
      training log, the held-out trace and the data for the figure
      (scripts/plot_delay_copy.py). A checkpoint is written every output.checkpoint_every
      epochs (default 1) and on Ctrl-C or SIGTERM (the last complete epoch; exit status
      130/143); --resume continues from it bit for bit.
  --precision float|double: the scalar of the run (default: the configuration's "precision",
      float if absent; the main job: float). Double is for verification; files written hold
      float64 either way.
  egret help | --help
  egret --version
)";

// One command's part of kUsage: its "  egret <command>" lines and their description, up to the
// next command (gesture's line reads "egret [gesture]"); plus the --precision note for commands
// that take it. Empty for an unknown command.
std::string command_usage(const std::string& command) {
  std::istringstream in(kUsage);
  std::string line, block, precision;
  bool inside = false, in_precision = false;
  const std::string head = "  egret " + command, gesture_head = "  egret [gesture]";
  auto starts = [&line](const std::string& h) {
    return line.rfind(h, 0) == 0 && (line.size() == h.size() || line[h.size()] == ' ');
  };
  while (std::getline(in, line)) {
    const bool command_line = line.rfind("  egret ", 0) == 0;
    if (line.rfind("  --precision", 0) == 0)
      in_precision = true;
    else if (command_line)
      in_precision = false;
    if (in_precision) precision += line + "\n";
    if (command_line || in_precision)
      inside = starts(head) || (command == "gesture" && starts(gesture_head));
    if (inside && !in_precision) block += line + "\n";
  }
  if (block.empty()) return "";
  if (block.find("--precision") != std::string::npos) block += precision;
  return "usage:\n" + block;
}

// Options take a value; `flags` (e.g. --full) stand alone and are stored with the value "1".
egret::cli::Args parse_args(int argc, char** argv, const std::vector<std::string>& known_options,
                            const std::vector<std::string>& flags) {
  egret::cli::Args a;
  int i = 1;
  if (i < argc && argv[i][0] != '-') a.command = argv[i++];
  for (; i < argc; ++i) {
    const std::string key = argv[i];
    if (key.rfind("--", 0) != 0) {
      a.positional.push_back(key);
      continue;
    }
    bool flag = false;
    for (const auto& f : flags) flag = flag || key == f;
    if (flag) {
      a.options[key] = "1";
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

}  // namespace

namespace egret::cli {

long parse_positive_int(const std::string& s, const char* what) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (end != s.c_str() + s.size() || v <= 0)
    throw std::invalid_argument(std::string(what) + " must be a positive integer, got '" + s + "'");
  return v;
}

double parse_nonnegative(const std::string& s, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !(v >= 0) || !std::isfinite(v))
    throw std::invalid_argument(std::string(what) + " must be a finite number >= 0, got '" + s +
                                "'");
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
    // `egret COMMAND --help` (or -h, anywhere after the command): that command's usage.
    for (int i = 2; argc >= 2 && argv[1][0] != '-' && i < argc; ++i)
      if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
        const std::string usage = command_usage(argv[1]);
        if (usage.empty())
          throw std::invalid_argument("unknown command '" + std::string(argv[1]) +
                                      "' (see egret --help)");
        std::cout << usage;
        return 0;
      }
    if (argc >= 2 && std::string(argv[1]) == "--version") {
      std::cout << "egret " << EGRET_VERSION << "\n";
      return 0;
    }
    const egret::cli::Args args = parse_args(argc, argv,
                                             {"--samples",
                                              "--threads",
                                              "--end-time",
                                              "--config",
                                              "--input",
                                              "--trace",
                                              "--out",
                                              "--epochs",
                                              "--resume",
                                              "--dataset",
                                              "--frames",
                                              "--max-events",
                                              "--profile",
                                              "--json",
                                              "--precision",
                                              "--layer",
                                              "--state-regularizer",
                                              "--activity-regularizer",
                                              "--seeds",
                                              "--models",
                                              "--units",
                                              "--frame-units",
                                              "--users",
                                              "--lightings-per-user",
                                              "--augment",
                                              "--checkpoint",
                                              "--labels",
                                              "--crop",
                                              "--pooling",
                                              "--bin-us",
                                              "--denoise-us",
                                              "--coalesce",
                                              "--window-us",
                                              "--start-us",
                                              "--dump-input"},
                                             {"--full"});
    if (!args.positional.empty() && args.command != "inspect" && args.command != "estimate" &&
        args.command != "classify")
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
    if (args.command == "demo") return egret::cli::run_demo(args);
    if (args.command == "simulate") return egret::cli::run_simulate(args, command_line);
    if (args.command == "inspect") return egret::cli::run_inspect(args);
    if (args.command == "classify") return egret::cli::run_classify(args);
    if (args.command == "estimate") {
      if (args.positional.size() != 1)
        throw std::invalid_argument("estimate: expected one trace file (egret estimate TRACE.h5)");
      return egret::cli::run_estimate(args.positional.front(), args.options);
    }
    if (args.command == "emulate") return egret::cli::run_emulate(args);
    if (args.command == "train") return egret::cli::run_train(with_command_line());
    throw std::invalid_argument("unknown command '" + args.command + "' (see egret --help)");
  } catch (const egret::cli::Interrupted& e) {  // saved and explained: the usual exit status
    return 128 + e.signal;
  } catch (const std::exception& e) {
    std::cerr << "egret: error: " << e.what() << "\n";
    return 1;
  }
}
