// The LIF family (models/lif/lif_cell.hpp) on the tick schedule: a spike train worked by hand, the
// soft reset and the recurrent columns, a configuration with only type, units and dt, strict
// keys, and the float build agreeing with the double one.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "io/config/network_config.hpp"
#include "models/lif/lif_cell.hpp"
#include "models/tick/tick_layer.hpp"
#include "sim/engine.hpp"

namespace {

using egret::Index;
using LifParameters = egret::LifParams<double>;

egret::SimResult<double> run(const LifParameters& p,
                             const std::vector<egret::InputEvent<double>>& in, double end,
                             std::vector<double> snapshots = {}) {
  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::TickLayer<double, egret::LifCell>>(
      std::make_shared<LifParameters>(p)));
  egret::SimOptions<double> opt;
  opt.end_time = end;
  opt.snapshot_times = std::move(snapshots);
  return egret::simulate(net, egret::InputStream<double>(in, p.inputs()), opt);
}

// One input channel, two units. alpha = 1/2 (tau_mem = dt / ln 2), theta = 1, W = (0.6, 0.2),
// V[1][0] = 0.5 (unit 0's spike drives unit 1), no bias. Input 1 at ticks 1, 2, 3:
//   unit 0: v = 0.6, 0.9, 1.05 (spikes at tick 3), then 0.525 - 1 = -0.475 at tick 4.
//   unit 1: v = 0.2, 0.3, 0.35, then 0.175 + 0.5 = 0.675 at tick 4 (unit 0's spike arrives).
TEST(Lif, SpikeTrainAndSoftResetByHand) {
  LifParameters p;
  p.W.resize(2, 1);
  p.W << 0.6, 0.2;
  p.V.setZero(2, 2);
  p.V(1, 0) = 0.5;
  p.b.setZero(2);
  p.theta.setConstant(2, 1.0);
  p.dt = 1.0;
  p.tau_mem.setConstant(2, 1.0 / std::log(2.0));
  const auto r = run(p, {{0.5, 0, 1.0}, {1.5, 0, 1.0}, {2.5, 0, 1.0}}, 4.0, {3.0, 4.0});
  ASSERT_EQ(r.trace.size(), 1u);
  EXPECT_EQ(r.trace[0].time, 3.0);
  EXPECT_EQ(r.trace[0].unit, 0);
  EXPECT_EQ(r.trace[0].value, 1.0);
  const auto& v3 = r.snapshots[0].layers[0].at("v");
  const auto& v4 = r.snapshots[1].layers[0].at("v");
  EXPECT_NEAR(v3[0], 1.05, 1e-15);
  EXPECT_NEAR(v3[1], 0.35, 1e-15);
  EXPECT_NEAR(v4[0], -0.475, 1e-15);
  EXPECT_NEAR(v4[1], 0.675, 1e-15);
  EXPECT_EQ(r.snapshots[0].layers[0].at("s")[0], 1.0);
  EXPECT_EQ(r.snapshots[1].layers[0].at("s")[0], 0.0);
  EXPECT_EQ(r.layers[0].internal_steps, 4u);
}

// Per-unit membrane time constants: unit 0 with alpha = 1/2 (tau_mem = dt / ln 2), unit 1 with
// alpha = 1/4 (tau_mem = dt / ln 4), theta = 1, W = (0.6, 0.8), no recurrence, no bias. Input 1 at
// ticks 1, 2, 3:
//   unit 0: v = 0.6, 0.9, 1.05 (spikes at tick 3), then 0.525 - 1 = -0.475 at tick 4.
//   unit 1: v = 0.8, 1.0 (not above theta), 1.05 (spikes at tick 3), then 0.2625 - 1 = -0.7375.
TEST(Lif, PerUnitTimeConstantsByHand) {
  LifParameters p;
  p.W.resize(2, 1);
  p.W << 0.6, 0.8;
  p.V.setZero(2, 2);
  p.b.setZero(2);
  p.theta.setConstant(2, 1.0);
  p.dt = 1.0;
  p.tau_mem.resize(2);
  p.tau_mem << 1.0 / std::log(2.0), 1.0 / std::log(4.0);
  const auto alpha = p.decay();
  EXPECT_EQ(alpha[0], std::exp(-1.0 / p.tau_mem[0]));
  EXPECT_EQ(alpha[1], std::exp(-1.0 / p.tau_mem[1]));
  const auto r = run(p, {{0.5, 0, 1.0}, {1.5, 0, 1.0}, {2.5, 0, 1.0}}, 4.0, {2.0, 3.0, 4.0});
  ASSERT_EQ(r.trace.size(), 2u);
  EXPECT_EQ(r.trace[0].time, 3.0);
  EXPECT_EQ(r.trace[0].unit, 0);
  EXPECT_EQ(r.trace[1].time, 3.0);
  EXPECT_EQ(r.trace[1].unit, 1);
  const auto& v2 = r.snapshots[0].layers[0].at("v");
  const auto& v3 = r.snapshots[1].layers[0].at("v");
  const auto& v4 = r.snapshots[2].layers[0].at("v");
  EXPECT_NEAR(v2[0], 0.9, 1e-15);
  EXPECT_NEAR(v2[1], 1.0, 1e-15);
  EXPECT_NEAR(v3[0], 1.05, 1e-15);
  EXPECT_NEAR(v3[1], 1.05, 1e-15);
  EXPECT_NEAR(v4[0], -0.475, 1e-15);
  EXPECT_NEAR(v4[1], -0.7375, 1e-15);
}

