// The spiking-gated linear recurrent family (models/spiking_gated/spiking_gated_cell.hpp,
// spiking-gate paper Eq. 7-10) on the tick schedule: a gate and a state worked by hand (the PSN's
// memory keeps the gate open a tick after its input, delta events of the state), the stochastic
// threshold of taped runs against the documented hash, written again here, the same training for
// one and two threads, a configuration with only type, units and dt, and refused keys and
// parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "io/config/network_config.hpp"
#include "io/config/train_config.hpp"
#include "models/spiking_gated/spiking_gated_cell.hpp"
#include "models/tick/tick_layer.hpp"
#include "sim/engine.hpp"
#include "train/delay_copy_task.hpp"

namespace {

using SpikingGatedParameters = egret::SpikingGatedParams<double>;

SpikingGatedParameters one_unit() {
  SpikingGatedParameters p;
  p.W_x.setConstant(1, 1, 2.0);
  p.b_x.setZero(1);
  p.W_c.setZero(1, 1);
  p.b_c.setConstant(1, std::sqrt(3.0));  // rho = 2
  p.W_i.setConstant(1, 1, 1.0);
  p.b_i.setZero(1);
  p.inv_tau_m.setConstant(1, std::log(2.0));  // leak 1/2 at dt = 1
  p.theta = 0;
  p.noise_width = 1.2;  // untaped runs: V = 0.6
  return p;
}

egret::Network<double> network_of(const SpikingGatedParameters& p) {
  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::TickLayer<double, egret::SpikingGatedCell>>(
      std::make_shared<SpikingGatedParameters>(p)));
  return net;
}

// One channel, one unit, leak r = 1/2, threshold 0.6 (theta + w/2 without a tape), W_x = 2,
// c = sqrt(3) tanh(2) / 2. Input 1 at ticks 1 and 3, 2 at tick 4:
//   tick 1: m = 0.5        silent            h = 0
//   tick 2: m = 0.25       silent            h = 0
//   tick 3: m = 0.625      spikes            h = c 0 + 2           -> sends 2
//   tick 4: m = 1.3125     spikes            h = 2c + 4            -> sends 2c + 2
//   tick 5: m = 0.65625    spikes (no input) h = c (2c + 4)        -> sends (c - 1)(2c + 4)
//   tick 6: m = 0.328125   silent            h carried             -> sends nothing
TEST(SpikingGated, GateAndStateByHand) {
  auto net = network_of(one_unit());
  egret::SimOptions<double> opt;
  opt.end_time = 6;
  opt.snapshot_times = {5, 6};
  const auto r = egret::simulate(
      net, egret::InputStream<double>({{0.5, 0, 1.0}, {2.5, 0, 1.0}, {3.5, 0, 2.0}}, 1), opt);
  const double c = std::sqrt(3.0) * std::tanh(2.0) / 2;
  ASSERT_EQ(r.trace.size(), 3u);
  EXPECT_EQ(r.trace[0].time, 3.0);
  EXPECT_NEAR(r.trace[0].value, 2.0, 1e-15);
  EXPECT_EQ(r.trace[1].time, 4.0);
  EXPECT_NEAR(r.trace[1].value, 2 * c + 2, 1e-14);
  EXPECT_EQ(r.trace[2].time, 5.0);
  EXPECT_NEAR(r.trace[2].value, (c - 1) * (2 * c + 4), 1e-14);
  EXPECT_EQ(r.layers[0].internal_steps, 6u);
  const auto& at5 = r.snapshots[0].layers[0];
  const auto& at6 = r.snapshots[1].layers[0];
  EXPECT_NEAR(at5.at("m")[0], 0.65625, 1e-15);
  EXPECT_EQ(at5.at("s")[0], 1.0);
  EXPECT_NEAR(at5.at("h")[0], c * (2 * c + 4), 1e-14);
  EXPECT_NEAR(at6.at("m")[0], 0.328125, 1e-15);
  EXPECT_EQ(at6.at("s")[0], 0.0);
  EXPECT_EQ(at6.at("h")[0], at5.at("h")[0]);  // carried exactly
}

