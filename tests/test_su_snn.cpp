// The selective-update spiking family (models/su_snn/su_snn_cell.hpp) on the tick schedule: a spike
// train worked by hand through open and closed ticks (a closed unit above threshold stays silent
// and owes its reset to its next open tick), every gate open reproducing the LIF layer, and a
// configuration with only type, units and dt.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "io/config/network_config.hpp"
#include "models/lif/lif_cell.hpp"
#include "models/su_snn/su_snn_cell.hpp"
#include "models/tick/tick_layer.hpp"
#include "sim/engine.hpp"

namespace {

using SuSnnParameters = egret::SuSnnParams<double>;

template <template <class> class Cell, class Params>
egret::SimResult<double> run(const Params& p, const std::vector<egret::InputEvent<double>>& in,
                             double end, std::vector<double> snapshots = {}) {
  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::TickLayer<double, Cell>>(std::make_shared<Params>(p)));
  egret::SimOptions<double> opt;
  opt.end_time = end;
  opt.snapshot_times = std::move(snapshots);
  return egret::simulate(net, egret::InputStream<double>(in, p.inputs()), opt);
}

// One gate frequency: a_k = sin(pi/2 k + pi/4), open at ticks 1, 4, 5, 8 and closed at 2, 3, 6, 7.
SuSnnParameters one_unit_with_rhythm() {
  SuSnnParameters p;
  p.W.setConstant(1, 1, 1.0);
  p.V.setZero(1, 1);
  p.b.setZero(1);
  p.theta.setConstant(1, 1.0);
  p.dt = 1.0;
  p.tau_mem.setConstant(1, 1.0 / std::log(2.0));  // alpha = 1/2
  p.gate.b.setZero(1);
  p.gate.alpha.setConstant(1, 1, 1.0);
  p.gate.phi.setConstant(1, 1, M_PI / 4);
  p.gate.omega.setConstant(1, M_PI / 2);
  p.validate();
  return p;
}

// Inputs 1.5 at tick 1, 0.4 at tick 2 (closed: not integrated), 0.3 at tick 4, 1.2 at tick 5:
//   tick 1 open:   u = 1.5 > 1                    -> spike
//   ticks 2-3:     closed, u = 1.5 carried        -> silent (a LIF unit would spike)
//   tick 4 open:   u = 0.75 + 0.3 - 1 = 0.05      (the reset owed by tick 1)
//   tick 5 open:   u = 0.025 + 1.2 = 1.225        -> spike
//   tick 6 closed: u = 1.225 carried              -> silent
TEST(SuSnn, ClosedUnitsAreSilentAndOweTheirResetByHand) {
  const auto r = run<egret::SuSnnCell>(one_unit_with_rhythm(),
                                       {{0.5, 0, 1.5}, {1.5, 0, 0.4}, {3.5, 0, 0.3}, {4.5, 0, 1.2}},
                                       6.0, {1, 2, 3, 4, 5, 6});
  ASSERT_EQ(r.trace.size(), 2u);
  EXPECT_EQ(r.trace[0].time, 1.0);
  EXPECT_EQ(r.trace[1].time, 5.0);
  EXPECT_EQ(r.trace[0].value, 1.0);
  const double u[] = {1.5, 1.5, 1.5, 0.05, 1.225, 1.225};
  const double g[] = {1, 0, 0, 1, 1, 0};
  ASSERT_EQ(r.snapshots.size(), 6u);
  for (std::size_t k = 0; k < 6; ++k) {
    EXPECT_NEAR(r.snapshots[k].layers[0].at("u")[0], u[k], 1e-12) << "tick " << k + 1;
    EXPECT_EQ(r.snapshots[k].layers[0].at("g")[0], g[k]) << "tick " << k + 1;
  }
}

// With the gate open at every tick (g_b = 5 > |g_alpha| = 0.5) the layer is the LIF layer.
TEST(SuSnn, EveryGateOpenIsTheLifLayer) {
  const auto cfg = egret::parse_network_config(
      R"({"seed": 5, "input_channels": 4, "layers": [{"type": "su_snn", "units": 6,
          "tau_mem": 7, "threshold": 0.4, "gate": {"bias": 5, "amplitude": 0.5},
          "init": {"weight_scale": 2.5, "recurrent_scale": 1.5, "bias": 0.1, "bias_spread": 0.2}}]})",
      "test");
  auto net = egret::build_network<double>(cfg);
  const auto sp = net.layer(0).parameters();
  egret::LifParams<double> lif;
  lif.W = sp.at("W", "test");
  lif.V = sp.at("V", "test");
  lif.b = sp.at("b", "test").col(0);
  lif.theta = sp.at("theta", "test").col(0);
  lif.tau_mem.setConstant(6, 7.0);
  lif.validate();
  std::vector<egret::InputEvent<double>> in;
  for (int k = 0; k < 120; ++k) in.push_back({0.3 + 0.5 * k, k % 4, 0.5 + 0.1 * (k % 7)});
  egret::SimOptions<double> opt;
  opt.end_time = 60;
  const auto su = egret::simulate(net, egret::InputStream<double>(in, 4), opt);
  const auto ref = run<egret::LifCell>(lif, in, 60);
  ASSERT_GT(ref.trace.size(), 40u);
  ASSERT_EQ(su.trace.size(), ref.trace.size());
  for (std::size_t i = 0; i < ref.trace.size(); ++i) {
    EXPECT_EQ(su.trace[i].time, ref.trace[i].time);
    EXPECT_EQ(su.trace[i].unit, ref.trace[i].unit);
  }
}

