#include "cli/training_loop.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "cli/interrupt.hpp"
#include "cli/training_checkpoint.hpp"
#include "io/event_csv.hpp"

namespace egret::cli {
namespace {

// Column `k` (from 0) of a log row, a number.
double log_column(const std::string& line, int k, const std::string& path, int line_no) {
  std::size_t at = 0;
  for (int i = 0; i < k && at != std::string::npos; ++i) at = line.find(',', at) + 1;
  const char* begin = at == 0 && k > 0 ? nullptr : line.c_str() + at;
  char* end = nullptr;
  const double v = begin ? std::strtod(begin, &end) : 0;
  if (!begin || end == begin || (*end != ',' && *end != '\0'))
    throw std::runtime_error(path + ": line " + std::to_string(line_no) + ": column " +
                             std::to_string(k + 1) + " is not a number");
  return v;
}

constexpr const char* kLogHeader =
    "epoch,train_loss,train_accuracy,test_loss,test_accuracy,events_per_unit_per_s,"
    "events_per_s,grad_norm,skipped_samples,grazing,seconds";

// The rows of an earlier log for epochs 1 .. last_epoch (or from wherever it started), checked:
// the header, one row per epoch, consecutive, reaching last_epoch; their held-out accuracies are
// appended to `test_accuracy`.
std::string earlier_log_rows(const std::string& path, int last_epoch,
                             std::vector<double>& test_accuracy) {
  std::ifstream in(path);
  if (!in) {
    std::printf("no %s to continue: the log starts at epoch %d\n", path.c_str(), last_epoch + 1);
    return "";
  }
  std::string line, rows;
  if (!std::getline(in, line) || line != kLogHeader)
    throw std::runtime_error(path + ": line 1: not the header of an egret training log");
  int expected = -1, line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    char* end = nullptr;
    const long epoch = std::strtol(line.c_str(), &end, 10);
    if (end == line.c_str() || *end != ',')
      throw std::runtime_error(path + ": line " + std::to_string(line_no) + ": no epoch number");
    if (epoch > last_epoch) break;  // after the checkpoint: recomputed by this run
    if (expected >= 0 && epoch != expected)
      throw std::runtime_error(path + ": line " + std::to_string(line_no) + ": epoch " +
                               std::to_string(epoch) + " where " + std::to_string(expected) +
                               " was expected");
    expected = static_cast<int>(epoch) + 1;
    rows += line + "\n";
    test_accuracy.push_back(log_column(line, 4, path, line_no));
  }
  if (expected != last_epoch + 1)
    throw std::runtime_error(path + ": the log does not reach the checkpoint's epoch " +
                             std::to_string(last_epoch) +
                             "; move it away to start a new log from the checkpoint");
  return rows;
}

// One epoch's progress line.
void print_epoch(int epoch, const BatchStats& s, const BatchStats& test, double events_per_s,
                 double total_seconds, const char* accuracy_name) {
  char backward[48] = "";
  if (s.surrogate_pairs > 0)
    std::snprintf(backward, sizeof backward, "  bwd sparsity %.3f", s.backward_sparsity());
  char activity[80] = "";  // NeuroBench's ActivationSparsity (docs/metrics.md) at its step
  if (s.unit_steps > 0 && std::isnan(s.activity_step_ms))
    std::snprintf(activity, sizeof activity, "  activity sparsity %.3f (NeuroBench, layers' steps)",
                  s.activity_sparsity());
  else if (s.unit_steps > 0)
    std::snprintf(activity, sizeof activity, "  activity sparsity %.3f (NeuroBench, %g ms step)",
                  s.activity_sparsity(), s.activity_step_ms);
  std::printf(
      "epoch %4d  loss %.4f  %s %5.1f%%  | held-out loss %.4f  %s %5.1f%%  | "
      "%6.1f ev/unit/s%s  %8.0f events/s%s  |g| %.3g%s  %.1f s\n",
      epoch, s.loss, accuracy_name, 100 * s.accuracy(), test.loss, accuracy_name,
      100 * test.accuracy(), s.rate_per_unit(), activity, events_per_s, backward, s.grad_norm,
      s.skipped_samples ? "  (skipped non-finite samples)" : "", total_seconds);
  std::fflush(stdout);
}

// The runaway guard: each layer's event rate against its first epoch's (kept in `first`).
void check_rate_growth(const BatchStats& s, double limit, std::vector<double>& first) {
  if (!(limit > 0)) return;
  for (std::size_t l = 0; l < s.layer_events.size(); ++l) {
    const double rate = s.layer_rate(l);
    if (first.size() <= l) {  // the first epoch trained here is the reference
      first.push_back(rate);
      continue;
    }
    if (first[l] > 0 && rate > limit * first[l])
      std::printf(
          "  warning: layer %zu's event rate grew to %.1f events/unit/s, %.1fx its first epoch's "
          "%.1f (limit %gx): the activity may be running away; the activity regulariser or a "
          "layer that starts silent (docs/model.md) holds it\n",
          l, rate, rate / first[l], first[l], limit);
  }
}

// Interrupted (Ctrl-C, SIGTERM): the trainer goes back to the last complete epoch's snapshot,
// which is written as the checkpoint, and the loop ends with Interrupted.
template <class Scalar>
[[noreturn]] void save_and_stop(Trainer<Scalar>& trainer, const Checkpoint& snapshot,
                                const TrainLoopOptions& o, int epoch_running) {
  const std::string path = o.out_dir + "/checkpoint.h5";
  restore_training_state(trainer, snapshot, path);
  write_training_checkpoint(path, snapshot, trainer);
  const int signal_number = interrupt_signal();
  std::printf(
      "\n%s during epoch %d: wrote %s at epoch %d, the last complete one%s\n"
      "resume with: %s\n",
      signal_name(signal_number), epoch_running, path.c_str(), snapshot.epoch,
      epoch_running > snapshot.epoch ? " (the partial epoch is discarded)" : "",
      o.resume_command.c_str());
  std::fflush(stdout);
  throw Interrupted(signal_number);
}

// Whether the held-out accuracy has held the stop target for stop_patience epochs (the streak is
// counted in `state`).
bool reached_stop_target(const TrainLoopOptions& o, double accuracy, LoopState& state, int epoch) {
  state.held_out_streak = o.stop_at_test_accuracy > 0 && accuracy >= o.stop_at_test_accuracy
                              ? state.held_out_streak + 1
                              : 0;
  if (state.held_out_streak < o.stop_patience) return false;
  std::printf(
      "stopping early at epoch %d of %d: held-out %s at or above stop_at_test_accuracy %.1f%% "
      "for %d epoch%s (stop_patience); set stop_at_test_accuracy to 0 to train every epoch\n",
      epoch, o.epochs, o.accuracy_name, 100 * o.stop_at_test_accuracy, o.stop_patience,
      o.stop_patience == 1 ? "" : "s");
  return true;
}

}  // namespace