// The float build on the same case: the same spikes, the values within float rounding.
TEST(SpikingGated, FloatAgreesWithDoubleOnTheHandCase) {
  const SpikingGatedParameters pd = one_unit();
  egret::SpikingGatedParams<float> pf;
  pf.W_x = pd.W_x.cast<float>();
  pf.b_x = pd.b_x.cast<float>();
  pf.W_c = pd.W_c.cast<float>();
  pf.b_c = pd.b_c.cast<float>();
  pf.W_i = pd.W_i.cast<float>();
  pf.b_i = pd.b_i.cast<float>();
  pf.inv_tau_m = pd.inv_tau_m.cast<float>();
  pf.noise_width = 1.2f;
  egret::Network<float> net;
  net.add_layer(std::make_unique<egret::TickLayer<float, egret::SpikingGatedCell>>(
      std::make_shared<egret::SpikingGatedParams<float>>(pf)));
  egret::SimOptions<float> opt;
  opt.end_time = 6;
  const auto r = egret::simulate(
      net, egret::InputStream<float>({{0.5f, 0, 1.0f}, {2.5f, 0, 1.0f}, {3.5f, 0, 2.0f}}, 1), opt);
  const double c = std::sqrt(3.0) * std::tanh(2.0) / 2;
  ASSERT_EQ(r.trace.size(), 3u);
  EXPECT_NEAR(r.trace[0].value, 2.0, 1e-6);
  EXPECT_NEAR(r.trace[1].value, 2 * c + 2, 1e-6);
  EXPECT_NEAR(r.trace[2].value, (c - 1) * (2 * c + 4), 1e-6);
}

// SplitMix64 and the noise of unit i at tick k as docs/model.md states them, independently of
// models/spiking_gated/spiking_gated_cell.hpp.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
double documented_noise(std::uint64_t seed, std::uint64_t k, std::uint64_t i) {
  return static_cast<double>(mix(mix(mix(seed) ^ k) ^ i) >> 11) / 9007199254740992.0;
}

// A constant gate current 0.55 and a leak of 1: m = 0.55 at every tick. Without a tape the
// threshold is 0 + 1/2 and every gate fires; with a tape (training) it is X ~ U(0, 1) and a gate
// fires exactly where X(seed, k, i) < 0.55, the same in every taped run.
TEST(SpikingGated, StochasticThresholdOfTapedRunsFollowsTheDocumentedHash) {
  const int units = 8, ticks = 30;
  SpikingGatedParameters p;
  p.W_x.setZero(units, 1);
  p.b_x.setConstant(units, 1.0);
  p.W_c.setZero(units, 1);
  p.b_c.setZero(units);
  p.W_i.setZero(units, 1);
  p.b_i.setConstant(units, 0.55);
  p.inv_tau_m.setConstant(units, 60.0);  // leak 1 - e^-60 = 1 in double
  p.noise_width = 1;
  p.noise_seed = 12345;
  auto net = network_of(p);
  egret::SimOptions<double> opt;
  opt.end_time = ticks;
  for (int k = 1; k <= ticks; ++k) opt.snapshot_times.push_back(k);
  const egret::InputStream<double> none({}, 1);
  const auto untaped = egret::simulate(net, none, opt);
  for (const auto& snap : untaped.snapshots)
    for (int i = 0; i < units; ++i) EXPECT_EQ(snap.layers[0].at("s")[i], 1.0);
  int fired = 0;
  std::vector<double> first;
  for (int run = 0; run < 2; ++run) {
    egret::Tape<double> tape;
    opt.tape = &tape;
    const auto taped = egret::simulate(net, none, opt);
    std::vector<double> gates;
    for (int k = 1; k <= ticks; ++k) {
      const auto& s = taped.snapshots[static_cast<std::size_t>(k - 1)].layers[0].at("s");
      for (int i = 0; i < units; ++i) {
        const double x =
            documented_noise(12345, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(i));
        EXPECT_EQ(s[static_cast<std::size_t>(i)], x < 0.55 ? 1.0 : 0.0) << k << " " << i;
        gates.push_back(s[static_cast<std::size_t>(i)]);
        fired += run == 0 && x < 0.55;
      }
    }
    if (run == 0) first = gates;
    EXPECT_EQ(gates, first);
  }
  EXPECT_GT(fired, 90);   // about 0.55 of 240
  EXPECT_LT(fired, 170);  // and not all: the noise is real
}

