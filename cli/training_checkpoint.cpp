#include "cli/training_checkpoint.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace egret::cli {

std::string loop_state_json(const LoopState& s) {
  nlohmann::json j;
  j["held_out_streak"] = s.held_out_streak;
  j["first_epoch_rates"] = s.first_epoch_rates;
  // JSON has no NaN: an exact adjoint's (undefined) backward sparsity is null.
  j["last_backward_sparsity"] = std::isnan(s.last_backward_sparsity)
                                    ? nlohmann::json(nullptr)
                                    : nlohmann::json(s.last_backward_sparsity);
  j["has_last_epoch"] = s.has_last_epoch;
  return j.dump();
}

LoopState parse_loop_state(const std::string& text, const std::string& where) {
  LoopState s;
  if (text.empty()) return s;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    s.held_out_streak = j.at("held_out_streak").get<int>();
    s.first_epoch_rates = j.at("first_epoch_rates").get<std::vector<double>>();
    const auto& b = j.at("last_backward_sparsity");
    s.last_backward_sparsity = b.is_null() ? std::nan("") : b.get<double>();
    s.has_last_epoch = j.at("has_last_epoch").get<bool>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(where + ": attribute training_loop: " + e.what());
  }
  if (s.held_out_streak < 0)
    throw std::runtime_error(where + ": attribute training_loop: held_out_streak " +
                             std::to_string(s.held_out_streak) + " < 0");
  for (double r : s.first_epoch_rates)
    if (!(r >= 0) || !std::isfinite(r))
      throw std::runtime_error(where + ": attribute training_loop: a first-epoch rate is " +
                               std::to_string(r) + ", not a finite rate >= 0");
  return s;
}

template <class Scalar>
Checkpoint training_snapshot(Trainer<Scalar>& trainer, const std::string& config_text, int epoch,
                             const LoopState& loop) {
  Checkpoint c;
  c.config_text = config_text;
  c.epoch = epoch;
  const auto widened = [](const auto& v) { return std::vector<double>(v.begin(), v.end()); };
  c.values = widened(trainer.parameters().values());  // exact: float widens without loss
  c.adam_m = widened(trainer.optimizer().first_moment());
  c.adam_v = widened(trainer.optimizer().second_moment());
  c.optimizer_steps = trainer.optimizer().steps();
  std::ostringstream rng;
  rng << trainer.rng();
  c.rng_state = rng.str();
  c.loop_state = loop_state_json(loop);
  return c;
}

template <class Scalar>
void restore_training_state(Trainer<Scalar>& trainer, const Checkpoint& c,
                            const std::string& file) {
  // Before format 4 a per-unit time constant was one value per layer (docs/formats.md): it is
  // given to every unit, whose Adam moments start at 0.
  const bool format3 = c.format_version < 4;
  const auto& pv = trainer.parameters();
  if (c.values.size() != (format3 ? pv.format3_size() : pv.size()))
    throw std::invalid_argument(file +
                                ": checkpoint does not match the network of its "
                                "configuration (" +
                                std::to_string(c.values.size()) +
                                " trainable values, the network " + std::to_string(pv.size()) +
                                ")");
  const std::string values_at = file + ": /training/values";
  auto values = format3 ? pv.from_format3(c.values, false, values_at) : c.values;
  const auto moments = [&](const std::vector<double>& v, const char* what) {  // none: SGD
    return format3 && !v.empty() ? pv.from_format3(v, true, file + ": " + what) : v;
  };
  auto m = moments(c.adam_m, "/training/adam_m");
  auto v = moments(c.adam_v, "/training/adam_v");
  trainer.parameters().values() = cast_values<Scalar>(values, values_at);
  trainer.optimizer().restore(std::move(m), std::move(v), c.optimizer_steps);
  std::istringstream is(c.rng_state);
  is >> trainer.rng();
  if (!is) throw std::invalid_argument(file + ": attribute rng_state: corrupt generator state");
}

template <class Scalar>
void write_training_checkpoint(const std::string& path, const Checkpoint& c,
                               const Trainer<Scalar>& trainer) {
  const Network<Scalar> trained = trainer.network();
  write_checkpoint(path, c, &trained);
}

#define EGRET_TRAINING_CHECKPOINT(Scalar)                                                        \
  template Checkpoint training_snapshot(Trainer<Scalar>&, const std::string&, int,               \
                                        const LoopState&);                                       \
  template void restore_training_state(Trainer<Scalar>&, const Checkpoint&, const std::string&); \
  template void write_training_checkpoint(const std::string&, const Checkpoint&,                 \
                                          const Trainer<Scalar>&);
EGRET_TRAINING_CHECKPOINT(double)
EGRET_TRAINING_CHECKPOINT(float)
#undef EGRET_TRAINING_CHECKPOINT

}  // namespace egret::cli
