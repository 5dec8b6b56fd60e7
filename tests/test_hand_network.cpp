// A 3-unit network whose jumps are worked out by hand (numbers in the comments): one input
// event, then unit 0 fires twice; every jump on every unit and the output trace are checked,
// with self-recurrence (the sender's a_z gets V_z[0,0] r_0 y) and without it (the paper's
// Eq. S11, the default: the sender's own pre-activations do not jump).
#include <gtest/gtest.h>

#include <cmath>

#include "models/continuous_egru/continuous_egru_layer.hpp"
#include "sim/engine.hpp"

namespace {

using P = egret::ContinuousEgruParams<double>;
double sig(double a) {
  return 1.0 / (1.0 + std::exp(-a));
}

// The hand network: theta = 0.5 for all units; unit 0's own weight V_z[0,0] = v_z00.
P three_units(bool self_recurrence, double v_z00) {
  P p = P::zeros(3, 1, 0.5);
  p.self_recurrence = self_recurrence;
  p.tau_m.setConstant(1.0);
  p.tau_o.setConstant(2.0);
  p.b_z << 0.5, 0, 0;
  p.U_u.col(0) << 0.5, 0, -0.5;
  p.U_r.col(0) << 0, 0.25, 0;
  p.U_z.col(0) << 0.5, 0, 0.1;
  p.V_u.col(0) << 0, 1, 2;
  p.V_r.col(0) << 0, 0, 1;
  p.V_z.col(0) << v_z00, 0.8, 0;
  return p;
}

TEST(HandNetwork, ThreeUnitsJumps) {
  const P p = three_units(true, 0.4);

  // Before the input: u = 0.5 everywhere, z_0 = tanh(0.5) = 0.462 < theta: nobody fires.
  // Input at t = 1, channel 0, x = 2:  a_u = (1, 0, -1), a_r = (0, 0.5, 0), a_z = (1.5, 0, 0.2).
  const double c0_at_1 = std::tanh(0.5) * (1 - std::exp(-0.5));
  // Unit 0 then crosses at s0 = 1 + (1/sigmoid(1)) ln((tanh 1.5 - c0(1)) / (tanh 1.5 - 0.5)).
  const double s0 =
      1 + (1 / sig(1)) * std::log((std::tanh(1.5) - c0_at_1) / (std::tanh(1.5) - 0.5));
  // Its event (y = 0.5, r_0 = sigmoid(0) = 0.5) adds V_u y = (0, .5, 1), V_r y = (0, 0, .5),
  // V_z r y = (0.1, 0.2, 0):  a_u = (1, 0.5, 0), a_r = (0, 0.5, 0.5), a_z = (1.6, 0.2, 0.2).
  // c_0 restarts from 0 toward tanh(1.6) with u = sigmoid(1):
  const double s1 = s0 + (1 / sig(1)) * std::log(std::tanh(1.6) / (std::tanh(1.6) - 0.5));
  // Second event: a_z,0 = 1.6 + 0.1 = 1.7, a_u = (1, 1, 1), a_r = (0, .5, 1), a_z,1 = 0.4.
  const double s2 = s1 + (1 / sig(1)) * std::log(std::tanh(1.7) / (std::tanh(1.7) - 0.5));

  const double t_a = 1.0, t_b = s0 + 0.01, t_c = 0.5 * (s1 + s2);
  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(p)));
  egret::SimOptions<double> opt;
  opt.end_time = s2 + 0.001;
  opt.snapshot_times = {t_a, t_b, t_c};
  opt.readout_times = {t_c};
  const auto r = egret::simulate(net, egret::InputStream<double>({{1.0, 0, 2.0}}, 1), opt);

  ASSERT_EQ(r.trace.size(), 3u);
  for (const auto& e : r.trace) {
    EXPECT_EQ(e.unit, 0);
    EXPECT_EQ(e.value, 0.5);
  }
  EXPECT_NEAR(r.trace[0].time, s0, 1e-13);
  EXPECT_NEAR(r.trace[1].time, s1, 1e-13);
  EXPECT_NEAR(r.trace[2].time, s2, 1e-13);

  auto expect_vec = [](const std::vector<double>& got, std::vector<double> want, const char* what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-14) << what << i;
  };
  const auto& A = r.snapshots[0].layers[0];
  expect_vec(A.at("a_u"), {1, 0, -1}, "a_u after input ");
  expect_vec(A.at("a_r"), {0, 0.5, 0}, "a_r after input ");
  expect_vec(A.at("a_z"), {1.5, 0, 0.2}, "a_z after input ");
  expect_vec(A.at("c"), {c0_at_1, 0, 0}, "c after input ");

  const auto& B = r.snapshots[1].layers[0];
  expect_vec(B.at("a_u"), {1, 0.5, 0}, "a_u after event 1 ");
  expect_vec(B.at("a_r"), {0, 0.5, 0.5}, "a_r after event 1 ");
  expect_vec(B.at("a_z"), {1.6, 0.2, 0.2}, "a_z after event 1 ");
  // c_0: from 0 toward tanh(1.6) for 0.01 ms; c_1: at 0 since t = 0 (z_1 was 0), now toward
  // tanh(0.2) with u = sigmoid(0.5); c_2: toward tanh(0.2), u = sigmoid(-1) until s0, then
  // sigmoid(0).
  // (c_2 stayed at 0 up to t = 1, where z_2 = tanh(0) = 0.)
  const double c2_at_s0 = std::tanh(0.2) * (1 - std::exp(-sig(-1) * (s0 - 1)));
  expect_vec(B.at("c"),
             {std::tanh(1.6) * (1 - std::exp(-sig(1) * 0.01)),
              std::tanh(0.2) * (1 - std::exp(-sig(0.5) * 0.01)),
              std::tanh(0.2) + (c2_at_s0 - std::tanh(0.2)) * std::exp(-sig(0) * 0.01)},
             "c after event 1 ");
  expect_vec(B.at("o"), {0.5 * std::exp(-0.01 / 2), 0, 0}, "o after event 1 ");

  const auto& C = r.snapshots[2].layers[0];
  expect_vec(C.at("a_u"), {1, 1, 1}, "a_u after event 2 ");
  expect_vec(C.at("a_r"), {0, 0.5, 1}, "a_r after event 2 ");
  expect_vec(C.at("a_z"), {1.7, 0.4, 0.2}, "a_z after event 2 ");
  const double o_c = 0.5 * std::exp(-(t_c - s0) / 2) + 0.5 * std::exp(-(t_c - s1) / 2);
  expect_vec(r.readouts[0].trace, {o_c, 0, 0}, "readout ");
}

