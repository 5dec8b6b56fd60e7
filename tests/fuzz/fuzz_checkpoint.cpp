// Fuzz target checkpoint: HDF5 training checkpoints through egret::read_checkpoint.
#include "io/hdf5/checkpoint.hpp"
#include "tests/fuzz/fuzz_input.hpp"

// TODO: the HDF5 readers are about to validate each file in a forked child first
// (h5::validate_in_child). The fuzzer must see inside libhdf5 instead: in-process, so that
// sanitizer reports and hangs surface here rather than as the child's "libhdf5 crashed" error
// (and the child's address-space limit does not fight ASan's shadow memory). Turn the child off
// here (LLVMFuzzerInitialize) once io/hdf5/hdf5.hpp offers a switch for it.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = egret::fuzz::write_input(data, size, ".h5");
  egret::fuzz::expect_result_or_clear_error([&] {
    const egret::Checkpoint c = egret::read_checkpoint(path);
    // The optimizer's state is absent (a network's checkpoint) or one value per trainable value.
    const bool no_state = c.adam_m.empty() && c.adam_v.empty();
    if (!no_state && (c.adam_m.size() != c.values.size() || c.adam_v.size() != c.values.size()))
      egret::fuzz::invariant_failed("checkpoint: optimizer state and values differ in length");
  });
  return 0;
}