// Without recurrence between them, the units of a layer with tau_mem = (a, b) are, event for event,
// a one-unit layer with a and one with b.
TEST(Lif, PerUnitLayerIsItsUnitsAsSeparateLayers) {
  LifParameters p;
  p.W.resize(2, 3);
  p.W << 0.7, -0.2, 0.5, 0.3, 0.6, 0.4;
  p.V.setZero(2, 2);
  p.V(0, 0) = 0.15;
  p.V(1, 1) = -0.1;
  p.b.resize(2);
  p.b << 0.05, -0.02;
  p.theta.resize(2);
  p.theta << 1.0, 0.8;
  p.dt = 0.5;
  p.tau_mem.resize(2);
  p.tau_mem << 8.0, 13.0;
  std::vector<egret::InputEvent<double>> in;
  for (int i = 0; i < 150; ++i) in.push_back({0.1 + 0.2 * i, i % 3, 0.4 + 0.1 * (i % 5)});
  const auto both = run(p, in, 30.0);
  std::size_t spikes = 0;
  for (Index n = 0; n < 2; ++n) {
    LifParameters q;
    q.W = p.W.row(n);
    q.V.setConstant(1, 1, p.V(n, n));
    q.b.setConstant(1, p.b[n]);
    q.theta.setConstant(1, p.theta[n]);
    q.dt = p.dt;
    q.tau_mem.setConstant(1, p.tau_mem[n]);
    const auto alone = run(q, in, 30.0);
    std::vector<double> times;
    for (const auto& e : both.trace)
      if (e.unit == n) times.push_back(e.time);
    ASSERT_EQ(times.size(), alone.trace.size()) << "unit " << n;
    for (std::size_t i = 0; i < times.size(); ++i) EXPECT_EQ(times[i], alone.trace[i].time);
    EXPECT_GT(times.size(), 5u) << "unit " << n;
    spikes += times.size();
  }
  EXPECT_EQ(spikes, both.trace.size());
}

// Every entry of tau_mem is checked, and the error names the entry.
TEST(Lif, NonPositiveOrNanTimeConstantEntryIsRefusedByIndex) {
  LifParameters p = LifParameters::random(4, 2, 1, {});
  p.validate();
  EXPECT_EQ(p.tau_mem.size(), 4);
  EXPECT_TRUE((p.tau_mem.array() == 20.0).all());
  const double bad[] = {0.0, -3.0, std::nan(""), std::numeric_limits<double>::infinity(), 1e-9};
  for (double v : bad) {
    LifParameters q = p;
    q.tau_mem[3] = v;
    try {
      q.validate("layer 0");
      FAIL() << "tau_mem[3] = " << v << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("layer 0: tau_mem[3]"), std::string::npos) << e.what();
    }
  }
  LifParameters short_tau = p;
  short_tau.tau_mem.setConstant(3, 20.0);
  EXPECT_THROW(short_tau.validate(), std::invalid_argument);
}

TEST(Lif, TypeUnitsAndDtBuildALayerAndUnknownKeysAreRefused) {
  const auto cfg = egret::parse_network_config(
      R"({"input_channels": 3, "layers": [{"type": "lif", "units": 8, "dt": 1}]})", "test");
  auto net = egret::build_network<double>(cfg);
  EXPECT_EQ(net.layer(0).type_name(), "lif");
  EXPECT_EQ(net.layer(0).units(), 8);
  EXPECT_TRUE(net.layer(0).has_adjoint());
  try {
    egret::parse_network_config(
        R"({"input_channels": 3, "layers": [{"type": "lif", "units": 8, "tau_m": 5}]})", "test");
    FAIL() << "tau_m (a continuous EGRU key) was accepted for a lif layer";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown key 'tau_m' for a lif layer"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(egret::parse_network_config(
                   R"({"input_channels": 3, "layers": [{"type": "lif", "units": 8,
                       "tau_mem": 1e-9}]})",
                   "test"),
               std::invalid_argument);
}

TEST(Lif, FloatAgreesWithDouble) {
  const auto cfg = egret::parse_network_config(
      R"({"seed": 3, "input_channels": 4, "layers": [{"type": "lif", "units": 16, "dt": 0.5,
          "tau_mem": 8, "threshold": 0.5, "init": {"weight_scale": 3}}]})",
      "test");
  auto nd = egret::build_network<double>(cfg);
  auto nf = egret::build_network<float>(cfg);
  std::vector<egret::InputEvent<double>> in;
  std::vector<egret::InputEvent<float>> in_f;
  for (int i = 0; i < 200; ++i) {
    const double t = 0.1 + 0.25 * i;
    in.push_back({t, i % 4, 1.0});
    in_f.push_back({static_cast<float>(t), i % 4, 1.0f});
  }
  egret::SimOptions<double> od;
  od.end_time = 50;
  egret::SimOptions<float> of;
  of.end_time = 50;
  const auto rd = egret::simulate(nd, egret::InputStream<double>(in, 4), od);
  const auto rf = egret::simulate(nf, egret::InputStream<float>(in_f, 4), of);
  ASSERT_GT(rd.trace.size(), 100u);
  // Spike trains may differ where v lands within float rounding of theta: allow 2 %.
  const double diff =
      std::abs(static_cast<double>(rd.trace.size()) - static_cast<double>(rf.trace.size()));
  EXPECT_LE(diff, 0.02 * static_cast<double>(rd.trace.size()));
}

}  // namespace