// The same network without self-recurrence (V_z[0,0] = 0 and the layer's default): unit 0's
// own events leave a_z,0 = 1.5, so after each reset it climbs toward tanh(1.5) again and fires
// with the period (1/sigmoid(1)) ln(tanh 1.5 / (tanh 1.5 - 0.5)); the other units' jumps are
// those above.
TEST(HandNetwork, SendersOwnPreactivationsDoNotJumpWithoutSelfRecurrence) {
  P p = three_units(false, 0.0);
  EXPECT_FALSE(P::zeros(3, 1, 0.5).self_recurrence);  // the default

  const double c0_at_1 = std::tanh(0.5) * (1 - std::exp(-0.5));
  const double s0 =
      1 + (1 / sig(1)) * std::log((std::tanh(1.5) - c0_at_1) / (std::tanh(1.5) - 0.5));
  const double period = (1 / sig(1)) * std::log(std::tanh(1.5) / (std::tanh(1.5) - 0.5));
  const double s1 = s0 + period, s2 = s1 + period;

  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(p)));
  egret::SimOptions<double> opt;
  opt.end_time = s2 + 0.001;
  opt.snapshot_times = {0.5 * (s1 + s2)};
  const auto r = egret::simulate(net, egret::InputStream<double>({{1.0, 0, 2.0}}, 1), opt);
  ASSERT_EQ(r.trace.size(), 3u);
  EXPECT_NEAR(r.trace[0].time, s0, 1e-13);
  EXPECT_NEAR(r.trace[1].time, s1, 1e-13);
  EXPECT_NEAR(r.trace[2].time, s2, 1e-13);
  const auto& C = r.snapshots[0].layers[0];
  const std::vector<double> a_z = C.at("a_z"), a_u = C.at("a_u");
  EXPECT_NEAR(a_z[0], 1.5, 1e-14);  // the input's 1.5, untouched by two own events
  EXPECT_NEAR(a_z[1], 0.4, 1e-14);  // 0.8 * r_0 y = 0.2, twice
  EXPECT_NEAR(a_u[2], 1.0, 1e-14);  // -1 + 2 * 0.5 * 2

  // The old behaviour's diagonal is refused here rather than silently ignored.
  p.V_z(0, 0) = 0.4;
  try {
    egret::ContinuousEgruLayer<double> layer(std::make_shared<P>(p));
    FAIL() << "a nonzero diagonal of V without self-recurrence was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("V_z[0, 0] = 0.4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"self_recurrence\": true"), std::string::npos);
  }
}

}  // namespace
