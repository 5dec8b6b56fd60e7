// `egret estimate TRACE.h5 [--profile NAME|FILE] [--json OUT.json]`: energy and latency per
// sample and per layer of a traced run on a hardware profile (io/hardware/hardware_estimate.hpp);
// prints a table, writes the JSON with --json, and adds /egret/estimates/<profile> to the trace.
#include <cmath>
#include <cstdio>
#include <string>

#include "cli/commands.hpp"
#include "io/event_csv.hpp"
#include "io/hardware/hardware_estimate.hpp"

namespace egret::cli {
namespace {

// Energy by kind of work, from the per-operation energies of one layer.
double kind(const LayerEstimate& L, std::initializer_list<const char*> operations) {
  double s = 0;
  for (const char* op : operations) {
    const auto it = L.energy_j_by_operation.find(op);
    if (it != L.energy_j_by_operation.end()) s += it->second;
  }
  return s;
}

std::string joules(double j) {
  char buf[32];
  if (!std::isfinite(j)) return "-";
  if (j == 0) return "0";
  const double a = std::abs(j);
  if (a < 1e-9)
    std::snprintf(buf, sizeof buf, "%.3g pJ", j * 1e12);
  else if (a < 1e-6)
    std::snprintf(buf, sizeof buf, "%.3g nJ", j * 1e9);
  else if (a < 1e-3)
    std::snprintf(buf, sizeof buf, "%.3g uJ", j * 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3g mJ", j * 1e3);
  return buf;
}

std::string seconds(double s) {
  char buf[32];
  if (!std::isfinite(s)) return "- (no time in the profile)";
  if (s < 1e-3)
    std::snprintf(buf, sizeof buf, "%.3g us", s * 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  return buf;
}

void print_estimate(const HardwareEstimate& e, const std::string& trace) {
  std::printf("%s on %s: %llu sample(s)", trace.c_str(), e.profile.name.c_str(),
              static_cast<unsigned long long>(e.samples));
  if (e.profile.has_mapping)
    std::printf(", %llu core(s) on %llu tile(s)", static_cast<unsigned long long>(e.cores),
                static_cast<unsigned long long>(e.tiles));
  std::printf("\n  %s\n", e.profile.description.c_str());
  std::printf("%-8s %-16s %5s %12s %12s %12s %12s %12s %12s\n", "layer", "type", "cores", "energy",
              "synaptic", "gate prod.", "neurons", "spikes", "memory");
  for (const auto& L : e.layers) {
    double total = 0;
    for (double v : L.energy_j) total += v;
    total /= L.energy_j.empty() ? 1.0 : static_cast<double>(L.energy_j.size());
    std::printf(
        "%-8s %-16s %5llu %12s %12s %12s %12s %12s %12s\n", L.name.c_str(), L.type.c_str(),
        static_cast<unsigned long long>(L.cores), joules(total).c_str(),
        joules(kind(L, {"synaptic_ac", "synaptic_mac"})).c_str(),
        joules(kind(L, {"gate_product"})).c_str(),
        joules(kind(L, {"neuron_update_active", "neuron_update_inactive"})).c_str(),
        joules(kind(L, {"spike_generation", "spike_packet", "hop_east_west", "hop_north_south"}))
            .c_str(),
        joules(kind(L, {"weight_read_64bit", "state_access_64bit"})).c_str());
  }
  std::printf("per sample: energy %s, latency %s\n", joules(e.mean_energy_j()).c_str(),
              seconds(e.mean_latency_s()).c_str());
  std::printf(
      "(energy per sample, mean over samples; every constant's source and the mapping "
      "assumptions: --json, profiles/%s.json, docs/metrics.md)\n",
      e.profile.name.c_str());
}

}  // namespace

int run_estimate(const std::string& trace, const Options& options) {
  const std::string profile_name =
      options.count("--profile") ? options.at("--profile") : "loihi_davies2018";
  const HardwareProfile profile = load_hardware_profile(profile_name);
  if (options.count("--json")) check_output_file(options.at("--json"), "--json");
  const TraceData data = read_trace_file(trace);
  const HardwareEstimate e = estimate_hardware(data, trace, profile);
  print_estimate(e, trace);
  if (options.count("--json")) write_file_atomically(options.at("--json"), estimate_json(e) + "\n");
  add_estimate_to_trace(trace, e);
  std::printf("added /egret/estimates/%s to %s\n", profile.name.c_str(), trace.c_str());
  return 0;
}

}  // namespace egret::cli
