// The main job: DVS gesture classification with a continuous-time EGRU trained with the exact
// gradients. Uses the real DVS128 Gesture directory if given (--dataset), else generates the
// synthetic set (if absent) and trains on it; reports held-out accuracy, activity, operation
// counts against a dense GRU of the same size at stated steps and events/s; writes the checkpoint,
// the held-out trace (HDF5) and the data of the figures (scripts/plot_gesture.py).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "camera/camera_transforms.hpp"
#include "camera/datasets/dvs_gesture.hpp"
#include "camera/datasets/synthetic_gesture_dataset.hpp"
#include "cli/builtin_layers.hpp"
#include "cli/commands.hpp"
#include "cli/training_loop.hpp"
#include "io/config/network_config.hpp"
#include "io/event_csv.hpp"
#include "io/hdf5/trace_file.hpp"

namespace egret::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct GestureJob {
  std::string dataset;  // empty: the synthetic set in out/dvs_gesture_synthetic
  std::string out_dir = "out/dvs_gesture";
  int epochs = 12;
  int threads = 0;
  int units = 64;
  double pooling = 0.25;             // 128 -> 32
  std::int64_t bin_us = 5000;        // coalescing bin of the input events
  std::int64_t window_us = 1500000;  // each sample: the first 1.5 s of a gesture
  std::uint64_t seed = 3;
  Precision precision = Precision::kFloat;
  std::string layer_text = builtin::kDvsGestureLayer;  // --layer FILE
  std::string layer_origin = "examples/networks/dvs_gesture_layer.json";
  StateRegularizer state;        // --state-regularizer WEIGHT
  ActivityRegularizer activity;  // --activity-regularizer WEIGHT,TARGET_HZ
};

// Operations per held-out sample with NeuroBench's definitions (sim/layer_metrics.hpp), against
// a dense GRU of the same size at the input bin and at the EGRU paper's 25 ms frames; every
// dense figure states its step.
void report_operations(const SamplesTraceSummary& held_out,
                       const std::vector<const Sample<double>*>& samples, std::uint64_t units,
                       std::uint64_t inputs, double bin_ms, std::size_t scalar_bytes) {
  const MetricTable m =
      layer_metrics(held_out.layers[0], samples.size(), held_out.simulated_ms, scalar_bytes);
  const double effective = metric(m, "Effective_MACs") + metric(m, "Effective_ACs");
  std::printf(
      "hidden activity: %.1f events per unit per second; ActivationSparsity %.3f at the %g ms "
      "input bin\n",
      metric(m, "events_per_unit_per_s"), metric(m, "ActivationSparsity"), bin_ms);
  std::printf(
      "operations per held-out sample (NeuroBench definitions, docs/metrics.md): Effective_MACs "
      "%.4g, Effective_ACs %.4g, MembraneUpdates %.4g\n",
      metric(m, "Effective_MACs"), metric(m, "Effective_ACs"), metric(m, "MembraneUpdates"));
  for (const double step : {bin_ms, 25.0}) {
    std::uint64_t steps = 0;
    for (const Sample<double>* s : samples) steps += steps_covering(s->end_time, step);
    const double dense = static_cast<double>(dense_gru_operations_per_step(units, inputs) * steps) /
                         static_cast<double>(samples.size());
    std::printf(
        "  dense GRU (%llu units, %llu inputs) stepping every %g ms%s: %.4g per sample, %.1fx the "
        "effective operations\n",
        static_cast<unsigned long long>(units), static_cast<unsigned long long>(inputs), step,
        step == bin_ms ? " (the input bin)" : " (the EGRU paper's DVS frames)", dense,
        effective > 0 ? dense / effective : 0.0);
  }
}