template <class Scalar>
TrainLoopResult run_training_loop(Trainer<Scalar>& trainer,
                                  const std::vector<Sample<Scalar>>& train,
                                  const std::vector<Sample<Scalar>>& test,
                                  const TrainLoopOptions& o) {
  using Clock = std::chrono::steady_clock;
  const std::string log_path = o.out_dir + "/training_log.csv";
  const std::string checkpoint_path = o.out_dir + "/checkpoint.h5";
  TrainLoopResult r;
  std::ostringstream log;
  log.precision(17);
  log << kLogHeader << '\n';
  if (o.continue_log && o.first_epoch > 1)
    log << earlier_log_rows(log_path, o.first_epoch - 1, r.test_accuracy);
  const auto t_start = Clock::now();
  LoopState state = o.resumed;
  // The state after the last complete epoch: what an interrupt saves.
  Checkpoint snapshot = training_snapshot(trainer, o.config_text, o.first_epoch - 1, state);
  r.test = trainer.evaluate(test);
  std::printf("epoch %4d  held-out loss %.4f  %s %5.1f%%\n", o.first_epoch - 1, r.test.loss,
              o.accuracy_name, 100 * r.test.accuracy());
  std::fflush(stdout);
  const int prune_epoch = trainer.config().prune_after_epoch;
  auto prune = [&](const char* when) {
    const std::size_t cut = trainer.prune();
    std::printf("pruned %s: each sender keeps %.3g of its connections (%zu weights cut)\n", when,
                trainer.config().prune_keep, cut);
  };
  // A run resumed after the pruning epoch makes its layers sparse again (cutting nothing: the
  // checkpoint's weights are pruned already).
  if (prune_epoch > 0 && o.first_epoch - 1 >= prune_epoch) prune("again on resuming");
  int epoch = o.first_epoch;
  double train_seconds = 0, train_steps = 0;
  for (; epoch <= o.epochs; ++epoch) {
    if (interrupt_requested()) save_and_stop(trainer, snapshot, o, epoch);
    if (o.before_epoch) o.before_epoch(epoch);
    const auto t0 = Clock::now();
    const BatchStats s = trainer.train_epoch(train, &interrupt_flag());
    if (s.stopped_early) save_and_stop(trainer, snapshot, o, epoch);
    r.last_train = s;
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    r.test = trainer.evaluate(test);
    r.test_accuracy.push_back(r.test.accuracy());
    const double total = std::chrono::duration<double>(Clock::now() - t_start).count();
    const double events_per_s = secs > 0 ? static_cast<double>(s.steps) / secs : 0.0;
    train_seconds += secs;
    train_steps += static_cast<double>(s.steps);
    print_epoch(epoch, s, r.test, events_per_s, total, o.accuracy_name);
    check_rate_growth(s, o.rate_growth_limit, state.first_epoch_rates);
    log << epoch << ',' << s.loss << ',' << s.accuracy() << ',' << r.test.loss << ','
        << r.test.accuracy() << ',' << s.rate_per_unit() << ',' << events_per_s << ','
        << s.grad_norm << ',' << s.skipped_samples << ',' << s.grazing << ',' << total << '\n';
    write_file_atomically(log_path, log.str());
    if (epoch == prune_epoch) prune(("after epoch " + std::to_string(epoch)).c_str());
    const bool stop = reached_stop_target(o, r.test.accuracy(), state, epoch);
    state.last_backward_sparsity = s.backward_sparsity();
    state.has_last_epoch = true;
    snapshot = training_snapshot(trainer, o.config_text, epoch, state);
    if (o.checkpoint_every > 0 && epoch % o.checkpoint_every == 0 && epoch < o.epochs && !stop)
      write_training_checkpoint(checkpoint_path, snapshot, trainer);
    if (stop) break;
  }
  r.last_epoch = snapshot.epoch;
  if (o.first_epoch > o.epochs)
    std::printf("the checkpoint is at epoch %d, not before the last epoch %d: nothing to train\n",
                o.first_epoch - 1, o.epochs);
  r.last_backward_sparsity = state.has_last_epoch ? state.last_backward_sparsity : std::nan("");
  write_file_atomically(log_path, log.str());
  write_training_checkpoint(checkpoint_path, snapshot, trainer);
  r.seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  r.events_per_s = train_seconds > 0 ? train_steps / train_seconds : 0;
  return r;
}

template TrainLoopResult run_training_loop(Trainer<double>&, const std::vector<Sample<double>>&,
                                           const std::vector<Sample<double>>&,
                                           const TrainLoopOptions&);
template TrainLoopResult run_training_loop(Trainer<float>&, const std::vector<Sample<float>>&,
                                           const std::vector<Sample<float>>&,
                                           const TrainLoopOptions&);

}  // namespace egret::cli
