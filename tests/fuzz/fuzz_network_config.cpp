// Fuzz target network_config: network configurations (JSON) through egret::load_network_config,
// egret::build_network and a simulation with no input under a small event budget, as
// `egret simulate --config F` runs them. Networks whose parameters would take more than 32 MB
// are legitimate but too large for the fuzzer's memory limit and are not built.
#include "io/network_config.hpp"
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = egret::fuzz::write_input(data, size, ".json");
  egret::fuzz::expect_result_or_clear_error([&] {
    const egret::NetworkConfig cfg = egret::load_network_config(path);
    if (parameter_count(cfg) > 4e6) return;
    auto net = egret::build_network<double>(cfg);
    auto options = egret::sim_options<double>(cfg);
    options.max_events = std::min<std::uint64_t>(options.max_events, 100000);
    const egret::InputStream<double> none({}, cfg.input_channels);
    const auto result = egret::simulate(net, none, options);
    if (result.events_processed > options.max_events)
      egret::fuzz::invariant_failed("simulate processed more events than its budget");
  });
  return 0;
}
