#include "io/hardware/hardware_profile.hpp"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "io/builtin_profiles.hpp"
#include "io/config/json_fields.hpp"
#include "io/config/network_config.hpp"

namespace egret {
namespace {

using json_fields::fail;
using nlohmann::json;

// Profile files are small; a larger file is refused before it is read.
constexpr std::uintmax_t kMaxProfileBytes = 1 << 20;

std::string string_field(const json& obj, const char* key, const std::string& origin,
                         const std::string& where, bool required) {
  if (!obj.contains(key)) {
    if (required) fail(origin, where + "." + key, "missing (every profile value names its source)");
    return "";
  }
  if (!obj.at(key).is_string() || obj.at(key).get<std::string>().empty())
    fail(origin, where + "." + key, "expected a non-empty string");
  return obj.at(key).get<std::string>();
}

// A cost of one operation: finite, non-negative energy and time, and a source.
OperationCost cost(const json& c, const std::string& origin, const std::string& where) {
  json_fields::check_keys(c, {"energy_pj", "time_ns", "source"}, origin, where);
  OperationCost out;
  out.energy_pj = json_fields::number(c, "energy_pj", 0, origin, where);
  out.has_time = c.contains("time_ns");
  out.time_ns = json_fields::number(c, "time_ns", 0, origin, where);
  if (out.energy_pj < 0 || out.time_ns < 0) fail(origin, where, "costs must be >= 0");
  out.source = string_field(c, "source", origin, where, true);
  return out;
}

void step_sync(const json& c, const std::string& origin, HardwareProfile& p) {
  const std::string where = "costs.step_sync";
  json_fields::check_keys(c, {"time_ns_by_tiles", "source"}, origin, where);
  p.step_sync_source = string_field(c, "source", origin, where, true);
  if (!c.contains("time_ns_by_tiles") || !c.at("time_ns_by_tiles").is_object() ||
      c.at("time_ns_by_tiles").empty())
    fail(origin, where + ".time_ns_by_tiles", "expected an object {\"<tiles>\": ns, ...}");
  for (const auto& item : c.at("time_ns_by_tiles").items()) {
    const std::string& k = item.key();
    if (k.empty() || k.size() > 9 || k.find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(k) < 1)
      fail(origin, where + ".time_ns_by_tiles", "key '" + k + "' is not a tile count >= 1");
    const json& v = item.value();
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
      fail(origin, where + ".time_ns_by_tiles." + k, "expected a finite time >= 0 [ns]");
    p.step_sync_ns_by_tiles[std::stoll(k)] = v.get<double>();
  }
}

void mapping(const json& m, const std::string& origin, HardwareProfile& p) {
  const std::string where = "mapping";
  json_fields::check_keys(
      m, {"neurons_per_core", "cores_per_tile", "mesh_width", "mesh_height", "source"}, origin,
      where);
  for (const char* k : {"neurons_per_core", "cores_per_tile", "mesh_width", "mesh_height"})
    if (!m.contains(k)) fail(origin, where + "." + k, "missing");
  p.neurons_per_core = json_fields::integer(m, "neurons_per_core", 0, 1, origin, where);
  p.cores_per_tile = json_fields::integer(m, "cores_per_tile", 0, 1, origin, where);
  p.mesh_width = json_fields::integer(m, "mesh_width", 0, 1, origin, where);
  p.mesh_height = json_fields::integer(m, "mesh_height", 0, 1, origin, where);
  for (long long v : {p.neurons_per_core, p.cores_per_tile, p.mesh_width, p.mesh_height})
    if (v > 1'000'000'000) fail(origin, where, "a size beyond 1e9 is not a chip");
  p.mapping_source = string_field(m, "source", origin, where, true);
  p.has_mapping = true;
}

std::string choice(const json& root, const char* key, const std::string& a, const std::string& b,
                   const std::string& origin) {
  const std::string v = string_field(root, key, origin, "top level", true);
  if (v != a && v != b) fail(origin, key, "expected \"" + a + "\" or \"" + b + "\", got " + v);
  return v;
}

}  // namespace

bool HardwareProfile::has_latency() const {
  if (!step_sync_ns_by_tiles.empty()) return true;
  for (const auto& entry : costs)
    if (entry.second.has_time) return true;
  return false;
}

const OperationCost& HardwareProfile::cost(const std::string& operation) const {
  static const OperationCost none;
  const auto it = costs.find(operation);
  return it == costs.end() ? none : it->second;
}

HardwareProfile parse_hardware_profile(const std::string& json_text, const std::string& origin) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::exception& e) {  // parse errors and out-of-range numbers (1e999)
    throw std::invalid_argument(origin + ": not valid JSON: " + e.what());
  }
  json_fields::check_keys(
      root,
      {"name", "description", "source", "synapses", "neurons", "costs", "mapping", "assumptions"},
      origin, "top level");
  HardwareProfile p;
  p.name = string_field(root, "name", origin, "top level", true);
  p.description = string_field(root, "description", origin, "top level", true);
  p.source = string_field(root, "source", origin, "top level", true);
  p.dense_synapses = choice(root, "synapses", "effective", "dense", origin) == "dense";
  p.all_neurons = choice(root, "neurons", "updated", "all", origin) == "all";
  if (!root.contains("costs") || !root.at("costs").is_object())
    fail(origin, "costs", "expected an object of operation costs");
  for (const auto& item : root.at("costs").items()) {
    if (item.key() == "step_sync") {
      step_sync(item.value(), origin, p);
      continue;
    }
    bool known = false;
    for (const auto& k : kProfileOperations) known = known || k == item.key();
    if (!known) {
      std::string list;
      for (const auto& k : kProfileOperations) list += k + ", ";
      fail(origin, "costs",
           "unknown operation '" + item.key() + "' (known: " + list + "step_sync)");
    }
    p.costs[item.key()] = cost(item.value(), origin, "costs." + item.key());
  }
  if (root.contains("mapping")) mapping(root.at("mapping"), origin, p);
  if (root.contains("assumptions")) {
    const json& a = root.at("assumptions");
    if (!a.is_array()) fail(origin, "assumptions", "expected a list of strings");
    for (const auto& s : a) {
      if (!s.is_string()) fail(origin, "assumptions", "expected a list of strings");
      p.assumptions.push_back(s.get<std::string>());
    }
  }
  return p;
}

std::vector<std::string> builtin_profile_names() {
  std::vector<std::string> names;
  for (const auto& [name, text] : builtin::kHardwareProfiles) names.emplace_back(name);
  return names;
}

HardwareProfile load_hardware_profile(const std::string& name_or_path) {
  for (const auto& [name, text] : builtin::kHardwareProfiles)
    if (name_or_path == name) return parse_hardware_profile(text, "profile " + name_or_path);
  std::error_code ec;
  const auto size = std::filesystem::file_size(name_or_path, ec);
  if (ec) {
    std::string names;
    for (const auto& n : builtin_profile_names()) names += (names.empty() ? "" : ", ") + n;
    throw std::invalid_argument("hardware profile '" + name_or_path +
                                "': neither a built-in profile (" + names +
                                ") nor a readable file");
  }
  if (size > kMaxProfileBytes)
    throw std::invalid_argument(name_or_path + ": " + std::to_string(size) +
                                " bytes is too large for a hardware profile (at most 1 MiB)");
  return parse_hardware_profile(read_text_file(name_or_path, "hardware profile"), name_or_path);
}

}  // namespace egret
