#include "io/event_csv.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "io/text_fields.hpp"

namespace egret {
namespace {

using text::parse_double;
using text::parse_index;
using text::trim;

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
