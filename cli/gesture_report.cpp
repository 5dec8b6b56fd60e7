#include "cli/gesture_report.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "io/event_csv.hpp"
#include "io/hardware/hardware_estimate.hpp"
#include "io/hardware/hardware_profile.hpp"
#include "sim/layer_metrics.hpp"

namespace egret::cli {
namespace {

Spread spread_of(const std::vector<double>& v) {
  Spread s;
  if (v.empty()) return s;
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  if (v.size() > 1) {
    double sq = 0;
    for (double x : v) sq += (x - s.mean) * (x - s.mean);
    s.sd = std::sqrt(sq / static_cast<double>(v.size() - 1));
  }
  return s;
}

// The CPU model (/proc/cpuinfo), for the report's machine line.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  return "unknown CPU";
}

// JSON has no NaN: a value that does not apply is null.
nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nullptr;
}

nlohmann::json spread_json(const Spread& s) {
  return {{"mean", number_or_null(s.mean)}, {"sd", number_or_null(s.sd)}};
}

std::string csv_number(double v) {
  if (!std::isfinite(v)) return "";
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

}  // namespace

void add_held_out_counts(GestureRun& run, const SamplesTraceSummary& held_out,
                         std::uint64_t samples, std::size_t scalar_bytes) {
  std::uint64_t active = 0, unit_steps = 0;
  double rate_units = 0, units = 0;
  run.activity_step_ms = held_out.layers.empty() ? std::nan("") : held_out.layers[0].step_ms;
  for (const LayerCounts& c : held_out.layers) {
    if (c.step_ms != run.activity_step_ms) run.activity_step_ms = std::nan("");
    const MetricTable m = layer_metrics(c, samples, held_out.simulated_ms, scalar_bytes);
    run.effective_macs += metric(m, "Effective_MACs");
    run.effective_acs += metric(m, "Effective_ACs");
    active += c.active_unit_steps;
    unit_steps += c.steps * static_cast<std::uint64_t>(c.units);
    rate_units += metric(m, "events_per_unit_per_s") * static_cast<double>(c.units);
    units += static_cast<double>(c.units);
  }
  run.activity_sparsity =
      unit_steps ? 1 - static_cast<double>(active) / static_cast<double>(unit_steps) : std::nan("");
  run.events_per_unit_per_s = units > 0 ? rate_units / units : 0;
}

void add_energy_estimates(GestureRun& run, const std::string& trace_path) {
  const TraceData trace = read_trace_file(trace_path);
  run.energy_loihi_j =
      estimate_hardware(trace, trace_path, load_hardware_profile("loihi_davies2018"))
          .mean_energy_j();
  run.energy_cmos_j =
      estimate_hardware(trace, trace_path, load_hardware_profile("cmos45_horowitz2014"))
          .mean_energy_j();
}

std::vector<GestureRow> gesture_rows(const std::vector<GestureRun>& runs) {
  std::vector<GestureRow> rows;
  std::map<std::string, std::vector<const GestureRun*>> by_model;
  for (const GestureRun& r : runs) {
    if (!by_model.count(r.model)) {
      rows.emplace_back();
      rows.back().model = r.model;
      rows.back().title = r.title;
    }
    by_model[r.model].push_back(&r);
  }
  for (GestureRow& row : rows) {
    std::map<std::string, std::vector<double>> v;
    for (const GestureRun* r : by_model[row.model]) {
      row.seeds.push_back(r->seed);
      row.parameters = r->parameters;
      row.held_out = r->total;
      row.activity_step_ms = r->activity_step_ms;
      v["accuracy"].push_back(r->accuracy());
      v["macs"].push_back(r->effective_macs);
      v["acs"].push_back(r->effective_acs);
      v["sparsity"].push_back(r->activity_sparsity);
      v["backward"].push_back(r->backward_sparsity);
      v["loihi"].push_back(r->energy_loihi_j);
      v["cmos"].push_back(r->energy_cmos_j);
      v["seconds"].push_back(r->train_seconds);
    }
    row.accuracy = spread_of(v["accuracy"]);
    row.effective_macs = spread_of(v["macs"]);
    row.effective_acs = spread_of(v["acs"]);
    row.activity_sparsity = spread_of(v["sparsity"]);
    row.backward_sparsity = spread_of(v["backward"]);
    row.energy_loihi_j = spread_of(v["loihi"]);
    row.energy_cmos_j = spread_of(v["cmos"]);
    row.train_seconds = spread_of(v["seconds"]);
  }
  return rows;
}

