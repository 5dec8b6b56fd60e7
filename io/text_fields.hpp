// Strict parsing of fields of text files (event CSVs, gesture label CSVs): the whole field,
// surrounding whitespace aside, must be the number.
#pragma once

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <istream>
#include <stdexcept>
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

// Lines of text files are at most this long; a longer "line" is refused, not read into memory.
inline constexpr std::size_t kMaxLine = 4096;

// Reads the next line (without '\n' or a trailing '\r') into `line`; false at the end of the
// file. A line longer than kMaxLine is an error naming `path` and the line number.
inline bool read_line(std::istream& in, std::string& line, const std::string& path,
                      std::size_t line_no) {
  line.clear();
  int c;
  while ((c = in.get()) != std::char_traits<char>::eof() && c != '\n') {
    if (line.size() == kMaxLine)
      throw std::invalid_argument(path + ":" + std::to_string(line_no) + ": line longer than " +
                                  std::to_string(kMaxLine) + " bytes");
    line.push_back(static_cast<char>(c));
  }
  if (c == std::char_traits<char>::eof() && line.empty()) return false;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

}  // namespace egret::text
