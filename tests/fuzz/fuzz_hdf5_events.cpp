// Fuzz target hdf5_events: HDF5 event arrays (a compound dataset or a group of x, y, p, t)
// through egret::read_hdf5_events, then to_frames on what they hold.
#include "tests/fuzz/fuzz_event_array.hpp"

// TODO: the HDF5 readers are about to validate each file in a forked child first
// (h5::validate_in_child). The fuzzer must see inside libhdf5 instead: in-process, so that
// sanitizer reports and hangs surface here rather than as the child's "libhdf5 crashed" error
// (and the child's address-space limit does not fight ASan's shadow memory). Turn the child off
// here (LLVMFuzzerInitialize) once io/hdf5/hdf5.hpp offers a switch for it.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  egret::fuzz::fuzz_event_array_reader(egret::read_hdf5_events, data, size, ".h5");
  return 0;
}
