// Fuzz target npy_events: .npy structured event arrays through egret::read_npy_events, then
// to_frames on what they hold.
#include "tests/fuzz/fuzz_event_array.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  egret::fuzz::fuzz_event_array_reader(egret::read_npy_events, data, size, ".npy");
  return 0;
}
