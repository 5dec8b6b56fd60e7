// `egret import-nir`: the network configuration that runs a NIR graph (io/nir/).
#include <cstdio>
#include <stdexcept>

#include "cli/commands.hpp"
#include "io/nir/nir_import.hpp"
#include "models/shared/parameter_checks.hpp"

namespace egret::cli {

int run_import_nir(const Args& args) {
  if (args.positional.size() != 2)
    throw std::invalid_argument(
        "import-nir needs IN.nir and NET.json (see egret import-nir --help)");
  const std::string& in = args.positional[0];
  const std::string& out = args.positional[1];
  check_output_file(out, "NET.json");
  nir::ImportOptions options;
  if (args.options.count("--dt")) {
    options.dt_ms = parse_time(args.options.at("--dt"), "--dt");
    if (!(options.dt_ms >= kMinTimeScaleMs))
      throw std::invalid_argument("--dt must be at least " + std::to_string(kMinTimeScaleMs) +
                                  " ms, got '" + args.options.at("--dt") + "'");
  }
  nir::import_nir_file(in, out, options);
  std::printf("wrote %s (the network of %s)\n", out.c_str(), in.c_str());
  return 0;
}

}  // namespace egret::cli