egret::TrainRunConfig example_config() {
  return egret::load_train_config(std::string(EGRET_SOURCE_DIR) +
                                  "/examples/delay_copy_spiking_gated.json");
}

// The stochastic threshold depends on (layer seed, tick, unit) only: training on 2 threads gives
// the same parameters as on 1.
TEST(SpikingGated, SameTrainingForOneAndTwoThreads) {
  auto cfg = example_config();
  const auto train = egret::delay_copy_trials<double>(cfg.delay_copy, 32, 5);
  std::vector<std::vector<double>> values;
  for (int threads : {1, 2}) {
    cfg.training.threads = threads;
    egret::Trainer<double> trainer(egret::build_network<double>(cfg.network), cfg.training);
    for (int e = 0; e < 3; ++e) trainer.train_epoch(train);
    values.push_back(trainer.parameters().values());
  }
  const auto initial =
      egret::ParameterVector<double>(egret::build_network<double>(cfg.network), false).values();
  EXPECT_NE(values[0], initial);
  EXPECT_EQ(values[0], values[1]);
}

TEST(SpikingGated, TypeUnitsAndDtBuildALayer) {
  const auto cfg = egret::parse_network_config(
      R"({"input_channels": 3, "layers": [{"type": "spiking_gated", "units": 8, "dt": 1}]})",
      "test");
  auto net = egret::build_network<double>(cfg);
  EXPECT_EQ(net.layer(0).type_name(), "spiking_gated");
  EXPECT_EQ(net.layer(0).units(), 8);
  EXPECT_TRUE(net.layer(0).has_adjoint());
  EXPECT_TRUE(net.layer(0).output_is_held());
  const auto params = net.layer(0).parameters();
  EXPECT_EQ(params.names(), "W_x, b_x, W_c, b_c, W_i, b_i, inv_tau_m");
  // the paper's initial 1/tau_m = 0.1 per tick
  EXPECT_NEAR(-std::expm1(-params.at("inv_tau_m", "test")(3, 0)), 0.1, 1e-15);
  EXPECT_EQ(params.at("b_c", "test")(0, 0), 2.0);
}

void expect_layer_refused(const std::string& layer, const std::string& words) {
  try {
    const auto cfg =
        egret::parse_network_config(R"({"input_channels": 2, "layers": [)" + layer + "]}", "test");
    egret::build_network<double>(cfg);
    FAIL() << layer << " was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(SpikingGated, BadKeysAndParametersAreRefusedByName) {
  expect_layer_refused(R"({"type": "spiking_gated", "units": 4, "tau_mem": 5})",
                       "unknown key 'tau_mem' for a spiking_gated layer");
  expect_layer_refused(R"({"type": "spiking_gated", "units": 4, "init": {"leak": 1}})",
                       "layers[0].init.leak");
  expect_layer_refused(R"({"type": "spiking_gated", "units": 4, "threshold_noise": -1})",
                       "threshold_noise");
  expect_layer_refused(R"({"type": "spiking_gated", "units": 4, "params": {"inv_tau_m": 0}})",
                       "inv_tau_m[0]: 0 is outside (0, inf)");
  expect_layer_refused(R"({"type": "spiking_gated", "units": 4, "params": {"W_c": [1, 2]}})",
                       "W_c");
}

}  // namespace
