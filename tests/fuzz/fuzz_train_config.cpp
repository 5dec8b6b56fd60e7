// Fuzz target train_config: training configurations (JSON) through egret::load_train_config.
#include "io/config/train_config.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = egret::fuzz::write_input(data, size, ".json");
  egret::fuzz::expect_result_or_clear_error([&] { (void)egret::load_train_config(path); });
  return 0;
}
