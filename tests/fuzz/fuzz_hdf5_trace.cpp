// Fuzz target hdf5_trace: HDF5 event traces through egret::read_trace_file (what
// `egret inspect` and `egret.read_trace` run).
#include "io/hdf5/trace_file.hpp"
#include "tests/fuzz/fuzz_input.hpp"

// TODO: the HDF5 readers are about to validate each file in a forked child first
// (h5::validate_in_child). The fuzzer must see inside libhdf5 instead: in-process, so that
// sanitizer reports and hangs surface here rather than as the child's "libhdf5 crashed" error
// (and the child's address-space limit does not fight ASan's shadow memory). Turn the child off
// here (LLVMFuzzerInitialize) once io/hdf5/hdf5.hpp offers a switch for it.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = egret::fuzz::write_input(data, size, ".h5");
  egret::fuzz::expect_result_or_clear_error([&] {
    const egret::TraceData d = egret::read_trace_file(path);
    for (const auto& layer : d.layers)
      if (layer.timestamps.size() != layer.node_ids.size())
        egret::fuzz::invariant_failed(layer.name + ": timestamps and node_ids differ in length");
  });
  return 0;
}
