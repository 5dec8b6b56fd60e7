// Fuzz target evt2: Prophesee EVT 2.0 (.raw) through egret::read_evt2.
#include "tests/fuzz/fuzz_camera.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  egret::fuzz::fuzz_camera_reader(egret::read_evt2, data, size, ".raw");
  return 0;
}
