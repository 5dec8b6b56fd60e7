// Fuzz target gesture_labels: DVS128 Gesture label CSVs (class,startTime_usec,endTime_usec)
// through egret::read_gesture_labels. Accepted labels have a class in 1-11 and start < end.
#include "camera/datasets/dvs_gesture.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = egret::fuzz::write_input(data, size, "_labels.csv");
  egret::fuzz::expect_result_or_clear_error([&] {
    for (const auto& l : egret::read_gesture_labels(path))
      if (l.cls < 1 || l.cls > 11 || !(l.start_us < l.end_us))
        egret::fuzz::invariant_failed("gesture_labels: accepted an invalid label");
  });
  return 0;
}
