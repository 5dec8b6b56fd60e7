// `egret train`: train a network (any cell family with a backward pass) on a built-in task,
// with progress output, a training log, checkpoints, and (delay_copy) the data for the figure.
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>

#include "cli/commands.hpp"
#include "cli/gesture_job_state.hpp"
#include "cli/interrupt.hpp"
#include "cli/training_checkpoint.hpp"
#include "cli/training_loop.hpp"
#include "io/config/train_config.hpp"
#include "io/event_csv.hpp"
#include "io/hdf5/checkpoint.hpp"
#include "io/hdf5/trace_file.hpp"

namespace egret::cli {
namespace {

// The layer's per-unit parameters (one value per unit: thresholds, biases, ...) as
// name,unit,value rows, whatever its family.
template <class Scalar>
std::string unit_parameters_csv(const Layer<Scalar>& layer) {
  std::ostringstream os;
  os.precision(17);
  os << "name,unit,value\n";
  os << "type,0," << layer.type_name() << '\n';  // the family, for the figure's title
  for (const auto& e : layer.parameters()) {
    if (e.value.cols() != 1 || e.value.rows() != layer.units()) continue;
    for (Index n = 0; n < layer.units(); ++n)
      os << e.spec.name << ',' << n << ',' << e.value(n, 0) << '\n';
  }
  return os.str();
}

// Four held-out trials (one per pattern for 2 bits) simulated with a fine grid of snapshots:
// the last layer's primary state variable (sim/layer.hpp LayerState: c for EGRU, v for LIF) and
// o(t) per unit, the events, the inputs, and the trial's windows, as CSV files that
// scripts/plot_delay_copy.py turns into the figure.
template <class Scalar>
void write_figure_data(const std::string& dir, const Network<Scalar>& trained,
                       const std::vector<Sample<Scalar>>& test, const DelayCopyConfig& dc) {
  std::ostringstream states, events, inputs, trials;
  states.precision(10);
  events.precision(12);
  inputs.precision(12);
  trials.precision(12);
  const std::string state_name = trained.layer(trained.size() - 1).state_at(0).primary_name();
  states << "trial,t_ms,unit," << state_name << ",o\n";
  events << "trial,t_ms,unit,value\n";
  inputs << "trial,t_ms,channel\n";
  trials << "trial,pattern,cue_ms,quiet_begin_ms,quiet_end_ms,recall_begin_ms,recall_end_ms,"
            "end_ms,readout\n";
  const std::size_t patterns = std::size_t{1} << dc.bits;
  for (std::size_t k = 0; k < std::min(patterns, test.size()) && k < 4; ++k) {
    const Sample<Scalar>& s = test[k];
    Network<Scalar> net = trained.clone();
    SimOptions<Scalar> opt = s.options();
    for (int i = 0; 0.05 * i <= s.end_time; ++i) opt.snapshot_times.push_back(Scalar(0.05 * i));
    const auto r = simulate(net, s.input, opt);
    for (const auto& snap : r.snapshots) {
      const auto& c = snap.layers.back().at(state_name);
      const auto& o = snap.layers.back().at("o");
      for (std::size_t n = 0; n < c.size(); ++n)
        states << k << ',' << snap.time << ',' << n << ',' << c[n] << ',' << o[n] << '\n';
    }
    for (const auto& e : r.trace)
      if (e.layer == net.size() - 1)
        events << k << ',' << e.time << ',' << e.unit << ',' << e.value << '\n';
    for (const auto& e : s.input.events()) inputs << k << ',' << e.time << ',' << e.channel << '\n';
    std::string pattern;
    for (double b : s.targets.values.back()) pattern += b > 0.5 ? '1' : '0';
    const double cue = s.input.events().back().time;
    const auto& quiet = s.readout_windows.front();
    const auto& recall = s.readout_windows.back();
    std::string readout;
    for (double v : r.readouts.back().logits)
      readout += (readout.empty() ? "" : " ") + std::to_string(v);
    trials << k << ',' << pattern << ',' << cue << ',' << quiet.first << ',' << quiet.second << ','
           << recall.first << ',' << recall.second << ',' << s.end_time << ",\"" << readout
           << "\"\n";
  }
  write_file_atomically(dir + "/figure_states.csv", states.str());
  write_file_atomically(dir + "/figure_events.csv", events.str());
  write_file_atomically(dir + "/figure_inputs.csv", inputs.str());
  write_file_atomically(dir + "/figure_trials.csv", trials.str());
  write_file_atomically(dir + "/figure_parameters.csv", unit_parameters_csv(trained.layer(0)));
}

// The held-out trials through the trained network, as one HDF5 trace (one sample per trial,
// labelled with the trial's pattern).
template <class Scalar>
void write_test_trace(const std::string& path, const Network<Scalar>& trained,
                      const std::vector<Sample<Scalar>>& test, const std::string& config_text,
                      std::uint64_t seed, const std::string& command_line) {
  std::vector<const Sample<Scalar>*> samples;
  std::vector<std::int64_t> patterns;
  for (const auto& s : test) {
    std::int64_t pattern = 0;
    const auto& bits = s.targets.values.back();
    for (std::size_t b = 0; b < bits.size(); ++b)
      if (bits[b] > 0.5) pattern |= std::int64_t{1} << b;
    samples.push_back(&s);
    patterns.push_back(pattern);
  }
  write_samples_trace(path, trained, samples, patterns,
                      {config_text, static_cast<std::int64_t>(seed), command_line});
}

// How to go on after an interrupt: the checkpoint and the command line's overrides of the
// configuration stored in it (the epochs and precision; the folder is the checkpoint's).
std::string resume_command(const Options& options, const TrainRunConfig& cfg) {
  std::string c = program_name(options) + " train --resume " + cfg.out_dir + "/checkpoint.h5";
  if (options.count("--epochs")) c += " --epochs " + options.at("--epochs");
  if (options.count("--precision")) c += " --precision " + options.at("--precision");
  return c;
}

// A checkpoint of the DVS gesture main job (its configuration has a "task" section named
// dvs_gesture) is resumed by the job, not by `egret train`: say so, and how.
void refuse_main_job_checkpoint(const std::string& file, const std::string& config_text) {
  if (checkpoint_task_name(config_text) != "dvs_gesture") return;
  throw std::invalid_argument(
      file + ": a checkpoint of the DVS gesture main job (" + checkpoint_task_run(config_text) +
      "), not of egret train; resume the job with: egret --resume " + main_job_directory(file));
}

// Trains in the configuration's precision; checkpoints hold float64 in both.
template <class Scalar>
void train_in_precision(const Options& options, const TrainRunConfig& cfg,
                        const std::string& config_text, const Checkpoint& resume) {
  const Network<Scalar> initial = build_network<Scalar>(cfg.network);
  const auto train = delay_copy_trials<Scalar>(cfg.delay_copy, cfg.train_trials, cfg.task_seed);
  const auto test = delay_copy_trials<Scalar>(cfg.delay_copy, cfg.test_trials, cfg.task_seed + 1);
  Trainer<Scalar> trainer(initial, cfg.training);
  int first_epoch = 1;
  if (options.count("--resume")) {
    restore_training_state(trainer, resume, options.at("--resume"));
    first_epoch = resume.epoch + 1;
  }

  std::printf(
      "egret train: task %s (%d bits), %d training and %d held-out trials, %zu trainable "
      "parameters in %s, %s lr %g, batch %d, up to %d epochs\n",
      cfg.task.c_str(), cfg.delay_copy.bits, cfg.train_trials, cfg.test_trials,
      trainer.parameters().size(), precision_name(cfg.network.precision),
      cfg.training.optimizer.kind.c_str(), cfg.training.optimizer.learning_rate,
      cfg.training.batch_size, cfg.training.epochs);
  TrainLoopOptions loop;
  loop.first_epoch = first_epoch;
  loop.epochs = cfg.training.epochs;
  loop.stop_at_test_accuracy = cfg.stop_at_test_accuracy;
  loop.stop_patience = cfg.stop_patience;
  loop.checkpoint_every = cfg.checkpoint_every;
  loop.rate_growth_limit = cfg.rate_growth_limit;
  loop.out_dir = cfg.out_dir;
  loop.config_text = config_text;
  loop.resume_command = resume_command(options, cfg);
  if (options.count("--resume")) {
    loop.resumed = parse_loop_state(resume.loop_state, options.at("--resume"));
    std::error_code ec;
    const auto resume_dir = std::filesystem::path(options.at("--resume")).parent_path();
    loop.continue_log =
        std::filesystem::equivalent(resume_dir.empty() ? "." : resume_dir, cfg.out_dir, ec);
  }
  TrainLoopResult result;
  {
    const InterruptGuard interrupts;  // Ctrl-C: the last complete epoch is saved
    result = run_training_loop(trainer, train, test, loop);
  }
  const BatchStats& test_stats = result.test;
  write_figure_data(cfg.out_dir, trainer.network(), test, cfg.delay_copy);
  write_test_trace(cfg.out_dir + "/trace.h5", trainer.network(), test, config_text,
                   cfg.training.seed,
                   options.count("command_line") ? options.at("command_line") : "");
  std::printf("final held-out bitwise accuracy: %.1f%% (%d of %d bits)\n",
              100 * test_stats.accuracy(), test_stats.correct, test_stats.total);
  std::printf(
      "wrote %s/checkpoint.h5, trace.h5 (held-out trials), training_log.csv, figure_*.csv\n",
      cfg.out_dir.c_str());
}

}  // namespace

int run_train(const Options& options) {
  if (!options.count("--config") && !options.count("--resume"))
    throw std::invalid_argument("train needs --config FILE (or --resume CHECKPOINT)");
  Checkpoint resume;
  std::string config_text;
  std::string origin;
  if (options.count("--resume")) {
    resume = read_checkpoint(options.at("--resume"));
    refuse_main_job_checkpoint(options.at("--resume"), resume.config_text);
    config_text = resume.config_text;
    origin = options.at("--resume") + " (configuration)";
  } else {
    origin = options.at("--config");
    config_text = read_text_file(origin, "training configuration");
  }
  TrainRunConfig cfg = parse_train_config(config_text, origin);
  if (options.count("--out")) {
    cfg.out_dir = options.at("--out");
  } else if (options.count("--resume")) {  // on in the checkpoint's folder
    const auto dir = std::filesystem::path(options.at("--resume")).parent_path();
    cfg.out_dir = dir.empty() ? "." : dir.string();
  }
  if (options.count("--epochs"))
    cfg.training.epochs = parse_positive_int(options.at("--epochs"), "--epochs");
  if (options.count("--threads"))
    cfg.training.threads = parse_positive_int(options.at("--threads"), "--threads");
  check_output_directory(cfg.out_dir, options.count("--out") ? "--out" : "output directory");

  if (options.count("--precision"))
    cfg.network.precision = parse_precision(options.at("--precision"), "--precision");
  with_precision(cfg.network.precision, [&](auto scalar) {
    train_in_precision<decltype(scalar)>(options, cfg, config_text, resume);
  });
  return 0;
}

}  // namespace egret::cli
