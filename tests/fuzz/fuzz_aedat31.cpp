// Fuzz target aedat31: AEDAT 3.1 polarity packets through egret::read_aedat31.
#include "tests/fuzz/fuzz_camera.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  egret::fuzz::fuzz_camera_reader(egret::read_aedat31, data, size, ".aedat");
  return 0;
}
