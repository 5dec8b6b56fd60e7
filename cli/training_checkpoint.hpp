// The state a training run saves and resumes from: the trainer's (trainable values, the
// optimizer's moments and step count, the shuffling generator) and the epoch loop's own (the
// early-stopping streak, the runaway guard's reference rates, the last epoch's backward
// sparsity). Restoring a snapshot and training on gives bitwise the run that never stopped.
#pragma once

#include <string>
#include <vector>

#include "io/hdf5/checkpoint.hpp"
#include "train/trainer.hpp"

namespace egret::cli {

// The epoch loop's state (cli/training_loop.hpp), kept in the checkpoint's training_loop
// attribute as JSON.
struct LoopState {
  int held_out_streak = 0;                // consecutive epochs at or above the stop target
  std::vector<double> first_epoch_rates;  // per layer, the runaway guard's reference
  double last_backward_sparsity = 0;      // NaN when no layer has a surrogate gradient
  bool has_last_epoch = false;            // false before the first epoch: no figures yet
};

std::string loop_state_json(const LoopState& s);
// `where` names the file for errors; an empty text (an older checkpoint) gives a fresh state.
LoopState parse_loop_state(const std::string& text, const std::string& where);

// The trainer's state after `epoch` with the loop's, as a checkpoint (without the named
// parameters, which write_training_checkpoint adds).
template <class Scalar>
Checkpoint training_snapshot(Trainer<Scalar>& trainer, const std::string& config_text, int epoch,
                             const LoopState& loop);

// Puts a checkpoint's state into `trainer` (a checkpoint of `file`, for the errors): trainable
// values, optimizer moments and steps, generator. Reads format-3 files (one time constant per
// layer) too. Throws if the checkpoint does not fit the trainer's network.
template <class Scalar>
void restore_training_state(Trainer<Scalar>& trainer, const Checkpoint& c, const std::string& file);

// Writes `c` (a snapshot of `trainer`'s current state) to `path` with the trainer's network's
// named parameters, atomically.
template <class Scalar>
void write_training_checkpoint(const std::string& path, const Checkpoint& c,
                               const Trainer<Scalar>& trainer);

}  // namespace egret::cli
