// Fuzz target nmnist_bin: N-MNIST 5-byte events (.bin) through egret::read_nmnist_bin.
#include "tests/fuzz/fuzz_camera.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  egret::fuzz::fuzz_camera_reader(egret::read_nmnist_bin, data, size, ".bin");
  return 0;
}
