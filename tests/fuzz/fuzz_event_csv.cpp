// Fuzz target event_csv: input-event CSV files (t,channel[,value]) through
// egret::read_input_events_csv, for a 16-channel network. Accepted events must be on a channel
// of the network, at finite, non-negative, sorted times.
#include <cmath>

#include "io/event_csv.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = egret::fuzz::write_input(data, size, ".csv");
  egret::fuzz::expect_result_or_clear_error([&] {
    const auto stream = egret::read_input_events_csv(path, 16);
    double last = 0;
    for (std::size_t i = 0; i < stream.size(); ++i) {
      const auto& e = stream[i];
      if (!std::isfinite(e.time) || e.time < last || e.channel < 0 || e.channel >= 16 ||
          !std::isfinite(e.value))
        egret::fuzz::invariant_failed("event_csv: event " + std::to_string(i) +
                                      " is not a valid input event");
      last = e.time;
    }
  });
  return 0;
}
