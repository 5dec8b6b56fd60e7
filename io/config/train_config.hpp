// Training configuration files: a network configuration (io/config/network_config.hpp) plus the
// sections "task", "training" and "output". Strict like the network part.
//
//   "task":     {"name": "delay_copy", "train_trials": 64, "test_trials": 64, "seed": 2,
//                "bits": 2, "delay_min": 30, "delay_max": 40, ...}
//   "training": {"optimizer": "adam", "learning_rate": 0.01, "epochs": 300, "batch_size": 16,
//                "clip_norm": 1.0, "loss": "binary_cross_entropy", "seed": 1, "threads": 0,
//                "train_time_constants": false, "stop_at_test_accuracy": 1.0,
//                "stop_patience": 20,
//                "activity_regularizer": {"weight": 0.01, "target_hz": 50}}
//   "output":   {"dir": "out/delay_copy", "checkpoint_every": 25}
#pragma once

#include <string>

#include "io/config/network_config.hpp"
#include "train/delay_copy_task.hpp"
#include "train/trainer.hpp"

namespace egret {

struct TrainRunConfig {
  NetworkConfig network;
  std::string task = "delay_copy";
  DelayCopyConfig delay_copy;
  int train_trials = 64;
  int test_trials = 64;
  std::uint64_t task_seed = 2;
  TrainConfig training;
  double stop_at_test_accuracy = 0;  // > 0: stop once held-out accuracy reaches it ...
  int stop_patience = 1;             // ... for this many consecutive epochs
  std::string out_dir = "out/train";
  int checkpoint_every = 1;      // epochs; 0: only at the end (and on Ctrl-C)
  double rate_growth_limit = 3;  // the runaway guard (cli/training_loop.hpp); 0: off
};

TrainRunConfig parse_train_config(const std::string& json_text, const std::string& origin);
TrainRunConfig load_train_config(const std::string& path);

}  // namespace egret