// The same with a different tau_mem per unit (the configuration's 7 is broadcast to every unit
// first, then replaced by name, as Python and training do).
TEST(SuSnn, EveryGateOpenIsTheLifLayerWithPerUnitTimeConstants) {
  const auto cfg = egret::parse_network_config(
      R"({"seed": 5, "input_channels": 4, "layers": [{"type": "su_snn", "units": 6,
          "tau_mem": 7, "threshold": 0.4, "gate": {"bias": 5, "amplitude": 0.5},
          "init": {"weight_scale": 2.5, "recurrent_scale": 1.5, "bias": 0.1, "bias_spread": 0.2}}]})",
      "test");
  auto built = egret::build_network<double>(cfg);
  auto sp = built.layer(0).parameters();
  egret::Matrix<double>& tau = sp.at("tau_mem", "test");
  ASSERT_EQ(tau.rows(), 6);
  ASSERT_EQ(tau.cols(), 1);
  EXPECT_TRUE((tau.array() == 7.0).all());
  tau.col(0) << 2.0, 3.0, 5.0, 8.0, 13.0, 21.0;
  egret::Network<double> net;
  net.add_layer(built.layer(0).with_parameters(sp));
  egret::LifParams<double> lif;
  lif.W = sp.at("W", "test");
  lif.V = sp.at("V", "test");
  lif.b = sp.at("b", "test").col(0);
  lif.theta = sp.at("theta", "test").col(0);
  lif.tau_mem = tau.col(0);
  lif.validate();
  std::vector<egret::InputEvent<double>> in;
  for (int k = 0; k < 120; ++k) in.push_back({0.3 + 0.5 * k, k % 4, 0.5 + 0.1 * (k % 7)});
  egret::SimOptions<double> opt;
  opt.end_time = 60;
  const auto su = egret::simulate(net, egret::InputStream<double>(in, 4), opt);
  const auto ref = run<egret::LifCell>(lif, in, 60);
  const auto broadcast = egret::simulate(built, egret::InputStream<double>(in, 4), opt);
  ASSERT_GT(ref.trace.size(), 40u);
  ASSERT_EQ(su.trace.size(), ref.trace.size());
  bool differs = su.trace.size() != broadcast.trace.size();
  for (std::size_t i = 0; i < ref.trace.size(); ++i) {
    EXPECT_EQ(su.trace[i].time, ref.trace[i].time);
    EXPECT_EQ(su.trace[i].unit, ref.trace[i].unit);
    if (!differs)
      differs = su.trace[i].time != broadcast.trace[i].time ||
                su.trace[i].unit != broadcast.trace[i].unit;
  }
  EXPECT_TRUE(differs) << "the per-unit time constants changed nothing";
}

// su-SNN checks every tau_mem entry as LIF does (it inherits LIF's validation).
TEST(SuSnn, NonPositiveOrNanTimeConstantEntryIsRefusedByIndex) {
  const auto cfg = egret::parse_network_config(
      R"({"input_channels": 2, "layers": [{"type": "su_snn", "units": 5, "dt": 1}]})", "test");
  auto net = egret::build_network<double>(cfg);
  for (double v : {0.0, -1.0, std::nan("")}) {
    auto sp = net.layer(0).parameters();
    sp.at("tau_mem", "test")(2, 0) = v;
    try {
      net.layer(0).with_parameters(sp);
      FAIL() << "tau_mem[2] = " << v << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("tau_mem[2]"), std::string::npos) << e.what();
    }
  }
}

TEST(SuSnn, TypeUnitsAndDtBuildAWorkingLayer) {
  const auto cfg = egret::parse_network_config(
      R"({"input_channels": 2, "layers": [{"type": "su_snn", "units": 8, "dt": 1}]})", "test");
  auto net = egret::build_network<double>(cfg);
  const auto p = net.layer(0).parameters();
  EXPECT_EQ(p.at("g_omega", "test").rows(), 8);  // K = units by default
  const char* reversed_periods =
      R"({"input_channels": 2, "layers": [{"type": "su_snn", "units": 8,
          "gate": {"period_min": 50, "period_max": 5}}]})";
  EXPECT_THROW(egret::build_network<double>(egret::parse_network_config(reversed_periods, "test")),
               std::invalid_argument);
}

}  // namespace
