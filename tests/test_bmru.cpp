// The BMRU family (models/bmru/bmru_cell.hpp) on the tick schedule: a state worked by hand, its
// delta events (only changes are sent; a tick that changes nothing sends nothing), the held output
// trace seen by point and window readouts, and the layer above holding its input.
#include <gtest/gtest.h>

#include <cmath>

#include "io/config/network_config.hpp"
#include "models/bmru/bmru_cell.hpp"
#include "models/tick/tick_layer.hpp"
#include "sim/engine.hpp"

namespace {

using BmruParameters = egret::BmruParams<double>;

// One input channel, one unit: h_hat = x, beta = |0.5|, alpha = 1. Inputs (impulse): +1 at tick
// 1, none at tick 2, -2 at tick 3, +0.3 at tick 4.
//   tick 1: |1| > 0.5, h = S(1) = 1         -> sends +1
//   tick 2: |0| < 0.5, h stays 1            -> sends nothing
//   tick 3: |-2| > 0.5, h = S(-2) = -1      -> sends -2
//   tick 4: |0.3| < 0.5, h stays -1         -> sends nothing
TEST(Bmru, HeldStateAndDeltaEventsByHand) {
  BmruParameters p;
  p.W_x.setConstant(1, 1, 1.0);
  p.b_x.setZero(1);
  p.W_beta.setZero(1, 1);
  p.b_beta.setConstant(1, 0.5);
  p.alpha.setConstant(1, 1.0);
  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::TickLayer<double, egret::BmruCell>>(
      std::make_shared<BmruParameters>(p)));
  egret::SimOptions<double> opt;
  opt.end_time = 4.0;
  opt.readout_times = {0.5, 2.5, 3.0, 4.0};
  opt.readout_windows = {{1.0, 3.0}, {2.0, 4.0}};
  const auto r = egret::simulate(
      net, egret::InputStream<double>({{0.5, 0, 1.0}, {2.5, 0, -2.0}, {3.5, 0, 0.3}}, 1), opt);
  ASSERT_EQ(r.trace.size(), 2u);
  EXPECT_EQ(r.trace[0].time, 1.0);
  EXPECT_EQ(r.trace[0].value, 1.0);
  EXPECT_EQ(r.trace[1].time, 3.0);
  EXPECT_EQ(r.trace[1].value, -2.0);
  EXPECT_EQ(r.layers[0].internal_steps, 4u);
  // the readout holds h: 0 before tick 1, 1 until tick 3 (a point at 3.0 follows its events)
  EXPECT_EQ(r.readouts[0].trace[0], 0.0);
  EXPECT_EQ(r.readouts[1].trace[0], 1.0);
  EXPECT_EQ(r.readouts[2].trace[0], -1.0);
  EXPECT_EQ(r.readouts[3].trace[0], -1.0);
  EXPECT_DOUBLE_EQ(r.readouts[4].trace[0], 1.0);  // mean of h over [1, 3]
  EXPECT_DOUBLE_EQ(r.readouts[5].trace[0], 0.0);  // over [2, 4]: 1 then -1
}

// A BMRU layer feeding a LIF layer: the LIF layer holds its input, so its drive at every tick is
// W h_k of the layer below (not W times the changes), whatever the order of the changes.
TEST(Bmru, TheLayerAboveSeesTheHeldState) {
  const auto cfg = egret::parse_network_config(
      R"({"seed": 2, "input_channels": 3, "layers": [
          {"type": "bmru", "units": 4, "init": {"weight_scale": 3, "bias_beta": 0.2}},
          {"type": "lif", "units": 1, "tau_mem": 1e6, "threshold": 1e6,
           "init": {"weight_scale": 1, "recurrent_scale": 0}}]})",
      "test");
  auto net = egret::build_network<double>(cfg);
  std::vector<egret::InputEvent<double>> in;
  for (int k = 0; k < 40; ++k) in.push_back({0.5 + k, k % 3, (k % 5) - 2.0});
  egret::SimOptions<double> opt;
  opt.end_time = 40;
  for (int k = 1; k <= 40; ++k) opt.snapshot_times.push_back(k);
  const auto r = egret::simulate(net, egret::InputStream<double>(in, 3), opt);
  const auto lif = net.layer(1).parameters();
  const auto& W = lif.at("W", "test");
  const double b = lif.at("b", "test")(0, 0);
  const double alpha = std::exp(-1.0 / 1e6);
  double v = 0;
  int changes = 0;
  for (const auto& e : r.trace) changes += e.layer == 0;
  ASSERT_GT(changes, 10);
  for (const auto& snap : r.snapshots) {
    const auto& h = snap.layers[0].at("h");
    double drive = b;
    for (int m = 0; m < 4; ++m) drive += W(0, m) * h[static_cast<std::size_t>(m)];
    v = alpha * v + drive;
    EXPECT_NEAR(snap.layers[1].at("v")[0], v, 1e-9 * (1 + std::abs(v))) << snap.time;
  }
}

}  // namespace
