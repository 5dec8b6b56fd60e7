// `egret export-nir`: a network configuration or checkpoint as a NIR graph (io/nir/).
#include <cstdio>
#include <stdexcept>

#include "cli/commands.hpp"
#include "io/nir/nir_export.hpp"

namespace egret::cli {

int run_export_nir(const Args& args) {
  if (args.positional.size() != 2)
    throw std::invalid_argument(
        "export-nir needs NET.json|CKPT.h5 and OUT.nir (see egret export-nir --help)");
  const std::string& in = args.positional[0];
  const std::string& out = args.positional[1];
  check_output_file(out, "OUT.nir");
  nir::ExportOptions options;
  options.extension = args.options.count("--extension") > 0;
  nir::export_nir_file(in, out, options);
  std::printf("wrote %s (NIR graph of %s)\n", out.c_str(), in.c_str());
  return 0;
}

}  // namespace egret::cli
