// Fuzz target frame_list: frame lists (images.txt: "<seconds> <relative path>" per line) through
// egret::read_frame_list. Accepted times are finite and increasing.
#include <cmath>

#include "camera/formats/frame_files.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = egret::fuzz::write_input(data, size, ".txt");
  egret::fuzz::expect_result_or_clear_error([&] {
    const auto frames = egret::read_frame_list(path);
    for (std::size_t i = 0; i < frames.size(); ++i)
      if (!std::isfinite(frames[i].time_s) || (i > 0 && !(frames[i - 1].time_s < frames[i].time_s)))
        egret::fuzz::invariant_failed("frame_list: entry " + std::to_string(i) +
                                      " has a non-finite or non-increasing time");
  });
  return 0;
}
