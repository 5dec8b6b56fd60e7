// Fuzz target trial_list: DVS128 Gesture split files (trials_to_train.txt: one .aedat name per
// line) through egret::read_trial_list.
#include "camera/datasets/dvs_gesture.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = egret::fuzz::write_input(data, size, ".txt");
  egret::fuzz::expect_result_or_clear_error([&] {
    for (const auto& name : egret::read_trial_list(path))
      if (name.empty()) egret::fuzz::invariant_failed("trial_list: an empty trial name");
  });
  return 0;
}
