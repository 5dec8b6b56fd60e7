#include "io/event_csv.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
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

namespace {

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = line.find(',', from);
    fields.push_back(trim(line.substr(from, comma == std::string::npos ? comma : comma - from)));
    if (comma == std::string::npos) return fields;
    from = comma + 1;
  }
}

// A header is recognised by its exact column names: a time (t, t_ms, time, time_ms), channel,
// and optionally value. Anything else on the first line is data.
bool is_header(const std::vector<std::string>& f) {
  const bool time =
      !f.empty() && (f[0] == "t" || f[0] == "t_ms" || f[0] == "time" || f[0] == "time_ms");
  return time && (f.size() == 2 || f.size() == 3) && f[1] == "channel" &&
         (f.size() == 2 || f[2] == "value");
}

}  // namespace

InputStream<double> read_input_events_csv(const std::string& path, Index channels) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open input event file");
  // Nothing at all, not even a header, is what a failed export leaves: refused, like an empty
  // camera recording. A header without events is a run without input (the caller says so).
  if (in.peek() == std::ifstream::traits_type::eof())
    throw std::invalid_argument(path + ": empty file (0 bytes): no events");
  std::vector<InputEvent<double>> events;
  std::string line;
  bool first = true;
  for (std::size_t line_no = 1; text::read_line(in, line, path, line_no); ++line_no) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const std::vector<std::string> fields = split_fields(t);
    if (first && is_header(fields)) {
      first = false;
      continue;
    }
    first = false;
    auto fail = [&](const std::string& what) {
      throw std::invalid_argument(path + ":" + std::to_string(line_no) + ": " + what + ": '" + t +
                                  "'");
    };
    if (fields.size() < 2 || fields.size() > 3)
      fail("expected t,channel[,value] (or a header t_ms,channel,value on the first line)");
    InputEvent<double> e;
    if (!parse_double(fields[0], e.time)) fail("time is not a number");
    if (!std::isfinite(e.time)) fail("time is not finite");
    if (!parse_index(fields[1], e.channel)) fail("channel is not an integer");
    if (e.channel < 0 || e.channel >= channels)
      fail("channel out of range [0, " + std::to_string(channels) + ")");
    if (fields.size() == 3 && !parse_double(fields[2], e.value)) fail("value is not a number");
    if (!std::isfinite(e.value)) fail("value is not finite");
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
