#include "io/event_csv.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace egret {
namespace {

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// Strict number parse: the whole field must be a number (strtod accepts "nan"/"inf", which the
// input stream then rejects with its own message).
bool parse_double(const std::string& field, double& out) {
  const std::string f = trim(field);
  if (f.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(f.c_str(), &end);
  return end == f.c_str() + f.size() && errno != ERANGE;
}

bool parse_index(const std::string& field, Index& out) {
  const std::string f = trim(field);
  if (f.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(f.c_str(), &end, 10);
  if (end != f.c_str() + f.size() || errno == ERANGE) return false;
  out = static_cast<Index>(v);
  return true;
}

}  // namespace

InputStream<double> read_input_events_csv(const std::string& path, Index channels) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open input event file");
  std::vector<InputEvent<double>> events;
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (line_no == 1 && std::isalpha(static_cast<unsigned char>(t[0]))) continue;  // header
    std::vector<std::string> fields;
    std::stringstream ss(t);
    std::string f;
    while (std::getline(ss, f, ',')) fields.push_back(f);
    auto fail = [&](const std::string& what) {
      throw std::invalid_argument(path + ":" + std::to_string(line_no) + ": " + what + ": '" + t +
                                  "'");
    };
    if (fields.size() < 2 || fields.size() > 3) fail("expected t,channel[,value]");
    InputEvent<double> e;
    if (!parse_double(fields[0], e.time)) fail("time is not a number");
    if (!parse_index(fields[1], e.channel)) fail("channel is not an integer");
    if (fields.size() == 3 && !parse_double(fields[2], e.value)) fail("value is not a number");
    events.push_back(e);
  }
  try {
    return InputStream<double>(std::move(events), channels);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp-egret";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot create output file");
    out << text;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename the finished file into place");
  }
}

void write_trace_csv(const std::string& path, const std::vector<TraceEvent<double>>& trace) {
  std::ostringstream os;
  os.precision(17);
  os << "time_ms,layer,unit,value\n";
  for (const auto& e : trace)
    os << e.time << ',' << e.layer << ',' << e.unit << ',' << e.value << '\n';
  write_file_atomically(path, os.str());
}

}  // namespace egret
