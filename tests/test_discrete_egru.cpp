// Discrete-time EGRU (paper convention) on the event engine: a two-step example worked by hand,
// and the event-sparse layer against a dense implementation of the same equations written here
// (full matrix-vector products every tick).
#include <gtest/gtest.h>

#include <cmath>

#include "events/synthetic_input.hpp"
#include "models/discrete_egru/discrete_egru_layer.hpp"
#include "sim/engine.hpp"

namespace {

using egret::Index;
using D = egret::DiscreteEgruParams<double>;
double sig(double a) {
  return 1.0 / (1.0 + std::exp(-a));
}

TEST(DiscreteEgru, TwoStepsByHand) {
  D p = D::zeros(2, 1);
  p.theta << 0.5, 0.3;
  p.dt = 1.0;
  p.b_u << 2, 0;
  p.U_z.col(0) << 2, 0.5;
  p.V_u << 0, 0, 1, 0;    // row-wise: V_u[1,0] = 1
  p.V_r << 1, 0, 0.5, 0;  // V_r[0,0] = 1, V_r[1,0] = 0.5
  p.V_z << 0.5, 0, 1, 0;  // V_z[0,0] = 0.5, V_z[1,0] = 1

  // Tick 1 (t = 1) consumes the input at t = 0.5 (x = 1 on channel 0):
  //   a_u = (2, 0), a_z = (2, 0.5) -> c_1 = u z = (sigmoid(2) tanh(2), 0.5 tanh(0.5))
  //   = (0.849, 0.231): unit 0 fires (0.849 > 0.5) with y = c; unit 1 does not (0.231 < 0.3).
  const double c1_0 = sig(2) * std::tanh(2), c1_1 = 0.5 * std::tanh(0.5);
  // Tick 2 (t = 2), no input; only unit 0's columns are touched, y_1 = (c1_0, 0):
  //   a_u = (2, c1_0), a_r = (c1_0, 0.5 c1_0), r_0 = sigmoid(c1_0)
  //   a_z = (0.5 r_0 c1_0, r_0 c1_0)
  //   c_2 = u z + (1 - u) c_1 - y_1
  const double r0 = sig(c1_0);
  const double c2_0 = sig(2) * std::tanh(0.5 * r0 * c1_0) + (1 - sig(2)) * c1_0 - c1_0;
  const double c2_1 = sig(c1_0) * std::tanh(r0 * c1_0) + (1 - sig(c1_0)) * c1_1;
  ASSERT_GT(c1_0, 0.5);
  ASSERT_LT(c1_1, 0.3);
  ASSERT_LT(c2_0, 0.5);
  ASSERT_GT(c2_1, 0.3);  // unit 1 fires at tick 2: the recurrent path is exercised

  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::DiscreteEgruLayer<double>>(std::make_shared<D>(p)));
  egret::SimOptions<double> opt;
  opt.end_time = 2.0;
  opt.snapshot_times = {1.0, 2.0};
  const auto r = egret::simulate(net, egret::InputStream<double>({{0.5, 0, 1.0}}, 1), opt);

  ASSERT_EQ(r.trace.size(), 2u);
  EXPECT_EQ(r.trace[0].time, 1.0);
  EXPECT_EQ(r.trace[0].unit, 0);
  EXPECT_NEAR(r.trace[0].value, c1_0, 1e-15);
  EXPECT_EQ(r.trace[1].time, 2.0);
  EXPECT_EQ(r.trace[1].unit, 1);
  EXPECT_NEAR(r.trace[1].value, c2_1, 1e-15);
  const auto& s1 = r.snapshots[0].layers[0];
  EXPECT_NEAR(s1.at("c")[0], c1_0, 1e-15);
  EXPECT_NEAR(s1.at("c")[1], c1_1, 1e-15);
  EXPECT_NEAR(s1.at("y")[0], c1_0, 1e-15);
  EXPECT_EQ(s1.at("y")[1], 0.0);
  const auto& s2 = r.snapshots[1].layers[0];
  EXPECT_NEAR(s2.at("c")[0], c2_0, 1e-15);
  EXPECT_NEAR(s2.at("c")[1], c2_1, 1e-15);
  EXPECT_EQ(s2.at("y")[0], 0.0);
  EXPECT_EQ(r.layers[0].internal_steps, 2u);
  EXPECT_DOUBLE_EQ(r.activity_sparsity(0), 0.5);  // 2 of 4 unit-steps active
}

// Dense reference: every tick computes U x_k + V y_{k-1} with full products.
TEST(DiscreteEgru, EventSparseEqualsDenseEquations) {
  D::RandomInit init;
  init.weight_scale = 2.0;
  init.bias_z = 0.5;
  init.threshold = 0.25;
  const D p = [&] {
    D q = D::random(20, 10, 5, init);
    q.dt = 0.5;
    return q;
  }();
  const auto input = egret::poisson_input<double>(10, 150.0, 100.0, 9);
  const Index ticks = 200;  // end 100 ms / dt 0.5

  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::DiscreteEgruLayer<double>>(std::make_shared<D>(p)));
  egret::SimOptions<double> opt;
  opt.end_time = 100.0;
  const auto r = egret::simulate(net, input, opt);

  // Bin the inputs: tick k (t_k = k dt) takes events in (t_{k-1}, t_k] (t = 0 goes to tick 1).
  std::vector<egret::Vector<double>> x(ticks + 1, egret::Vector<double>::Zero(10));
  for (const auto& e : input.events()) {
    Index k = static_cast<Index>(std::ceil(e.time / p.dt));
    if (k == 0) k = 1;
    x[k][e.channel] += e.value;
  }
  egret::Vector<double> c = egret::Vector<double>::Zero(20), y = c;
  std::vector<egret::TraceEvent<double>> ref;
  for (Index k = 1; k <= ticks; ++k) {
    const egret::Vector<double> a_u = p.U_u * x[k] + p.V_u * y + p.b_u;
    const egret::Vector<double> a_r = p.U_r * x[k] + p.V_r * y + p.b_r;
    const egret::Vector<double> r_ = a_r.unaryExpr([](double a) { return sig(a); });
    const egret::Vector<double> a_z = p.U_z * x[k] + p.V_z * r_.cwiseProduct(y) + p.b_z;
    for (Index m = 0; m < 20; ++m) {
      const double u = sig(a_u[m]);
      c[m] = u * std::tanh(a_z[m]) + (1 - u) * c[m] - y[m];
    }
    for (Index m = 0; m < 20; ++m) {
      y[m] = c[m] > p.theta[m] ? c[m] : 0.0;
      if (y[m] != 0) ref.push_back({static_cast<double>(k) * p.dt, 0, m, y[m]});
    }
  }
  ASSERT_GT(ref.size(), 200u);
  ASSERT_EQ(r.trace.size(), ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    EXPECT_EQ(r.trace[i].time, ref[i].time) << i;
    EXPECT_EQ(r.trace[i].unit, ref[i].unit) << i;
    EXPECT_NEAR(r.trace[i].value, ref[i].value, 1e-12) << i;
  }
  const double sparsity = 1.0 - static_cast<double>(ref.size()) / (20.0 * ticks);
  EXPECT_DOUBLE_EQ(r.activity_sparsity(0), sparsity);
}

}  // namespace
