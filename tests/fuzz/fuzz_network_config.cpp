// Fuzz target network_config: network configurations (JSON) through egret::load_network_config,
// egret::build_network and a simulation with no input under a small budget, as
// `egret simulate --config F` runs them. Networks whose parameters would take more than 32 MB
// are legitimate but too large for the fuzzer's memory limit and are not built.
// The budget bounds work, not only events: an event of a continuous layer updates every unit
// of it, and under the fuzzer's coverage instrumentation a unit update costs about 1 us (40x
// a release build), so a self-firing 544-unit layer took 41 s for 1e5 events.
#include <algorithm>

#include "io/config/network_config.hpp"
#include "tests/fuzz/fuzz_input.hpp"

namespace {

// Parameter values the network holds (U, V, b per gate, theta, c_init; the readout).
double parameter_count(const egret::NetworkConfig& cfg) {
  double total = 0, inputs = static_cast<double>(cfg.input_channels);
  for (const auto& l : cfg.layers) {
    const double n = static_cast<double>(l.units);
    total += 3 * n * (inputs + n) + 5 * n;
    inputs = n;
  }
  return total + static_cast<double>(cfg.readout_classes) * (inputs + 1);
}

// Events allowed so that a run stays near 2 s instrumented: an event updates at most every unit
// (about 1 us each) and reads each weight at most once (a dense tick).
std::uint64_t event_budget_for_work(const egret::NetworkConfig& cfg) {
  double units = 1;
  for (const auto& l : cfg.layers) units += static_cast<double>(l.units);
  const double events = std::min({1e5, 2e6 / units, 1e8 / parameter_count(cfg)});
  return static_cast<std::uint64_t>(std::max(10.0, events));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = egret::fuzz::write_input(data, size, ".json");
  egret::fuzz::expect_result_or_clear_error([&] {
    const egret::NetworkConfig cfg = egret::load_network_config(path);
    if (parameter_count(cfg) > 4e6) return;
    auto net = egret::build_network<double>(cfg);
    auto options = egret::sim_options<double>(cfg);
    options.max_events = std::min(options.max_events, event_budget_for_work(cfg));
    const egret::InputStream<double> none({}, cfg.input_channels);
    const auto result = egret::simulate(net, none, options);
    if (result.events_processed > options.max_events)
      egret::fuzz::invariant_failed("simulate processed more events than its budget");
  });
  return 0;
}
