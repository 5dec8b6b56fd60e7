// Plain-text event files. Input events: one event per line, `t,channel[,value]` (t in ms,
// value 1 if omitted), an optional header line starting with a letter, '#' comments. Traces:
// `time_ms,layer,unit,value`, written to a temporary name and renamed when complete.
#pragma once

#include <string>
#include <vector>

#include "events/input_stream.hpp"
#include "sim/recorder.hpp"

namespace egret {

// Errors name the file and line. The stream is validated against `channels`. A 0-byte file is
// an error ("empty file"); a file with only a header or comments gives an empty stream.
InputStream<double> read_input_events_csv(const std::string& path, Index channels);

void write_trace_csv(const std::string& path, const std::vector<TraceEvent<double>>& trace);

// Writes `text` to `path` through a temporary file in the same directory and a rename, so that
// a failure never leaves a partial file under the final name.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace egret
