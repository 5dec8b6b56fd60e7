// Strict parsing of fields of text files (event CSVs, gesture label CSVs): the whole field,
// surrounding whitespace aside, must be the number.
#pragma once

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "events/event.hpp"

namespace egret::text {

inline std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// strtod accepts "nan"/"inf"; callers reject those with their own messages.
inline bool parse_double(const std::string& field, double& out) {
  const std::string f = trim(field);
  if (f.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(f.c_str(), &end);
  return end == f.c_str() + f.size() && errno != ERANGE;
}

inline bool parse_index(const std::string& field, Index& out) {
  const std::string f = trim(field);
  if (f.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(f.c_str(), &end, 10);
  if (end != f.c_str() + f.size() || errno == ERANGE) return false;
  out = static_cast<Index>(v);
  return true;
}

}  // namespace egret::text
