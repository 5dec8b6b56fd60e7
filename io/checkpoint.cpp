#include "io/checkpoint.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "io/event_csv.hpp"
#include "io/network_config.hpp"

namespace egret {

void write_checkpoint(const std::string& path, const Checkpoint& c) {
  nlohmann::json j;
  j["format"] = "egret-checkpoint";
  j["version"] = 1;
  j["config"] = c.config_text;
  j["epoch"] = c.epoch;
  j["values"] = c.values;
  j["adam_m"] = c.adam_m;
  j["adam_v"] = c.adam_v;
  j["optimizer_steps"] = c.optimizer_steps;
  j["rng_state"] = c.rng_state;
  write_file_atomically(path, j.dump() + "\n");
}

Checkpoint read_checkpoint(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text_file(path, "checkpoint"));
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(path + ": not a valid checkpoint: " + e.what());
  }
  if (!j.is_object() || j.value("format", "") != "egret-checkpoint")
    throw std::invalid_argument(path + ": not an egret checkpoint");
  if (j.value("version", 0) != 1)
    throw std::invalid_argument(path + ": unsupported checkpoint version");
  Checkpoint c;
  try {
    c.config_text = j.at("config").get<std::string>();
    c.epoch = j.at("epoch").get<int>();
    c.values = j.at("values").get<std::vector<double>>();
    c.adam_m = j.at("adam_m").get<std::vector<double>>();
    c.adam_v = j.at("adam_v").get<std::vector<double>>();
    c.optimizer_steps = j.at("optimizer_steps").get<std::int64_t>();
    c.rng_state = j.at("rng_state").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(path + ": checkpoint is missing a field: " + e.what());
  }
  return c;
}

}  // namespace egret
