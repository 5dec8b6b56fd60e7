// `egret demo`: a two-layer continuous-time EGRU on a synthetic sweeping event stream.
#include <chrono>
#include <cstdio>
#include <vector>

#include "cli/builtin_layers.hpp"
#include "cli/commands.hpp"
#include "cli/summary.hpp"
#include "events/synthetic_input.hpp"
#include "io/config/network_config.hpp"

namespace egret::cli {

namespace {

egret::NetworkConfig default_config(double end_ms) {
  egret::NetworkConfig cfg;
  cfg.seed = 7;
  cfg.input_channels = 32;
  egret::LayerConfig l0 =
      egret::parse_layer_config(egret::builtin::kDemoLayer, "built-in demo layer");
  egret::LayerConfig l1 = l0;
  l1.units = 32;
  cfg.layers = {l0, l1};
  cfg.end_time = end_ms;
  cfg.readout_times = {end_ms};
  return cfg;
}

}  // namespace

int run_demo(const Args& args) {
  const long samples = args.options.count("--samples")
                           ? parse_positive_int(args.options.at("--samples"), "--samples")
                           : 8;
  const long threads = args.options.count("--threads")
                           ? parse_positive_int(args.options.at("--threads"), "--threads")
                           : 0;
  const double end_ms = args.options.count("--end-time")
                            ? parse_time(args.options.at("--end-time"), "--end-time")
                            : 1000.0;
  egret::NetworkConfig cfg = default_config(end_ms);
  if (args.options.count("--precision"))
    cfg.precision = egret::parse_precision(args.options.at("--precision"), "--precision");
  std::printf(
      "egret main job (built-in default): %zu continuous-time EGRU layers (box kernel), "
      "%lld input channels, %ld samples of %.0f ms of synthetic sweeping input\n",
      cfg.layers.size(), static_cast<long long>(cfg.input_channels), samples, end_ms);
  return egret::with_precision(cfg.precision, [&](auto scalar) {
    using Scalar = decltype(scalar);
    auto net = egret::build_network<Scalar>(cfg);
    std::vector<egret::InputStream<Scalar>> inputs;
    for (long s = 0; s < samples; ++s) {
      inputs.push_back(egret::sweep_input<Scalar>(cfg.input_channels, 6, 200.0, 5.0,
                                                  250.0 + 25.0 * s, end_ms,
                                                  1000 + static_cast<std::uint64_t>(s)));
    }
    const auto t0 = std::chrono::steady_clock::now();
    const auto results = egret::simulate_batch(net, inputs, egret::sim_options<Scalar>(cfg),
                                               static_cast<int>(threads));
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    print_summary(net, results, wall);
    return 0;
  });
}

}  // namespace egret::cli