// Pooled pixels x polarity as input channels, events coalesced per channel and 5 ms bin
// (value = count); a window readout over the last 80 % of the sample.
std::vector<Sample<double>> prepare(const std::vector<GestureSample>& in, const GestureJob& job,
                                    SensorSize& pooled) {
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

// The checkpoint's configuration: the network as a configuration file (so that
// egret.Network.load_checkpoint rebuilds it) and the job in its "task" section.
std::string checkpoint_configuration(const GestureJob& job, const std::string& dir,
                                     std::int64_t inputs) {
  nlohmann::json layer = nlohmann::json::parse(job.layer_text);
  layer["units"] = job.units;
  nlohmann::json cfg;
  cfg["input_channels"] = inputs;
  cfg["layers"] = nlohmann::json::array({layer});
  cfg["readout_classes"] = 11;
  cfg["seed"] = job.seed;
  cfg["precision"] = precision_name(job.precision);
  cfg["task"] = {{"name", "dvs_gesture"},      {"dataset", dir},
                 {"pooling", job.pooling},     {"bin_us", job.bin_us},
                 {"window_us", job.window_us}, {"epochs", job.epochs}};
  return cfg.dump();
}

struct TrainedGesture {
  TrainLoopResult loop;
  SamplesTraceSummary held_out;
};

// Trains the network in the job's precision and writes the held-out trace and the figure inputs.
template <class Scalar>
TrainedGesture train_and_trace(const GestureJob& job, const NetworkConfig& ncfg,
                               const std::string& config_text,
                               const std::vector<Sample<double>>& train_in,
                               const std::vector<Sample<double>>& test_in,
                               const std::string& command_line) {
  const auto train = cast_samples<Scalar>(train_in);
  const auto test = cast_samples<Scalar>(test_in);
  const LayerConfig& layer = ncfg.layers.front();
  const Network<Scalar> net = build_network<Scalar>(ncfg);
  TrainConfig tc;
  tc.loss = LossKind::kSoftmaxCrossEntropy;
  tc.batch_size = 8;
  tc.optimizer.learning_rate = 0.005;
  tc.optimizer.clip_norm = 1.0;
  tc.threads = job.threads;
  tc.seed = job.seed;
  tc.state = job.state;
  tc.activity = job.activity;
  Trainer<Scalar> trainer(net, tc);
  std::printf(
      "%s layer of %d units (settings: %s), softmax readout over 11 classes, %zu trainable "
      "parameters, in %s; Adam lr %g, batch %d, %d epochs\n",
      layer.type.c_str(), job.units, job.layer_origin.c_str(), trainer.parameters().size(),
      precision_name(job.precision), tc.optimizer.learning_rate, tc.batch_size, job.epochs);
  TrainLoopOptions loop;
  loop.epochs = job.epochs;
  loop.out_dir = job.out_dir;
  loop.config_text = config_text;
  TrainedGesture out;
  out.loop = run_training_loop(trainer, train, test, loop);

  // Held-out trace (HDF5), and the input events of the first test sample for the figure.
  const Network<Scalar> trained = trainer.network();
  std::vector<const Sample<Scalar>*> samples;
  std::vector<std::int64_t> labels;
  for (const auto& s : test) {
    samples.push_back(&s);
    labels.push_back(s.targets.labels.front());
  }
  out.held_out =
      write_samples_trace(job.out_dir + "/trace.h5", trained, samples, labels,
                          {loop.config_text, static_cast<std::int64_t>(job.seed), command_line},
                          static_cast<double>(job.bin_us) / 1000.0);
  std::ostringstream inputs;
  inputs << "t_ms,channel,value\n";
  for (const auto& e : test_in.front().input.events())
    inputs << e.time << ',' << e.channel << ',' << e.value << '\n';
  write_file_atomically(job.out_dir + "/figure_inputs.csv", inputs.str());
  return out;
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

}  // namespace

int run_gesture(const Options& options) {
  GestureJob job;
  if (options.count("--dataset")) job.dataset = options.at("--dataset");
  if (options.count("--out")) job.out_dir = options.at("--out");
  if (options.count("--epochs"))
    job.epochs = static_cast<int>(parse_positive_int(options.at("--epochs"), "--epochs"));
  if (options.count("--threads"))
    job.threads = static_cast<int>(parse_positive_int(options.at("--threads"), "--threads"));
  if (options.count("--precision"))
    job.precision = parse_precision(options.at("--precision"), "--precision");
  if (options.count("--layer")) {
    job.layer_origin = options.at("--layer");
    job.layer_text = read_text_file(job.layer_origin, "layer configuration");
    bool object = false;
    try {
      object = nlohmann::json::parse(job.layer_text).is_object();
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(job.layer_origin + ": not JSON: " + e.what());
    }
    if (!object)
      throw std::invalid_argument(job.layer_origin + ": expected a layer configuration object");
  }
  if (options.count("--state-regularizer"))
    job.state.weight = parse_nonnegative(options.at("--state-regularizer"), "--state-regularizer");
  if (options.count("--activity-regularizer"))
    job.activity = parse_activity_regularizer(options.at("--activity-regularizer"));
  check_output_directory(job.out_dir, "--out");
  if (job.dataset.empty()) check_output_directory("out/dvs_gesture_synthetic", "synthetic dataset");
  const auto t_start = Clock::now();

  std::string dir = job.dataset;
  if (dir.empty()) {
    dir = "out/dvs_gesture_synthetic";
    if (!std::filesystem::exists(std::filesystem::path(dir) / "trials_to_train.txt")) {
      std::printf(
          "generating the synthetic DVS gesture set in %s (11 classes, 4 training and 2 "
          "test users, 2 lightings)...\n",
          dir.c_str());
      std::fflush(stdout);
      SyntheticGestureConfig sc;
      sc.gesture_us = static_cast<double>(job.window_us);
      const auto s = write_synthetic_gesture_dataset(dir, sc);
      std::printf("  %d recordings, %llu events, %.1f s\n", s.trials,
                  static_cast<unsigned long long>(s.events),
                  std::chrono::duration<double>(Clock::now() - t_start).count());
    } else {
      std::printf("using the synthetic DVS gesture set in %s\n", dir.c_str());
    }
  } else {
    std::printf("using the DVS128 Gesture directory %s\n", dir.c_str());
  }
  std::fflush(stdout);
  SensorSize pooled;
  const auto train = prepare(load_gesture_split(dir, "train"), job, pooled);
  const auto test = prepare(load_gesture_split(dir, "test"), job, pooled);
  if (train.empty() || test.empty())
    throw std::runtime_error(dir + ": no training or test samples");
  std::uint64_t input_events = 0;
  for (const auto& s : train) input_events += s.input.size();
  const Index d = static_cast<Index>(pooled.width) * pooled.height * 2;
  std::printf(
      "%zu training and %zu test samples of %.1f s; input: %dx%d pooled pixels x 2 "
      "polarities = %lld channels, %.0f input events per sample (%.1f s)\n",
      train.size(), test.size(), static_cast<double>(job.window_us) * 1e-6, pooled.width,
      pooled.height, static_cast<long long>(d),
      static_cast<double>(input_events) / static_cast<double>(train.size()),
      std::chrono::duration<double>(Clock::now() - t_start).count());

  // The network as a configuration, the one the checkpoint stores: the layer is seeded with
  // job.seed, the readout with job.seed + 1 (io/config/network_config.hpp).
  const std::string config_text = checkpoint_configuration(job, dir, d);
  const NetworkConfig ncfg =
      parse_network_config(config_text, "built-in DVS gesture network", {"task"});
  const std::string command_line =
      options.count("command_line") ? options.at("command_line") : "egret";
  const TrainedGesture result = with_precision(job.precision, [&](auto scalar) {
    return train_and_trace<decltype(scalar)>(job, ncfg, config_text, train, test, command_line);
  });
  const double bin_ms = static_cast<double>(job.bin_us) / 1000.0;
  std::vector<const Sample<double>*> samples;
  for (const auto& s : test) samples.push_back(&s);
  std::printf("\nheld-out accuracy: %.1f%% (%d of %d test samples; chance 9.1%%)\n",
              100 * result.loop.test.accuracy(), result.loop.test.correct, result.loop.test.total);
  report_operations(result.held_out, samples, static_cast<std::uint64_t>(job.units),
                    static_cast<std::uint64_t>(d), bin_ms,
                    job.precision == Precision::kDouble ? sizeof(double) : sizeof(float));
  std::printf("training: %d epochs in %.1f s, %.0f events/s (forward passes); total %.1f s\n",
              result.loop.last_epoch, result.loop.seconds, result.loop.events_per_s,
              std::chrono::duration<double>(Clock::now() - t_start).count());
  std::printf(
      "wrote %s/checkpoint.h5, trace.h5 (held-out samples), training_log.csv, "
      "figure_inputs.csv\n",
      job.out_dir.c_str());
  return 0;
}

}  // namespace egret::cli
