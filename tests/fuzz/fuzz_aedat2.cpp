// Fuzz target aedat2: jAER AEDAT 2.0 through egret::read_aedat2.
#include "tests/fuzz/fuzz_camera.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  egret::fuzz::fuzz_camera_reader(egret::read_aedat2, data, size, ".aedat");
  return 0;
}
