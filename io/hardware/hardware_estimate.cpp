#include "io/hardware/hardware_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "io/hdf5/hdf5.hpp"

namespace egret {
namespace {

constexpr double kPico = 1e-12, kNano = 1e-9;

// Where each layer's cores sit: layers take consecutive cores, cores fill tiles, tiles fill the
// mesh row by row (docs/metrics.md).
struct Placement {
  std::vector<std::uint64_t> first_core, cores;
  std::uint64_t total_cores = 0, tiles = 0;
};

Placement place(const std::vector<std::uint64_t>& units, const HardwareProfile& p,
                const std::string& where) {
  Placement pl;
  for (std::uint64_t n : units) {
    const std::uint64_t per_core =
        p.has_mapping ? static_cast<std::uint64_t>(p.neurons_per_core) : 0;
    const std::uint64_t c =
        per_core > 0 ? std::max<std::uint64_t>(1, (n + per_core - 1) / per_core) : 1;
    pl.first_core.push_back(pl.total_cores);
    pl.cores.push_back(c);
    pl.total_cores += c;
  }
  const auto per_tile = static_cast<std::uint64_t>(p.cores_per_tile);
  const std::uint64_t capacity = per_tile * static_cast<std::uint64_t>(p.mesh_width) *
                                 static_cast<std::uint64_t>(p.mesh_height);
  if (p.has_mapping && pl.total_cores > capacity)
    throw std::invalid_argument(where + ": the network needs " + std::to_string(pl.total_cores) +
                                " cores but profile " + p.name + " has " +
                                std::to_string(capacity) + " (" + p.mapping_source + ")");
  pl.tiles = (pl.total_cores + per_tile - 1) / per_tile;
  return pl;
}

// Mean |dx| and |dy| (tiles) from the cores of layer a to one core of layer b, summed over b's
// cores: the hops of one event of a sent to every core of b.
std::pair<double, double> hops_per_event(const Placement& pl, std::size_t a, std::size_t b,
                                         const HardwareProfile& p) {
  const auto xy = [&p](std::uint64_t core) {
    const std::uint64_t tile = core / static_cast<std::uint64_t>(p.cores_per_tile);
    const auto w = static_cast<std::uint64_t>(p.mesh_width);
    return std::pair<double, double>{static_cast<double>(tile % w), static_cast<double>(tile / w)};
  };
  double ew = 0, ns = 0;
  for (std::uint64_t d = 0; d < pl.cores[b]; ++d) {
    const auto [xd, yd] = xy(pl.first_core[b] + d);
    for (std::uint64_t s = 0; s < pl.cores[a]; ++s) {
      const auto [xs, ys] = xy(pl.first_core[a] + s);
      ew += std::abs(xs - xd);
      ns += std::abs(ys - yd);
    }
  }
  const auto sources = static_cast<double>(pl.cores[a]);
  return {ew / sources, ns / sources};
}

// SANA-FE's table lookup (src/utils.hpp LookupTable::get): the entry of the largest tile count at
// or below the mapped tiles, or the first entry when every count is above it.
double step_sync_ns(const HardwareProfile& p, std::uint64_t tiles) {
  const auto& table = p.step_sync_ns_by_tiles;
  if (table.empty()) return 0;
  auto it = table.upper_bound(static_cast<long long>(tiles));
  if (it == table.begin()) return it->second;
  return std::prev(it)->second;
}

std::uint64_t attribute_count(const TraceData::Layer& L, const char* key,
                              const std::string& where) {
  const double v = L.metrics.at(key);
  if (!(v >= 0) || v > 9.0e15 || v != std::floor(v))
    throw std::invalid_argument(where + ": attribute " + key + " is not a count");
  return static_cast<std::uint64_t>(v);
}

LayerWork work_of(const TraceData::Layer& L, std::size_t s, const std::string& where) {
  LayerWork w;
  w.clocked = L.metrics.at("clocked") != 0;
  w.units = attribute_count(L, "units", where);
  w.dense_operations_per_step = attribute_count(L, "dense_operations_per_step", where);
  w.state_words_per_unit = attribute_count(L, "state_words_per_unit", where);
  w.scalar_bytes = attribute_count(L, "scalar_bytes", where);
  const auto& ps = L.per_sample;
  w.steps = ps.at("steps")[s];
  w.events = ps.at("events")[s];
  w.synaptic_macs = ps.at("synaptic_macs")[s];
  w.synaptic_acs = ps.at("synaptic_acs")[s];
  w.gate_products = ps.at("gate_products")[s];
  w.membrane_updates = ps.at("membrane_updates")[s];
  const double unit_steps = static_cast<double>(w.units) * static_cast<double>(w.steps);
  if (w.clocked && static_cast<double>(w.membrane_updates) > unit_steps)
    throw std::invalid_argument(where + ": sample " + std::to_string(s) + " has " +
                                std::to_string(w.membrane_updates) +
                                " membrane updates, more than its unit-ticks");
  return w;
}

}  // namespace

std::map<std::string, double> charged_operations(const LayerWork& w, const HardwareProfile& p,
                                                 std::uint64_t destination_cores,
                                                 double hops_east_west, double hops_north_south,
                                                 std::uint64_t packets_received) {
  const auto d = [](std::uint64_t v) { return static_cast<double>(v); };
  std::map<std::string, double> ops;
  const double unit_steps = d(w.units) * d(w.steps);
  ops["synaptic_mac"] =
      p.dense_synapses ? d(w.dense_operations_per_step) * d(w.steps) : d(w.synaptic_macs);
  ops["synaptic_ac"] = p.dense_synapses ? 0.0 : d(w.synaptic_acs);
  ops["gate_product"] = p.dense_synapses ? 0.0 : d(w.gate_products);
  ops["neuron_update_active"] = p.all_neurons ? unit_steps : d(w.membrane_updates);
  ops["neuron_update_inactive"] =
      p.all_neurons || !w.clocked ? 0.0 : unit_steps - d(w.membrane_updates);
  ops["spike_generation"] = d(w.events);
  ops["spike_packet"] = d(w.events) * d(destination_cores);
  ops["packet_in"] = d(packets_received);
  ops["hop_east_west"] = d(w.events) * hops_east_west;
  ops["hop_north_south"] = d(w.events) * hops_north_south;
  const double bytes = d(w.scalar_bytes);
  ops["weight_read_64bit"] = (ops["synaptic_mac"] + ops["synaptic_ac"]) * bytes / 8.0;
  ops["state_access_64bit"] =
      2.0 * ops["neuron_update_active"] * d(w.state_words_per_unit) * bytes / 8.0;
  return ops;
}

double HardwareEstimate::mean_energy_j() const {
  double s = 0;
  for (double e : energy_j) s += e;
  return energy_j.empty() ? 0.0 : s / static_cast<double>(energy_j.size());
}

double HardwareEstimate::mean_latency_s() const {
  if (latency_s.empty()) return std::numeric_limits<double>::quiet_NaN();
  double s = 0;
  for (double t : latency_s) s += t;
  return s / static_cast<double>(latency_s.size());
}

HardwareEstimate estimate_hardware(const TraceData& trace, const std::string& trace_path,
                                   const HardwareProfile& profile) {
  if (trace.format_version < 2)
    throw std::invalid_argument(trace_path + ": trace format version " +
                                std::to_string(trace.format_version) +
                                " has no operation counts; simulate again with this egret");
  HardwareEstimate e;
  e.profile = profile;
  e.samples = trace.sample_start.size();
  std::vector<std::uint64_t> units;
  for (const auto& L : trace.layers)
    units.push_back(attribute_count(L, "units", trace_path + ":/egret/metrics/" + L.name));
  const Placement pl = place(units, profile, trace_path);
  e.cores = pl.total_cores;
  e.tiles = pl.tiles;
  const double sync_ns = step_sync_ns(profile, pl.tiles);
  e.energy_j.assign(e.samples, 0.0);
  std::vector<double> busiest(e.samples, 0.0), steps(e.samples, 0.0);
  // Per sample, the events of the layer below (read once, when that layer was estimated).
  std::vector<std::uint64_t> events_below(e.samples, 0), events_here(e.samples, 0);
  for (std::size_t l = 0; l < trace.layers.size(); ++l) {
    const TraceData::Layer& L = trace.layers[l];
    const std::string where = trace_path + ":/egret/metrics/" + L.name;
    LayerEstimate le;
    le.name = L.name;
    le.type = L.type;
    le.cores = pl.cores[l];
    // One packet per event to every core of this layer (recurrence) and of the next.
    auto [ew, ns] = hops_per_event(pl, l, l, profile);
    std::uint64_t destinations = pl.cores[l];
    if (l + 1 < trace.layers.size()) {
      const auto [ew2, ns2] = hops_per_event(pl, l, l + 1, profile);
      ew += ew2;
      ns += ns2;
      destinations += pl.cores[l + 1];
    }
    for (std::size_t s = 0; s < e.samples; ++s) {
      const LayerWork w = work_of(L, s, where);
      // Each core of this layer receives one packet per event of its own layer and of the one
      // below (the same packets that layer's spike_packet counts).
      events_here[s] = w.events;
      const std::uint64_t received = (w.events + events_below[s]) * pl.cores[l];
      double energy = 0, time = 0;
      for (const auto& [op, count] :
           charged_operations(w, profile, destinations, ew, ns, received)) {
        const OperationCost& c = profile.cost(op);
        energy += count * c.energy_pj * kPico;
        time += count * c.time_ns * kNano;
        le.operations[op] += count / static_cast<double>(e.samples);
        le.energy_j_by_operation[op] +=
            count * c.energy_pj * kPico / static_cast<double>(e.samples);
      }
      le.energy_j.push_back(energy);
      le.busy_s.push_back(time / static_cast<double>(le.cores));
      e.energy_j[s] += energy;
      busiest[s] = std::max(busiest[s], le.busy_s.back());
      steps[s] = std::max(steps[s], static_cast<double>(w.steps));
    }
    e.layers.push_back(std::move(le));
    events_below.swap(events_here);
  }
  if (profile.has_latency())
    for (std::size_t s = 0; s < e.samples; ++s)
      e.latency_s.push_back(busiest[s] + steps[s] * sync_ns * kNano);
  return e;
}

std::string estimate_json(const HardwareEstimate& e) {
  using nlohmann::json;
  const auto finite_or_null = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json j;
  j["profile"] = e.profile.name;
  j["description"] = e.profile.description;
  j["samples"] = e.samples;
  j["cores"] = e.cores;
  j["tiles"] = e.tiles;
  j["energy_j_per_sample"] = e.mean_energy_j();
  j["latency_s_per_sample"] = finite_or_null(e.mean_latency_s());
  j["per_sample"] = {{"energy_j", e.energy_j}, {"latency_s", e.latency_s}};
  for (const auto& L : e.layers) {
    double mean = 0;
    for (double v : L.energy_j) mean += v;
    json lj = {{"name", L.name},
               {"type", L.type},
               {"cores", L.cores},
               {"energy_j_per_sample", L.energy_j.empty() ? 0.0 : mean / L.energy_j.size()},
               {"energy_j_by_operation", L.energy_j_by_operation},
               {"operations_per_sample", L.operations}};
    j["layers"].push_back(lj);
  }
  json sources;
  for (const auto& [op, c] : e.profile.costs) sources[op] = c.source;
  if (!e.profile.step_sync_source.empty()) sources["step_sync"] = e.profile.step_sync_source;
  j["sources"] = sources;
  j["assumptions"] = e.profile.assumptions;
  return j.dump(2);
}

void add_estimate_to_trace(const std::string& trace_path, const HardwareEstimate& e) {
  namespace fs = std::filesystem;
  const std::string tmp = trace_path + ".tmp-egret-estimate";
  std::error_code ec;
  fs::copy_file(trace_path, tmp, fs::copy_options::overwrite_existing, ec);
  if (ec) throw std::runtime_error(trace_path + ": cannot copy for writing: " + ec.message());
  try {
    {
      h5::Id file = h5::open_file_write(tmp);
      const hid_t f = file.get();
      h5::Id est = h5::exists(f, "egret/estimates") ? h5::open_group(f, "egret/estimates", tmp)
                                                    : h5::create_group(f, "egret/estimates");
      if (h5::exists(est.get(), e.profile.name)) h5::remove_link(est.get(), e.profile.name, tmp);
      h5::Id g = h5::create_group(est.get(), e.profile.name);
      h5::write_attribute(g.get(), "description", e.profile.description);
      h5::write_attribute(g.get(), "energy_j_per_sample", e.mean_energy_j());
      h5::write_attribute(g.get(), "latency_s_per_sample", e.mean_latency_s());
      h5::write_attribute(g.get(), "json", estimate_json(e));
      h5::write_vector(g.get(), "energy_j", e.energy_j);
      if (!e.latency_s.empty()) h5::write_vector(g.get(), "latency_s", e.latency_s);
      for (const auto& L : e.layers) {
        h5::Id lg = h5::create_group(g.get(), L.name);
        h5::write_vector(lg.get(), "energy_j", L.energy_j);
        h5::write_attribute(lg.get(), "cores", static_cast<std::int64_t>(L.cores));
        for (const auto& [op, v] : L.energy_j_by_operation)
          h5::write_attribute(lg.get(), "energy_j_" + op, v);
      }
      h5::flush_file(f, tmp);
    }
    fs::rename(tmp, trace_path);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
}

}  // namespace egret
