// Fuzz target png: the frames the sensor model reads (8/16-bit PNG through libpng) via
// egret::read_png_gray. An accepted frame holds width x height intensities in [0, 1].
#include "camera/formats/frame_files.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = egret::fuzz::write_input(data, size, ".png");
  egret::fuzz::expect_result_or_clear_error([&] {
    const egret::GrayFrame f = egret::read_png_gray(path);
    if (f.width <= 0 || f.height <= 0 ||
        f.pixels.size() != static_cast<std::size_t>(f.width) * static_cast<std::size_t>(f.height))
      egret::fuzz::invariant_failed("png: pixel count does not match width x height");
    for (float v : f.pixels)
      if (!(v >= 0 && v <= 1)) egret::fuzz::invariant_failed("png: intensity outside [0, 1]");
  });
  return 0;
}