void print_gesture_table(const std::vector<GestureRow>& rows) {
  std::printf(
      "\nThe EGRU paper's Table 1, analog (held-out users; mean ± sd over seeds; per held-out "
      "sample):\n");
  std::printf("%-44s %9s %11s %11s %15s %15s %9s %14s %12s %8s\n", "model", "params", "eff. MACs",
              "eff. ACs", "accuracy", "act.sp. (step)", "bwd.sp.", "Loihi energy", "CMOS energy",
              "train");
  for (const GestureRow& r : rows) {
    char acc[32], bwd[16], act[40];
    std::snprintf(acc, sizeof acc, "%.1f ± %.1f %%", 100 * r.accuracy.mean, 100 * r.accuracy.sd);
    if (std::isfinite(r.activity_step_ms))
      std::snprintf(act, sizeof act, "%.3f (%g ms)", r.activity_sparsity.mean, r.activity_step_ms);
    else
      std::snprintf(act, sizeof act, "%.3f", r.activity_sparsity.mean);
    if (std::isfinite(r.backward_sparsity.mean))
      std::snprintf(bwd, sizeof bwd, "%.3f", r.backward_sparsity.mean);
    else
      std::snprintf(bwd, sizeof bwd, "-");
    std::printf("%-44s %9llu %11.4g %11.4g %16s %15s %9s %11.3g uJ %9.3g uJ %7.0f s\n",
                r.title.c_str(), static_cast<unsigned long long>(r.parameters),
                r.effective_macs.mean, r.effective_acs.mean, acc, act, bwd,
                r.energy_loihi_j.mean * 1e6, r.energy_cmos_j.mean * 1e6, r.train_seconds.mean);
  }
  std::printf(
      "(act.sp.: NeuroBench's ActivationSparsity, 1 - active / all (unit, step) pairs of the "
      "hidden layers over the held-out samples, at the model's step)\n");
}

nlohmann::json gesture_run_json(const GestureRun& r) {
  return {{"model", r.model},
          {"title", r.title},
          {"seed", r.seed},
          {"correct", r.correct},
          {"total", r.total},
          {"accuracy", r.accuracy()},
          {"parameters", r.parameters},
          {"effective_macs", r.effective_macs},
          {"effective_acs", r.effective_acs},
          {"activity_sparsity", number_or_null(r.activity_sparsity)},
          {"activity_step_ms", number_or_null(r.activity_step_ms)},
          {"backward_sparsity", number_or_null(r.backward_sparsity)},
          {"events_per_unit_per_s", r.events_per_unit_per_s},
          {"energy_j_loihi_davies2018", r.energy_loihi_j},
          {"energy_j_cmos45_horowitz2014", r.energy_cmos_j},
          {"train_seconds", r.train_seconds},
          {"test_accuracy_per_epoch", r.test_accuracy}};
}

