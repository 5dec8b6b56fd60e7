// The epoch loop shared by `egret train` and the DVS gesture main job: progress line per epoch,
// training log (CSV, rewritten under a temporary name and renamed after every epoch, before
// that epoch's checkpoint, so the log always holds at least the checkpoint's epochs),
// checkpoints (HDF5), stopping once held-out accuracy holds a target. Interrupt-safe: on Ctrl-C
// or SIGTERM (while the caller holds a cli/interrupt.hpp InterruptGuard) it abandons the
// running epoch at the next minibatch, writes the last complete epoch's checkpoint, prints
// how to resume and throws Interrupted.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/training_checkpoint.hpp"
#include "train/trainer.hpp"

namespace egret::cli {

struct TrainLoopOptions {
  int first_epoch = 1;
  int epochs = 10;
  double stop_at_test_accuracy = 0;  // > 0: stop after `stop_patience` epochs at or above it
  int stop_patience = 1;
  int checkpoint_every = 1;    // epochs (0: only the last); the last epoch is always saved
  LoopState resumed;           // the loop state of the checkpoint resumed from (first_epoch - 1)
  std::string resume_command;  // printed on an interrupt: how to go on
  std::string out_dir;
  std::string config_text;  // stored in the checkpoint
  // Resuming into the directory of the checkpoint: training_log.csv there keeps its rows up to
  // the checkpoint's epoch (first_epoch - 1); rows after it (the interrupted run went on past
  // its last checkpoint) are dropped, and the resumed epochs are appended, so every epoch
  // appears once. Otherwise the log starts with first_epoch.
  bool continue_log = false;
  const char* accuracy_name = "acc";
  // The runaway guard: a layer whose event rate grows past this factor of its first epoch's is
  // reported after every such epoch (0: off).
  double rate_growth_limit = 3;
  // Called before every epoch with its number; it may rewrite the training samples (fresh
  // augmentation per epoch): the loop reads `train` anew every epoch.
  std::function<void(int epoch)> before_epoch;
};

struct TrainLoopResult {
  int last_epoch = 0;
  BatchStats test;                    // held-out statistics after the last epoch
  BatchStats last_train;              // the last epoch trained here: its training statistics
  double last_backward_sparsity = 0;  // of the run's last epoch (here or before a resume); NaN:
                                      // none, or an exact adjoint
  std::vector<double> test_accuracy;  // after every epoch (those of a continued log included)
  double seconds = 0;
  double events_per_s = 0;  // events processed by the training forward passes per second
};

template <class Scalar>  // double and float
TrainLoopResult run_training_loop(Trainer<Scalar>& trainer,
                                  const std::vector<Sample<Scalar>>& train,
                                  const std::vector<Sample<Scalar>>& test,
                                  const TrainLoopOptions& options);

}  // namespace egret::cli
