// The DVS gesture main job's report: the EGRU paper's Table 1 analog (one row per model, mean and
// spread over seeds), printed, and written as JSON and CSV with the same numbers
// (scripts/plot_gesture.py draws it from the JSON).
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "io/hdf5/trace_file.hpp"

namespace egret::cli {

// One trained model and seed, measured on the held-out users.
struct GestureRun {
  std::string model, title;
  std::uint64_t seed = 0;
  int correct = 0, total = 0;
  std::uint64_t parameters = 0;
  double effective_macs = 0, effective_acs = 0;  // per held-out sample, all hidden layers
  double activity_sparsity = 0;                  // 1 - active / all unit-steps, all layers
  double activity_step_ms = std::nan("");        // their step (NaN: the layers' steps differ)
  double backward_sparsity = 0;                  // NaN for an exact adjoint or a dense model
  double events_per_unit_per_s = 0;
  double energy_loihi_j = 0, energy_cmos_j = 0;  // per held-out sample
  double train_seconds = 0;
  std::vector<double> test_accuracy;  // after every epoch
  double accuracy() const { return total ? static_cast<double>(correct) / total : 0; }
};

// A run as JSON (results.json's "runs", a run's run.json) and back; the reader throws
// nlohmann::json exceptions or std::runtime_error on a malformed run.
nlohmann::json gesture_run_json(const GestureRun& r);
GestureRun gesture_run_from_json(const nlohmann::json& j);

// Counts of a held-out trace, summed over the hidden layers: NeuroBench's effective MACs and ACs
// per sample (sim/layer_metrics.hpp) and the activity sparsity over all unit-steps.
void add_held_out_counts(GestureRun& run, const SamplesTraceSummary& held_out,
                         std::uint64_t samples, std::size_t scalar_bytes);

// The estimated energy per sample of a trace on the Loihi and CMOS profiles (docs/metrics.md).
void add_energy_estimates(GestureRun& run, const std::string& trace_path);

struct Spread {
  double mean = 0, sd = 0;  // sd: the sample standard deviation (0 for one seed)
};

// One model over its seeds.
struct GestureRow {
  std::string model, title;
  std::vector<std::uint64_t> seeds;
  std::uint64_t parameters = 0;
  Spread accuracy, effective_macs, effective_acs, activity_sparsity, backward_sparsity,
      energy_loihi_j, energy_cmos_j, train_seconds;
  double activity_step_ms = std::nan("");  // the seeds' (the same model: the same step)
  int held_out = 0;                        // held-out samples per seed
};

std::vector<GestureRow> gesture_rows(const std::vector<GestureRun>& runs);

void print_gesture_table(const std::vector<GestureRow>& rows);

// results.json (the runs, the rows, the machine and the settings) and table1.csv (the rows).
void write_gesture_report(const std::string& out_dir, const std::vector<GestureRun>& runs,
                          const std::vector<GestureRow>& rows, const std::string& settings_json);

}  // namespace egret::cli
