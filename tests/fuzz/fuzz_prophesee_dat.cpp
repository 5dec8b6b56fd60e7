// Fuzz target prophesee_dat: Prophesee DAT (Event2D) through egret::read_prophesee_dat.
#include "tests/fuzz/fuzz_camera.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  egret::fuzz::fuzz_camera_reader(egret::read_prophesee_dat, data, size, ".dat");
  return 0;
}
