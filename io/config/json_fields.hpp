// Strict reading of JSON configuration fields, shared by the network and training
// configurations: every error names the file (origin), the place (where) and what is wrong.
#pragma once

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace egret::json_fields {

using nlohmann::json;

// The path of `key` inside `where` ("training.loss"; a top-level key is its own name).
inline std::string key_path(const std::string& where, const char* key) {
  return where.empty() || where == "top level" ? std::string(key) : where + "." + key;
}

[[noreturn]] inline void fail(const std::string& origin, const std::string& where,
                              const std::string& what) {
  throw std::invalid_argument(origin + ": " + where + ": " + what);
}

// `obj` must be an object whose keys are all in `known`.
inline void check_keys(const json& obj, const std::set<std::string>& known,
                       const std::string& origin, const std::string& where) {
  if (!obj.is_object()) fail(origin, where, "expected an object");
  for (const auto& item : obj.items()) {
    if (!known.count(item.key())) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      fail(origin, where, "unknown key '" + item.key() + "' (known: " + list + ")");
    }
  }
}

// A finite number, or (allow_inf) the strings "inf" / "infinity".
inline double number(const json& obj, const char* key, double fallback, const std::string& origin,
                     const std::string& where, bool allow_inf = false) {
  if (!obj.contains(key)) return fallback;
  const json& v = obj.at(key);
  if (v.is_number() && std::isfinite(v.get<double>())) return v.get<double>();
  if (allow_inf && v.is_string() && (v == "inf" || v == "infinity"))
    return std::numeric_limits<double>::infinity();
  fail(origin, key_path(where, key),
       std::string("expected a number") + (allow_inf ? " or \"inf\"" : "") + ", got " + v.dump());
}

inline long long integer(const json& obj, const char* key, long long fallback, long long min,
                         const std::string& origin, const std::string& where) {
  if (!obj.contains(key)) return fallback;
  const json& v = obj.at(key);
  if (!v.is_number_integer() || v.get<long long>() < min)
    fail(origin, key_path(where, key),
         "expected an integer >= " + std::to_string(min) + ", got " + v.dump());
  return v.get<long long>();
}

inline std::vector<double> numbers(const json& obj, const char* key, const std::string& origin,
                                   const std::string& where) {
  std::vector<double> out;
  if (!obj.contains(key)) return out;
  const json& v = obj.at(key);
  if (!v.is_array()) fail(origin, key_path(where, key), "expected an array of numbers");
  for (const auto& t : v) {
    if (!t.is_number() || !std::isfinite(t.get<double>()))
      fail(origin, key_path(where, key), "expected finite numbers, got " + t.dump());
    out.push_back(t.get<double>());
  }
  return out;
}

}  // namespace egret::json_fields
