// Fuzz target nir_graph: NIR graph files (.nir, HDF5) through egret::nir::read_nir_file, then
// the import (nested graphs, the chain of layers, each family's mapping, the network built to
// check it) at a 1 ms tick.
#include "io/nir/nir_import.hpp"
#include "io/nir/nir_reader.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = egret::fuzz::write_input(data, size, ".nir");
  egret::fuzz::expect_result_or_clear_error([&] {
    const egret::nir::File file = egret::nir::read_nir_file(path);
    // Every edge the reader accepted names nodes of its graph.
    for (const auto& e : file.graph.edges)
      if (!file.graph.find(e.from) || !file.graph.find(e.to))
        egret::fuzz::invariant_failed("nir_graph: an edge names a node the graph does not have");
    egret::nir::ImportOptions options;
    options.dt_ms = 1;
    const std::string config = egret::nir::import_config(file, path, options);
    if (config.empty()) egret::fuzz::invariant_failed("nir_graph: an empty configuration");
  });
  return 0;
}
