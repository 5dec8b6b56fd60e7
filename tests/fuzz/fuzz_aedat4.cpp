// Fuzz target aedat4: AEDAT 4.0 (LZ4 / uncompressed flatbuffer packets) through egret::read_aedat4.
#include "tests/fuzz/fuzz_camera.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  egret::fuzz::fuzz_camera_reader(egret::read_aedat4, data, size, ".aedat4");
  return 0;
}