GestureRun gesture_run_from_json(const nlohmann::json& j) {
  const auto number = [&](const char* key) {  // null: NaN (number_or_null's)
    const auto& v = j.at(key);
    return v.is_null() ? std::nan("") : v.get<double>();
  };
  GestureRun r;
  r.model = j.at("model").get<std::string>();
  r.title = j.at("title").get<std::string>();
  r.seed = j.at("seed").get<std::uint64_t>();
  r.correct = j.at("correct").get<int>();
  r.total = j.at("total").get<int>();
  r.parameters = j.at("parameters").get<std::uint64_t>();
  r.effective_macs = number("effective_macs");
  r.effective_acs = number("effective_acs");
  r.activity_sparsity = number("activity_sparsity");
  if (j.contains("activity_step_ms")) r.activity_step_ms = number("activity_step_ms");  // since #38
  r.backward_sparsity = number("backward_sparsity");
  r.events_per_unit_per_s = number("events_per_unit_per_s");
  r.energy_loihi_j = number("energy_j_loihi_davies2018");
  r.energy_cmos_j = number("energy_j_cmos45_horowitz2014");
  r.train_seconds = number("train_seconds");
  r.test_accuracy = j.at("test_accuracy_per_epoch").get<std::vector<double>>();
  if (r.correct < 0 || r.total < r.correct)
    throw std::runtime_error("correct " + std::to_string(r.correct) + " of " +
                             std::to_string(r.total));
  return r;
}

void write_gesture_report(const std::string& out_dir, const std::vector<GestureRun>& runs,
                          const std::vector<GestureRow>& rows, const std::string& settings_json) {
  nlohmann::json j;
  j["machine"] = {{"cpu", cpu_model()}, {"cores", std::thread::hardware_concurrency()}};
  j["settings"] = nlohmann::json::parse(settings_json);
  for (const GestureRun& r : runs) j["runs"].push_back(gesture_run_json(r));
  std::ostringstream csv;
  csv << "model,title,seeds,held_out,parameters,effective_macs,effective_acs,accuracy_mean,"
         "accuracy_sd,activity_sparsity_mean,activity_sparsity_sd,backward_sparsity_mean,"
         "backward_sparsity_sd,energy_j_loihi_davies2018_mean,energy_j_loihi_davies2018_sd,"
         "energy_j_cmos45_horowitz2014_mean,energy_j_cmos45_horowitz2014_sd,train_seconds_mean\n";
  for (const GestureRow& r : rows) {
    j["rows"].push_back({{"model", r.model},
                         {"title", r.title},
                         {"seeds", r.seeds},
                         {"held_out", r.held_out},
                         {"parameters", r.parameters},
                         {"effective_macs", spread_json(r.effective_macs)},
                         {"effective_acs", spread_json(r.effective_acs)},
                         {"accuracy", spread_json(r.accuracy)},
                         {"activity_sparsity", spread_json(r.activity_sparsity)},
                         {"activity_step_ms", number_or_null(r.activity_step_ms)},
                         {"backward_sparsity", spread_json(r.backward_sparsity)},
                         {"energy_j_loihi_davies2018", spread_json(r.energy_loihi_j)},
                         {"energy_j_cmos45_horowitz2014", spread_json(r.energy_cmos_j)},
                         {"train_seconds", spread_json(r.train_seconds)}});
    csv << r.model << ",\"" << r.title << "\"," << r.seeds.size() << ',' << r.held_out << ','
        << r.parameters << ',' << csv_number(r.effective_macs.mean) << ','
        << csv_number(r.effective_acs.mean) << ',' << csv_number(r.accuracy.mean) << ','
        << csv_number(r.accuracy.sd) << ',' << csv_number(r.activity_sparsity.mean) << ','
        << csv_number(r.activity_sparsity.sd) << ',' << csv_number(r.backward_sparsity.mean) << ','
        << csv_number(r.backward_sparsity.sd) << ',' << csv_number(r.energy_loihi_j.mean) << ','
        << csv_number(r.energy_loihi_j.sd) << ',' << csv_number(r.energy_cmos_j.mean) << ','
        << csv_number(r.energy_cmos_j.sd) << ',' << csv_number(r.train_seconds.mean) << '\n';
  }
  write_file_atomically(out_dir + "/results.json", j.dump(1));
  write_file_atomically(out_dir + "/table1.csv", csv.str());
}

}  // namespace egret::cli
