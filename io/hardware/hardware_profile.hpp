// Hardware profiles (docs/metrics.md, profiles/*.json): what each counted operation costs on a
// device, with a citation beside every constant, and how a network is mapped onto it. egret ships
// the profiles in profiles/ (built in, by name); a user's own file loads the same way. Files are
// untrusted: parsing is strict, and every error names the file and the key.
//
//   {"name": ..., "description": ..., "source": ...,
//    "synapses": "effective" | "dense",   // charge the counted synaptic operations, or every
//                                          // synapse every step (a device without sparsity)
//    "neurons": "updated" | "all",         // charge the membrane updates (and idle unit-ticks at
//                                          // the inactive price), or every unit every step
//    "costs": {<operation>: {"energy_pj": e, "time_ns": t, "source": "..."}, ...},
//    "mapping": {"neurons_per_core", "cores_per_tile", "mesh_width", "mesh_height", "source"},
//    "assumptions": ["...", ...]}
//
// Operations (kProfileOperations): synaptic_ac, synaptic_mac, gate_product, neuron_update_active,
// neuron_update_inactive, spike_generation (per event), spike_packet (per destination core),
// packet_in (per packet a core receives), hop_east_west, hop_north_south, weight_read_64bit,
// state_access_64bit; and step_sync with
// {"time_ns_by_tiles": {"<tiles>": ns, ...}}. A missing operation costs nothing.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace egret {

inline const std::vector<std::string> kProfileOperations = {"synaptic_ac",
                                                            "synaptic_mac",
                                                            "gate_product",
                                                            "neuron_update_active",
                                                            "neuron_update_inactive",
                                                            "spike_generation",
                                                            "spike_packet",
                                                            "packet_in",
                                                            "hop_east_west",
                                                            "hop_north_south",
                                                            "weight_read_64bit",
                                                            "state_access_64bit"};

struct OperationCost {
  double energy_pj = 0;
  double time_ns = 0;
  bool has_time = false;
  std::string source;
};

struct HardwareProfile {
  std::string name, description, source;
  bool dense_synapses = false;  // "synapses": "dense"
  bool all_neurons = false;     // "neurons": "all"
  std::map<std::string, OperationCost> costs;
  std::map<long long, double> step_sync_ns_by_tiles;  // empty: no synchronisation cost
  std::string step_sync_source;
  // Mapping onto cores and a mesh of tiles; a profile without one maps everything to one core.
  bool has_mapping = false;
  long long neurons_per_core = 0, cores_per_tile = 1, mesh_width = 1, mesh_height = 1;
  std::string mapping_source;
  std::vector<std::string> assumptions;

  // Whether any time is given (else latency is not estimated).
  bool has_latency() const;
  const OperationCost& cost(const std::string& operation) const;  // zero cost if absent
};

// Parses a profile (JSON text); `origin` names the file in errors.
HardwareProfile parse_hardware_profile(const std::string& json_text, const std::string& origin);

// The profiles shipped in profiles/, by name.
std::vector<std::string> builtin_profile_names();
// A built-in profile by name, or else a profile file at that path.
HardwareProfile load_hardware_profile(const std::string& name_or_path);

}  // namespace egret
