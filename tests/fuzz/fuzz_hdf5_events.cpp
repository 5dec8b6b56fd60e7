// Fuzz target hdf5_events: HDF5 event arrays (a compound dataset or a group of x, y, p, t)
// through egret::read_hdf5_events, then to_frames on what they hold.
#include "tests/fuzz/fuzz_event_array.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  egret::fuzz::fuzz_event_array_reader(egret::read_hdf5_events, data, size, ".h5");
  return 0;
}
