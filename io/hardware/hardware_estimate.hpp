// Energy and latency of a traced run on a hardware profile (io/hardware/hardware_profile.hpp), per
// sample and per layer, from the exact counts a trace keeps per sample (io/hdf5/trace_file.hpp).
// The mapping and every charging rule are in docs/metrics.md; `egret estimate` and egret.estimate
// call this.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "io/hardware/hardware_profile.hpp"
#include "io/hdf5/trace_file.hpp"

namespace egret {

// What one layer does in one sample, as the profile charges it.
struct LayerWork {
  bool clocked = false;
  std::uint64_t units = 0, steps = 0, events = 0;
  std::uint64_t synaptic_macs = 0, synaptic_acs = 0, gate_products = 0, membrane_updates = 0;
  std::uint64_t dense_operations_per_step = 0, state_words_per_unit = 0, scalar_bytes = 8;
};

struct LayerEstimate {
  std::string name, type;
  std::uint64_t cores = 1;
  std::vector<double> energy_j;  // per sample
  std::vector<double> busy_s;    // per sample: the layer's work time divided by its cores
  std::map<std::string, double> energy_j_by_operation;  // mean per sample
  std::map<std::string, double> operations;             // mean per sample, as charged
};

struct HardwareEstimate {
  HardwareProfile profile;
  std::uint64_t samples = 0, cores = 0, tiles = 0;
  std::vector<LayerEstimate> layers;
  std::vector<double> energy_j;   // per sample, all layers
  std::vector<double> latency_s;  // per sample; empty when the profile gives no time
  double mean_energy_j() const;
  double mean_latency_s() const;  // NaN when not estimated
};

// The charged operation counts of one layer-sample (docs/metrics.md), by operation name.
std::map<std::string, double> charged_operations(const LayerWork& w, const HardwareProfile& p,
                                                 std::uint64_t destination_cores,
                                                 double mean_hops_east_west,
                                                 double mean_hops_north_south,
                                                 std::uint64_t packets_received);

// Estimates a trace (format 2) on a profile; refuses a trace without per-sample counts, counts
// that contradict each other, and a network that does not fit the profile's mesh.
HardwareEstimate estimate_hardware(const TraceData& trace, const std::string& trace_path,
                                   const HardwareProfile& profile);

std::string estimate_json(const HardwareEstimate& e);

// Adds (or replaces) /egret/estimates/<profile> in the trace file: written into a copy that is
// renamed over the trace, so the trace is never left half-written.
void add_estimate_to_trace(const std::string& trace_path, const HardwareEstimate& e);

}  // namespace egret
