#include "io/config/train_config.hpp"

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "io/config/json_fields.hpp"

namespace egret {
namespace {

using nlohmann::json;

using json_fields::check_keys;
using json_fields::fail;

using json_fields::integer;
using json_fields::number;

// "task": which task, its trial counts and seed, and the delay-copy settings, checked against the
// network's inputs and readout.
void parse_task_section(const json& root, TrainRunConfig& cfg, const std::string& origin) {
  if (!root.contains("task")) fail(origin, "task", "missing (e.g. {\"name\": \"delay_copy\"})");
  const json& task = root["task"];
  check_keys(task,
             {"name", "train_trials", "test_trials", "seed", "bits", "onset_min", "onset_max",
              "jitter", "delay_min", "delay_max", "recall_begin", "recall_end", "quiet_window",
              "quiet_begin", "quiet_end", "tail"},
             origin, "task");
  if (!task.contains("name") || !task["name"].is_string())
    fail(origin, "task.name", "expected a task name (known: delay_copy)");
  cfg.task = task["name"].get<std::string>();
  if (cfg.task != "delay_copy")
    fail(origin, "task.name", "unknown task '" + cfg.task + "' (known: delay_copy)");
  cfg.train_trials = static_cast<int>(integer(task, "train_trials", 64, 1, origin, "task"));
  cfg.test_trials = static_cast<int>(integer(task, "test_trials", 64, 1, origin, "task"));
  cfg.task_seed = static_cast<std::uint64_t>(integer(task, "seed", 2, 0, origin, "task"));
  DelayCopyConfig& dc = cfg.delay_copy;
  dc.bits = static_cast<int>(integer(task, "bits", dc.bits, 1, origin, "task"));
  dc.onset_min = number(task, "onset_min", dc.onset_min, origin, "task");
  dc.onset_max = number(task, "onset_max", dc.onset_max, origin, "task");
  dc.jitter = number(task, "jitter", dc.jitter, origin, "task");
  dc.delay_min = number(task, "delay_min", dc.delay_min, origin, "task");
  dc.delay_max = number(task, "delay_max", dc.delay_max, origin, "task");
  dc.recall_begin = number(task, "recall_begin", dc.recall_begin, origin, "task");
  dc.recall_end = number(task, "recall_end", dc.recall_end, origin, "task");
  dc.quiet_begin = number(task, "quiet_begin", dc.quiet_begin, origin, "task");
  dc.quiet_end = number(task, "quiet_end", dc.quiet_end, origin, "task");
  dc.tail = number(task, "tail", dc.tail, origin, "task");
  if (task.contains("quiet_window")) {
    if (!task["quiet_window"].is_boolean())
      fail(origin, "task.quiet_window", "expected true/false");
    dc.quiet_window = task["quiet_window"].get<bool>();
  }
  try {
    dc.validate();
  } catch (const std::invalid_argument& e) {
    fail(origin, "task", e.what());
  }
  if (cfg.network.input_channels != dc.channels())
    fail(origin, "input_channels",
         "the delay_copy task with " + std::to_string(dc.bits) + " bits needs " +
             std::to_string(dc.channels()) + " input channels (bits + cue)");
  if (cfg.network.readout_classes != dc.bits)
    fail(origin, "readout_classes",
         "the delay_copy task needs one readout logit per bit (" + std::to_string(dc.bits) + ")");
}

// The optional sub-sections of "training": the regularisers and pruning.
void parse_training_options(const json& training, TrainConfig& tc, const std::string& origin) {
  if (training.contains("activity_regularizer")) {
    const json& a = training["activity_regularizer"];
    check_keys(a, {"weight", "target_hz"}, origin, "training.activity_regularizer");
    tc.activity.weight = number(a, "weight", 0, origin, "training.activity_regularizer");
    tc.activity.target_hz = number(a, "target_hz", 0, origin, "training.activity_regularizer");
    if (tc.activity.weight < 0 || tc.activity.target_hz < 0)
      fail(origin, "training.activity_regularizer", "weight and target_hz must be >= 0");
  }
  if (training.contains("state_regularizer")) {
    const std::string where = "training.state_regularizer";
    const json& a = training["state_regularizer"];
    check_keys(a, {"weight", "margin", "detach_threshold"}, origin, where);
    tc.state.weight = number(a, "weight", 0, origin, where);
    tc.state.margin = number(a, "margin", tc.state.margin, origin, where);
    if (tc.state.weight < 0) fail(origin, where + ".weight", "must be >= 0");
    if (tc.state.margin < 0) fail(origin, where + ".margin", "must be >= 0");
    if (a.contains("detach_threshold")) {
      if (!a["detach_threshold"].is_boolean())
        fail(origin, where + ".detach_threshold", "expected true/false");
      tc.state.detach_threshold = a["detach_threshold"].get<bool>();
    }
  }
  if (training.contains("prune")) {
    const json& pr = training["prune"];
    check_keys(pr, {"after_epoch", "keep"}, origin, "training.prune");
    tc.prune_after_epoch =
        static_cast<int>(integer(pr, "after_epoch", 1, 1, origin, "training.prune"));
    tc.prune_keep = number(pr, "keep", 0.1, origin, "training.prune");
    if (!(tc.prune_keep > 0 && tc.prune_keep <= 1))
      fail(origin, "training.prune.keep", "the share of connections kept must be in (0, 1]");
  }
}

// "training": optimizer, epochs, batches, loss, threads, what is trained and when to stop.
void parse_training_section(const json& root, TrainRunConfig& cfg, const std::string& origin) {
  const json training = root.contains("training") ? root["training"] : json::object();
  check_keys(
      training,
      {"optimizer", "learning_rate", "beta1", "beta2", "epsilon", "clip_norm", "epochs",
       "batch_size", "loss", "seed", "threads", "train_time_constants", "stop_at_test_accuracy",
       "stop_patience", "activity_regularizer", "state_regularizer", "prune", "rate_growth_limit"},
      origin, "training");
  TrainConfig& tc = cfg.training;
  tc.run = cfg.network.run_settings();
  if (training.contains("optimizer")) {
    if (!training["optimizer"].is_string())
      fail(origin, "training.optimizer", "expected adam or sgd");
    tc.optimizer.kind = training["optimizer"].get<std::string>();
  }
  tc.optimizer.learning_rate = number(training, "learning_rate", 0.01, origin, "training");
  tc.optimizer.beta1 = number(training, "beta1", tc.optimizer.beta1, origin, "training");
  tc.optimizer.beta2 = number(training, "beta2", tc.optimizer.beta2, origin, "training");
  tc.optimizer.epsilon = number(training, "epsilon", tc.optimizer.epsilon, origin, "training");
  tc.optimizer.clip_norm = number(training, "clip_norm", 0, origin, "training");
  tc.epochs = static_cast<int>(integer(training, "epochs", 100, 0, origin, "training"));
  tc.batch_size = static_cast<int>(integer(training, "batch_size", 16, 1, origin, "training"));
  tc.seed = static_cast<std::uint64_t>(integer(training, "seed", 1, 0, origin, "training"));
  tc.threads = static_cast<int>(integer(training, "threads", 0, 0, origin, "training"));
  tc.loss = LossKind::kBinaryCrossEntropy;
  if (training.contains("loss")) {
    if (!training["loss"].is_string()) fail(origin, "training.loss", "expected a loss name");
    const std::string name = training["loss"].get<std::string>();
    // Printed here, the one place that knows the file and key; parsing goes on with the new name.
    if (renamed_loss(name))
      std::cerr << "egret: warning: " << renamed_loss_warning(origin + ": training.loss", name)
                << "\n";
    try {
      tc.loss = parse_loss_kind(name);
    } catch (const std::invalid_argument& e) {
      fail(origin, "training.loss", e.what());
    }
  }
  if (training.contains("train_time_constants")) {
    if (!training["train_time_constants"].is_boolean())
      fail(origin, "training.train_time_constants", "expected true/false");
    tc.train_time_constants = training["train_time_constants"].get<bool>();
  }
  parse_training_options(training, tc, origin);
  cfg.stop_at_test_accuracy = number(training, "stop_at_test_accuracy", 0, origin, "training");
  cfg.rate_growth_limit = number(training, "rate_growth_limit", 3, origin, "training");
  if (cfg.rate_growth_limit < 0)
    fail(origin, "training.rate_growth_limit", "must be >= 0 (0: off)");
  cfg.stop_patience =
      static_cast<int>(integer(training, "stop_patience", 1, 1, origin, "training"));
  try {
    Optimizer<double> probe(tc.optimizer, 1);
  } catch (const std::invalid_argument& e) {
    fail(origin, "training", e.what());
  }
}

// "output": where results go and how often a checkpoint is written.
void parse_output_section(const json& root, TrainRunConfig& cfg, const std::string& origin) {
  const json output = root.contains("output") ? root["output"] : json::object();
  check_keys(output, {"dir", "checkpoint_every"}, origin, "output");
  if (output.contains("dir")) {
    if (!output["dir"].is_string() || output["dir"].get<std::string>().empty())
      fail(origin, "output.dir", "expected a directory path");
    cfg.out_dir = output["dir"].get<std::string>();
  }
  cfg.checkpoint_every =
      static_cast<int>(integer(output, "checkpoint_every", 1, 0, origin, "output"));
}

}  // namespace

TrainRunConfig parse_train_config(const std::string& text, const std::string& origin) {
  TrainRunConfig cfg;
  cfg.network = parse_network_config(text, origin, {"task", "training", "output"});
  const json root = json::parse(text);  // valid: parse_network_config checked it
  parse_task_section(root, cfg, origin);
  parse_training_section(root, cfg, origin);
  parse_output_section(root, cfg, origin);
  return cfg;
}

TrainRunConfig load_train_config(const std::string& path) {
  return parse_train_config(read_text_file(path, "training configuration"), path);
}

}  // namespace egret
