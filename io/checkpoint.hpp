// Training checkpoints (JSON for now): the trainable values, the optimizer's state, the RNG
// state, the epoch and the configuration they belong to. Written atomically.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace egret {

struct Checkpoint {
  std::string config_text;  // the training configuration, verbatim
  int epoch = 0;
  std::vector<double> values;
  std::vector<double> adam_m, adam_v;
  std::int64_t optimizer_steps = 0;
  std::string rng_state;  // std::mt19937_64 state as text
};

void write_checkpoint(const std::string& path, const Checkpoint& c);
Checkpoint read_checkpoint(const std::string& path);

}  // namespace egret
