#include "cli/training_loop.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "io/event_csv.hpp"
#include "io/hdf5/checkpoint.hpp"

namespace egret::cli {
namespace {

constexpr const char* kLogHeader =
    "epoch,train_loss,train_accuracy,test_loss,test_accuracy,events_per_unit_per_s,"
    "events_per_s,grad_norm,skipped_samples,grazing,seconds";

// The rows of an earlier log for epochs 1 .. last_epoch (or from wherever it started), checked:
// the header, one row per epoch, consecutive, reaching last_epoch.
std::string earlier_log_rows(const std::string& path, int last_epoch) {
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
  }
  if (expected != last_epoch + 1)
    throw std::runtime_error(path + ": the log does not reach the checkpoint's epoch " +
                             std::to_string(last_epoch) +
                             "; move it away to start a new log from the checkpoint");
  return rows;
}

// The parameters, the optimizer's moments and the shuffling generator's state: what a resumed
// run needs to continue as if it had not stopped.
template <class Scalar>
void save_training_checkpoint(Trainer<Scalar>& trainer, const TrainLoopOptions& o, int epoch) {
  Checkpoint c;
  c.config_text = o.config_text;
  c.epoch = epoch;
  const auto widened = [](const auto& v) { return std::vector<double>(v.begin(), v.end()); };
  c.values = widened(trainer.parameters().values());
  c.adam_m = widened(trainer.optimizer().first_moment());
  c.adam_v = widened(trainer.optimizer().second_moment());
  c.optimizer_steps = trainer.optimizer().steps();
  std::ostringstream rng;
  rng << trainer.rng();
  c.rng_state = rng.str();
  const Network<Scalar> trained = trainer.network();
  write_checkpoint(o.out_dir + "/checkpoint.h5", c, &trained);
}

// One epoch's progress line.
void print_epoch(int epoch, const BatchStats& s, const BatchStats& test, double events_per_s,
                 double total_seconds, const char* accuracy_name) {
  char backward[48] = "";
  if (s.surrogate_pairs > 0)
    std::snprintf(backward, sizeof backward, "  bwd sparsity %.3f", s.backward_sparsity());
  char activity[40] = "";
  if (s.unit_steps > 0)
    std::snprintf(activity, sizeof activity, "  act sparsity %.3f", s.activity_sparsity());
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

}  // namespace

template <class Scalar>
TrainLoopResult run_training_loop(Trainer<Scalar>& trainer,
                                  const std::vector<Sample<Scalar>>& train,
                                  const std::vector<Sample<Scalar>>& test,
                                  const TrainLoopOptions& o) {
  using Clock = std::chrono::steady_clock;
  const std::string log_path = o.out_dir + "/training_log.csv";
  std::ostringstream log;
  log.precision(17);
  log << kLogHeader << '\n';
  if (o.continue_log && o.first_epoch > 1) log << earlier_log_rows(log_path, o.first_epoch - 1);
  const auto t_start = Clock::now();
  auto save = [&](int epoch) { save_training_checkpoint(trainer, o, epoch); };
  TrainLoopResult r;
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
  int epoch = o.first_epoch, at_target = 0;
  std::vector<double> first_rates;  // per layer, of the first epoch trained here
  double train_seconds = 0, train_steps = 0;
  for (; epoch <= o.epochs; ++epoch) {
    if (o.before_epoch) o.before_epoch(epoch);
    const auto t0 = Clock::now();
    const BatchStats s = trainer.train_epoch(train);
    r.last_train = s;
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    r.test = trainer.evaluate(test);
    r.test_accuracy.push_back(r.test.accuracy());
    const double total = std::chrono::duration<double>(Clock::now() - t_start).count();
    const double events_per_s = secs > 0 ? static_cast<double>(s.steps) / secs : 0.0;
    train_seconds += secs;
    train_steps += static_cast<double>(s.steps);
    print_epoch(epoch, s, r.test, events_per_s, total, o.accuracy_name);
    check_rate_growth(s, o.rate_growth_limit, first_rates);
    log << epoch << ',' << s.loss << ',' << s.accuracy() << ',' << r.test.loss << ','
        << r.test.accuracy() << ',' << s.rate_per_unit() << ',' << events_per_s << ','
        << s.grad_norm << ',' << s.skipped_samples << ',' << s.grazing << ',' << total << '\n';
    write_file_atomically(log_path, log.str());
    if (epoch == prune_epoch) prune(("after epoch " + std::to_string(epoch)).c_str());
    if (o.checkpoint_every > 0 && epoch % o.checkpoint_every == 0) save(epoch);
    at_target = o.stop_at_test_accuracy > 0 && r.test.accuracy() >= o.stop_at_test_accuracy
                    ? at_target + 1
                    : 0;
    if (at_target >= o.stop_patience) {
      std::printf(
          "held-out accuracy at or above the target %.1f%% for %d epochs; stopping at "
          "epoch %d\n",
          100 * o.stop_at_test_accuracy, o.stop_patience, epoch);
      break;
    }
  }
  r.last_epoch = std::max(o.first_epoch - 1, std::min(epoch, o.epochs));
  if (o.first_epoch > o.epochs)
    std::printf("the checkpoint is at epoch %d, not before the last epoch %d: nothing to train\n",
                o.first_epoch - 1, o.epochs);
  write_file_atomically(log_path, log.str());
  save(r.last_epoch);
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
