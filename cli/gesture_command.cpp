// The main job: DVS gesture classification, the EGRU paper's Table 1 analog. Uses the real DVS128
// Gesture directory if given (--dataset), else generates the synthetic set (if absent); trains
// each model of cli/gesture_models.hpp (egret's continuous EGRU on the events, the paper's two
// discrete EGRU layers on frames, a dense GRU) for every seed on the training users, measures it
// on the held-out users (accuracy, NeuroBench counts, activity and backward sparsity, estimated
// energy) and reports one row per model: printed, results.json, table1.csv
// (scripts/plot_gesture.py draws them).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "camera/datasets/dvs_gesture.hpp"
#include "camera/datasets/synthetic_gesture_dataset.hpp"
#include "cli/builtin_layers.hpp"
#include "cli/commands.hpp"
#include "cli/gesture_job_state.hpp"
#include "cli/gesture_models.hpp"
#include "cli/gesture_report.hpp"
#include "cli/interrupt.hpp"
#include "cli/training_checkpoint.hpp"
#include "cli/training_loop.hpp"
#include "io/config/network_config.hpp"
#include "io/event_csv.hpp"
#include "io/hdf5/checkpoint.hpp"
#include "io/hdf5/trace_file.hpp"

namespace egret::cli {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

struct GestureJob {
  std::string dataset;   // empty: the synthetic set
  std::string data_dir;  // the folder read: the dataset or the synthetic set
  std::string out_dir = "out/dvs_gesture";
  int epochs = 0;  // 0: each model's own
  int threads = 0;
  std::vector<std::uint64_t> seeds = {3, 4, 5};
  std::vector<std::string> models = {"egret", "paper", "dense_gru"};
  GestureModelSizes sizes;
  SyntheticGestureConfig synthetic;
  GestureAugmentation augmentation;
  Precision precision = Precision::kFloat;
  std::string layer_text = builtin::kDvsGestureLayer;  // --layer FILE
  std::string layer_origin = "examples/networks/dvs_gesture_layer.json";
  const StateRegularizer* state = nullptr;        // --state-regularizer: the egret model's
  const ActivityRegularizer* activity = nullptr;  // --activity-regularizer: likewise
  StateRegularizer state_value;
  ActivityRegularizer activity_value;
  bool resuming = false;          // --resume: finished runs are read back, interrupted ones go on
  std::string program = "egret";  // as invoked, for the resume command
};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The checkpoint's configuration: the network as a configuration file (so that
// egret.Network.load_checkpoint rebuilds it) and the job in its "task" section, which
// `egret classify` reads to prepare a recording the same way.
std::string checkpoint_configuration(const GestureModel& m, const std::string& dataset,
                                     std::uint64_t seed, int epochs, Precision precision) {
  const GesturePipeline& p = m.pipeline;
  nlohmann::json cfg;
  cfg["input_channels"] = p.input_channels({128, 128});  // the DVS128, pooled
  cfg["layers"] = nlohmann::json::parse(m.layers_json);
  cfg["readout_classes"] = 11;
  cfg["seed"] = seed;
  cfg["precision"] = precision_name(precision);  // the precision it was trained in
  cfg["simulation"] = {{"dense_step", m.dense_step_ms}};
  nlohmann::json task = p.to_task_json();
  task["name"] = "dvs_gesture";
  task["model"] = m.name;
  task["dataset"] = dataset;
  task["epochs"] = epochs;
  cfg["task"] = task;
  return cfg.dump();
}

std::vector<Sample<double>> prepare(const std::vector<GestureSample>& gestures,
                                    const GesturePipeline& p) {
  std::vector<Sample<double>> out;
  out.reserve(gestures.size());
  for (const auto& g : gestures) out.push_back(gesture_sample(g, p));
  return out;
}

struct GestureData {
  std::vector<GestureSample> train, test;
};

// A run interrupted in training goes on from its checkpoint (if it has one: an interruption
// before its first checkpoint starts it afresh), appending to its log.
template <class Scalar>
void resume_run(Trainer<Scalar>& trainer, const std::string& dir, const std::string& config_text,
                TrainLoopOptions& loop) {
  const std::string file = dir + "/checkpoint.h5";
  if (!fs::exists(file)) return;
  const Checkpoint c = read_checkpoint(file);
  if (c.config_text != config_text)
    throw std::runtime_error(file +
                             ": written with other settings than this job's (job.json); move "
                             "it away, or start the job afresh without --resume");
  restore_training_state(trainer, c, file);
  loop.first_epoch = c.epoch + 1;
  loop.resumed = parse_loop_state(c.loop_state, file);
  loop.continue_log = true;
  std::printf("resuming from %s at epoch %d\n", file.c_str(), c.epoch);
}

// One model and seed: trains, writes its checkpoint, log and held-out trace into `dir`, and
// measures it; the measurements go to run.json too.
template <class Scalar>
GestureRun train_one(const GestureJob& job, const GestureModel& model, std::uint64_t seed,
                     const GestureData& data, const std::string& dir,
                     const std::string& command_line) {
  const int epochs = job.epochs > 0 ? job.epochs : model.epochs;
  const std::string config_text =
      checkpoint_configuration(model, job.data_dir, seed, epochs, job.precision);
  if (job.resuming)
    if (auto done = read_run_result(dir, config_text)) {
      std::printf(
          "\n== %s, seed %llu: finished before the interruption: held-out accuracy %.1f%% "
          "(%d of %d) ==\n",
          model.title.c_str(), static_cast<unsigned long long>(seed), 100 * done->accuracy(),
          done->correct, done->total);
      return *done;
    }
  const NetworkConfig ncfg =
      parse_network_config(config_text, "the " + model.name + " model", {"task"});
  const std::vector<Sample<Scalar>> test = cast_samples<Scalar>(prepare(data.test, model.pipeline));
  // With augmentation every epoch prepares its own view (before_epoch, below).
  std::vector<Sample<Scalar>> train =
      job.augmentation.enabled ? std::vector<Sample<Scalar>>(data.train.size())
                               : cast_samples<Scalar>(prepare(data.train, model.pipeline));
  TrainConfig tc;
  tc.loss = LossKind::kSoftmaxCrossEntropy;
  tc.batch_size = model.batch_size;
  tc.optimizer.learning_rate = model.learning_rate;
  tc.optimizer.clip_norm = 1.0;
  tc.threads = job.threads;
  tc.seed = seed;
  tc.train_time_constants = model.train_time_constants;
  tc.state = model.state;
  tc.activity = model.activity;
  tc.run = ncfg.run_settings();
  Trainer<Scalar> trainer(build_network<Scalar>(ncfg), tc);
  std::printf("\n== %s, seed %llu: %zu trainable parameters, %d epochs ==\n", model.title.c_str(),
              static_cast<unsigned long long>(seed), trainer.parameters().size(), epochs);
  std::fflush(stdout);
  TrainLoopOptions loop;
  loop.epochs = epochs;
  loop.out_dir = dir;
  loop.config_text = config_text;
  loop.resume_command = job.program + " --resume " + job.out_dir;
  if (job.resuming) resume_run(trainer, dir, config_text, loop);
  // A fresh random view of every training gesture each epoch, the same for every model.
  if (job.augmentation.enabled)
    loop.before_epoch = [&](int epoch) {
      std::mt19937_64 rng(seed * 1000003u + static_cast<std::uint64_t>(epoch));
      for (std::size_t i = 0; i < data.train.size(); ++i) {
        const SpatialAugmentation a = random_augmentation(job.augmentation, rng);
        train[i] = cast_sample<Scalar>(gesture_sample(data.train[i], model.pipeline, &a));
      }
    };
  const TrainLoopResult result = run_training_loop(trainer, train, test, loop);

  GestureRun run;
  run.model = model.name;
  run.title = model.title;
  run.seed = seed;
  run.correct = result.test.correct;
  run.total = result.test.total;
  run.parameters = trainer.parameters().size();
  run.backward_sparsity = result.last_backward_sparsity;
  run.train_seconds = result.seconds;
  run.test_accuracy = result.test_accuracy;
  std::vector<const Sample<Scalar>*> samples;
  std::vector<std::int64_t> labels;
  for (const auto& s : test) {
    samples.push_back(&s);
    labels.push_back(s.targets.labels.front());
  }
  const std::string trace = dir + "/trace.h5";
  const SamplesTraceSummary held_out = write_samples_trace(
      trace, trainer.network(), samples, labels,
      {config_text, static_cast<std::int64_t>(seed), command_line}, model.dense_step_ms);
  add_held_out_counts(run, held_out, samples.size(), sizeof(Scalar));
  add_energy_estimates(run, trace);
  write_run_result(dir, run, config_text);
  std::printf("%s, seed %llu: held-out accuracy %.1f%% (%d of %d)\n", model.name.c_str(),
              static_cast<unsigned long long>(seed), 100 * run.accuracy(), run.correct, run.total);
  return run;
}

// The synthetic set's folder names its generator version and size, so that a set written by an
// older egret or with other settings is never taken for this one.
std::string synthetic_directory(const SyntheticGestureConfig& c) {
  return "out/dvs_gesture_synthetic/v2_users" + std::to_string(c.train_users) + "+" +
         std::to_string(c.test_users) + "_lightings" + std::to_string(c.lightings_per_user) +
         "_seed" + std::to_string(c.seed);
}

std::string dataset_directory(GestureJob& job, Clock::time_point t_start) {
  if (!job.dataset.empty()) {
    std::printf("using the DVS128 Gesture directory %s\n", job.dataset.c_str());
    return job.dataset;
  }
  const std::string dir = synthetic_directory(job.synthetic);
  check_output_directory(dir, "synthetic dataset");
  if (fs::exists(fs::path(dir) / "trials_to_train.txt")) {
    std::printf("using the synthetic DVS gesture set in %s\n", dir.c_str());
    return dir;
  }
  std::printf(
      "generating the synthetic DVS gesture set in %s: users 01-%02d train, %d-%d held out, %d "
      "lighting conditions each (the real set's layout; NOT the real data)...\n",
      dir.c_str(), job.synthetic.train_users, 24, 23 + job.synthetic.test_users,
      job.synthetic.lightings_per_user);
  std::fflush(stdout);
  job.synthetic.threads = job.threads;
  // A line every 10 s or so: the set takes about a minute on 2 cores.
  auto last_line = Clock::now();
  const auto s = write_synthetic_gesture_dataset(dir, job.synthetic, [&](int written, int total) {
    if (written == total || seconds_since(last_line) < 10) return;
    last_line = Clock::now();
    std::printf("  %d of %d recordings, %.0f s\n", written, total, seconds_since(t_start));
    std::fflush(stdout);
  });
  std::printf("  %d recordings, %llu events, %.1f s\n", s.trials,
              static_cast<unsigned long long>(s.events), seconds_since(t_start));
  return dir;
}

// "WEIGHT,TARGET_HZ", both finite and >= 0.
ActivityRegularizer parse_activity_regularizer(const std::string& text) {
  const auto comma = text.find(',');
  if (comma == std::string::npos)
    throw std::invalid_argument("--activity-regularizer: expected WEIGHT,TARGET_HZ, got '" + text +
                                "'");
  ActivityRegularizer a;
  a.weight = parse_nonnegative(text.substr(0, comma), "--activity-regularizer weight");
  a.target_hz = parse_nonnegative(text.substr(comma + 1), "--activity-regularizer target");
  return a;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

std::string read_layer_option(const std::string& path) {
  const std::string text = read_text_file(path, "layer configuration");
  bool object = false;
  try {
    object = nlohmann::json::parse(text).is_object();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(path + ": not JSON: " + e.what());
  }
  if (!object) throw std::invalid_argument(path + ": expected a layer configuration object");
  return text;
}

// "TRAIN,TEST" user counts of the synthetic set.
void parse_users(const std::string& text, SyntheticGestureConfig& c) {
  const auto parts = split_commas(text);
  if (parts.size() != 2)
    throw std::invalid_argument("--users: expected TRAIN,TEST (e.g. 23,6), got '" + text + "'");
  c.train_users = static_cast<int>(parse_positive_int(parts[0], "--users train"));
  c.test_users = static_cast<int>(parse_positive_int(parts[1], "--users test"));
  if (c.train_users > 23 || c.test_users > 6)
    throw std::invalid_argument(
        "--users: at most 23 training and 6 held-out users (the real "
        "set's split), got '" +
        text + "'");
}

GestureJob parse_job(const Options& o) {
  GestureJob job;
  if (o.count("--full")) {  // the large version: the real set's size and the paper's epochs
    job.sizes.full = true;
    job.sizes.frame_units = 512;
    job.sizes.egret_units = 128;
    job.synthetic.lightings_per_user = 5;
  }
  if (o.count("--dataset")) job.dataset = o.at("--dataset");
  if (o.count("--out")) job.out_dir = o.at("--out");
  if (o.count("--epochs"))
    job.epochs = static_cast<int>(parse_positive_int(o.at("--epochs"), "--epochs"));
  if (o.count("--threads"))
    job.threads = static_cast<int>(parse_positive_int(o.at("--threads"), "--threads"));
  if (o.count("--precision")) job.precision = parse_precision(o.at("--precision"), "--precision");
  if (o.count("--seeds")) {
    job.seeds.clear();
    for (const auto& s : split_commas(o.at("--seeds")))
      job.seeds.push_back(static_cast<std::uint64_t>(parse_positive_int(s, "--seeds")));
  }
  if (o.count("--models")) {
    job.models = split_commas(o.at("--models"));
    if (job.models.empty())
      throw std::invalid_argument("--models: name at least one of egret, paper, dense_gru");
    for (const auto& m : job.models)
      if (m != "egret" && m != "paper" && m != "dense_gru")
        throw std::invalid_argument("--models: unknown model '" + m +
                                    "' (egret, paper, dense_gru)");
  }
  if (o.count("--units"))
    job.sizes.egret_units = static_cast<int>(parse_positive_int(o.at("--units"), "--units"));
  if (o.count("--frame-units"))
    job.sizes.frame_units =
        static_cast<int>(parse_positive_int(o.at("--frame-units"), "--frame-units"));
  if (o.count("--users")) parse_users(o.at("--users"), job.synthetic);
  if (o.count("--lightings-per-user"))
    job.synthetic.lightings_per_user =
        static_cast<int>(parse_positive_int(o.at("--lightings-per-user"), "--lightings-per-user"));
  if (o.count("--augment")) {
    const std::string& a = o.at("--augment");
    if (a != "on" && a != "off")
      throw std::invalid_argument("--augment: on or off, got '" + a + "'");
    job.augmentation.enabled = a == "on";
  }
  if (o.count("--layer")) {
    job.layer_origin = o.at("--layer");
    job.layer_text = read_layer_option(job.layer_origin);
  }
  if (o.count("--state-regularizer")) {
    job.state_value.weight = parse_nonnegative(o.at("--state-regularizer"), "--state-regularizer");
    job.state = &job.state_value;
  }
  if (o.count("--activity-regularizer")) {
    job.activity_value = parse_activity_regularizer(o.at("--activity-regularizer"));
    job.activity = &job.activity_value;
  }
  return job;
}

std::vector<GestureModel> selected_models(const GestureJob& job) {
  std::vector<GestureModel> out;
  for (GestureModel m : gesture_models(job.sizes, job.layer_text)) {
    bool wanted = false;
    for (const auto& name : job.models) wanted = wanted || name == m.name;
    if (!wanted) continue;
    if (m.name == "egret" && job.state) m.state = *job.state;
    if (m.name == "egret" && job.activity) m.activity = *job.activity;
    out.push_back(m);
  }
  return out;
}

// The first model's first seed is the job's headline network: its checkpoint, trace and log are
// copied to the output folder itself (where `egret classify` and the figures look by default).
void copy_headline(const std::string& from_dir, const std::string& out_dir) {
  for (const char* f : {"checkpoint.h5", "trace.h5", "training_log.csv"}) {
    const fs::path to = fs::path(out_dir) / f, tmp = fs::path(out_dir) / (std::string(f) + ".tmp");
    fs::copy_file(fs::path(from_dir) / f, tmp, fs::copy_options::overwrite_existing);
    fs::rename(tmp, to);
  }
}

void write_figure_inputs(const GestureSample& g, const GesturePipeline& p,
                         const std::string& out_dir) {
  std::ostringstream inputs;
  inputs << "t_ms,channel,value\n";
  const Sample<double> sample = gesture_sample(g, p);  // alive through the loop
  for (const auto& e : sample.input.events())
    inputs << e.time << ',' << e.channel << ',' << e.value << '\n';
  write_file_atomically(out_dir + "/figure_inputs.csv", inputs.str());
}

std::string settings_json(const GestureJob& job, const std::string& dir, const GestureData& data) {
  nlohmann::json s;
  s["dataset"] = dir;
  s["synthetic"] = job.dataset.empty();
  s["training_samples"] = data.train.size();
  s["held_out_samples"] = data.test.size();
  s["seeds"] = job.seeds;
  s["augmentation"] = job.augmentation.enabled;
  s["precision"] = precision_name(job.precision);
  s["full"] = job.sizes.full;
  return s.dump();
}

// `egret --resume DIR`: the options of the job in DIR (its job.json), which the command line may
// not change (but for --threads).
Options resumed_job_options(const Options& given) {
  const std::string& target = given.at("--resume");
  const std::string dir = find_job_directory(target);
  if (dir.empty()) {
    std::string hint;
    if (fs::is_regular_file(target) &&
        checkpoint_task_name(read_checkpoint(target).config_text) != "dvs_gesture")
      hint = "; it is a checkpoint of egret train: resume it with egret train --resume " + target;
    throw std::invalid_argument("--resume " + target +
                                ": no job.json in it or a folder above it, so not the output of "
                                "the main job (egret [--out DIR])" +
                                hint);
  }
  for (const auto& [key, value] : given)
    if (key != "--resume" && key != "--threads" && key != "command_line")
      throw std::invalid_argument("--resume takes the job's options from " + dir + "/job.json; " +
                                  key + " cannot change them (only --threads can be given)");
  Options o = read_job_options(dir);
  if (given.count("--threads")) o["--threads"] = given.at("--threads");
  if (given.count("command_line")) o["command_line"] = given.at("command_line");
  std::printf("resuming the main job in %s (its options: %s/job.json)\n", dir.c_str(), dir.c_str());
  return o;
}

[[noreturn]] void stop_between_runs(const GestureJob& job) {
  std::printf("\n%s between runs: the finished runs are kept\nresume with: %s --resume %s\n",
              signal_name(interrupt_signal()), job.program.c_str(), job.out_dir.c_str());
  std::fflush(stdout);
  throw Interrupted(interrupt_signal());
}

}  // namespace

int run_gesture(const Options& given) {
  const Options options = given.count("--resume") ? resumed_job_options(given) : given;
  GestureJob job = parse_job(options);
  job.resuming = given.count("--resume") > 0;
  job.program = program_name(given);
  check_output_directory(job.out_dir, "--out");
  write_job_options(job.out_dir, options);
  const auto t_start = Clock::now();
  const std::string dir = dataset_directory(job, t_start);
  job.data_dir = dir;
  std::fflush(stdout);
  GestureData data{load_gesture_split(dir, "train"), load_gesture_split(dir, "test")};
  if (data.train.empty() || data.test.empty())
    throw std::runtime_error(dir + ": no training or test samples");
  const std::vector<GestureModel> models = selected_models(job);
  std::printf(
      "%zu training and %zu held-out gestures of %.1f s; %zu model(s) x %zu seed(s); "
      "augmentation %s (%.1f s)\n",
      data.train.size(), data.test.size(),
      static_cast<double>(models.front().pipeline.window_us) * 1e-6, models.size(),
      job.seeds.size(), job.augmentation.enabled ? "on" : "off", seconds_since(t_start));
  const std::string command_line =
      options.count("command_line") ? options.at("command_line") : "egret";
  std::vector<GestureRun> runs;
  const InterruptGuard interrupts;  // Ctrl-C: the finished runs and the training are kept
  for (const GestureModel& m : models)
    for (const std::uint64_t seed : job.seeds) {
      if (interrupt_requested()) stop_between_runs(job);
      const std::string run_dir = job.out_dir + "/" + m.name + "/seed" + std::to_string(seed);
      check_output_directory(run_dir, "--out");
      runs.push_back(with_precision(job.precision, [&](auto scalar) {
        return train_one<decltype(scalar)>(job, m, seed, data, run_dir, command_line);
      }));
      if (runs.size() == 1) {
        copy_headline(run_dir, job.out_dir);
        write_figure_inputs(data.test.front(), m.pipeline, job.out_dir);
      }
    }
  const std::vector<GestureRow> rows = gesture_rows(runs);
  print_gesture_table(rows);
  write_gesture_report(job.out_dir, runs, rows, settings_json(job, dir, data));
  std::printf(
      "\n%s data: %zu held-out gestures per seed (one gesture = %.2f points); total %.0f s\n"
      "wrote %s/results.json, table1.csv; per model and seed: checkpoint.h5, trace.h5, "
      "training_log.csv in %s/<model>/seed<N>/ (the first also in %s/)\n",
      job.dataset.empty() ? "synthetic (not the real DVS128 Gesture)" : "real", data.test.size(),
      100.0 / static_cast<double>(data.test.size()), seconds_since(t_start), job.out_dir.c_str(),
      job.out_dir.c_str(), job.out_dir.c_str());
  return 0;
}

}  // namespace egret::cli
