// Determinism: results do not depend on the TBB thread count, on the order in which
// simultaneous inputs are listed, or on the order of units that cross at the same time.
#include <gtest/gtest.h>

#include "events/synthetic_input.hpp"
#include "models/continuous_egru/continuous_egru_layer.hpp"
#include "models/discrete_egru/discrete_egru_layer.hpp"
#include "sim/batch_runner.hpp"

namespace {

using egret::Index;
using P = egret::ContinuousEgruParams<double>;

egret::Network<double> random_network() {
  P::RandomInit init;
  init.weight_scale = 1.5;
  init.bias_z = 0.7;
  auto p0 = P::random(12, 6, 21, init);
  p0.window_input = 3;
  p0.window_recurrent = 2;
  auto p1 = P::random(8, 12, 22, init);
  p1.window_input = 4;
  egret::DiscreteEgruParams<double>::RandomInit dinit;
  dinit.bias_z = 0.7;
  auto p2 = egret::DiscreteEgruParams<double>::random(5, 8, 23, dinit);
  p2.dt = 0.5;
  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(p0)));
  net.add_layer(std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(p1)));
  net.add_layer(std::make_unique<egret::DiscreteEgruLayer<double>>(
      std::make_shared<egret::DiscreteEgruParams<double>>(p2)));
  return net;
}

TEST(Determinism, OneAndTwoThreadsGiveIdenticalResults) {
  const auto net = random_network();
  std::vector<egret::InputStream<double>> samples;
  for (int s = 0; s < 12; ++s)
    samples.push_back(egret::poisson_input<double>(6, 80.0, 100.0, 100 + s));
  egret::SimOptions<double> opt;
  opt.end_time = 100;
  opt.readout_times = {50, 100};
  const auto one = egret::simulate_batch(net, samples, opt, 1);
  const auto two = egret::simulate_batch(net, samples, opt, 2);
  ASSERT_EQ(one.size(), samples.size());
  std::size_t total = 0;
  for (std::size_t s = 0; s < samples.size(); ++s) {
    EXPECT_EQ(one[s].trace, two[s].trace) << "sample " << s;
    EXPECT_EQ(one[s].readouts[1].trace, two[s].readouts[1].trace) << "sample " << s;
    EXPECT_EQ(one[s].events_processed, two[s].events_processed);
    total += one[s].trace.size();
  }
  EXPECT_GT(total, 1000u);  // the runs have real activity
  // And a sequential run of each sample with a fresh network agrees too.
  auto fresh = net.clone();
  EXPECT_EQ(egret::simulate(fresh, samples[5], opt).trace, one[5].trace);
}

TEST(Determinism, SimultaneousInputsInAnyListedOrder) {
  auto net = random_network();
  egret::SimOptions<double> opt;
  opt.end_time = 40;
  std::vector<egret::InputEvent<double>> a = {{5.0, 3, 1.0}, {5.0, 1, 0.5}, {5.0, 4, 2.0},
                                              {9.0, 0, 1.0}, {9.0, 2, 1.0}, {12.5, 5, -1.0}};
  std::vector<egret::InputEvent<double>> b = {a[5], a[4], a[2], a[0], a[3], a[1]};
  const auto ra = egret::simulate(net, egret::InputStream<double>(a, 6), opt);
  const auto rb = egret::simulate(net, egret::InputStream<double>(b, 6), opt);
  ASSERT_GT(ra.trace.size(), 10u);
  EXPECT_EQ(ra.trace, rb.trace);
}

// Two units with identical dynamics cross at exactly the same times. They fire together
// (synchronously, each with r read before either jump); swapping which index plays which role
// gives the mirrored trace.
TEST(Determinism, SimultaneousCrossingsAreOrderIndependent) {
  auto make = [](bool swapped) {
    P p = P::zeros(3, 1, 0.4);
    p.self_recurrence = true;  // each twin also reaches itself
    p.tau_m.setConstant(2.0);
    p.b_z << 0.9, 0.9, 0.0;
    p.b_r << 0.3, 0.3, 0.0;
    // Units 0 and 1 are twins; each excites unit 2 differently, so a wrong order would show.
    p.V_u << 0.2, 0.2, 0, 0.2, 0.2, 0, 0.5, -0.3, 0;
    p.V_z << -0.1, -0.1, 0, -0.1, -0.1, 0, 0.9, 0.6, 0;
    p.V_r << 0.1, 0.1, 0, 0.1, 0.1, 0, 0.2, -0.4, 0;
    if (swapped) {
      for (auto* m : {&p.V_u, &p.V_r, &p.V_z}) {
        // Swap the roles of units 0 and 1: permute rows and columns.
        m->row(0).swap(m->row(1));
        m->col(0).swap(m->col(1));
      }
    }
    return p;
  };
  egret::SimOptions<double> opt;
  opt.end_time = 60;
  opt.snapshot_times = {60};
  std::vector<egret::SimResult<double>> res;
  for (bool swapped : {false, true}) {
    egret::Network<double> net;
    net.add_layer(
        std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(make(swapped))));
    res.push_back(egret::simulate(net, egret::InputStream<double>({}, 1), opt));
  }
  const auto& a = res[0].trace;
  const auto& b = res[1].trace;
  ASSERT_GT(a.size(), 10u);
  ASSERT_EQ(a.size(), b.size());
  std::size_t pairs = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    // Unit 2 sums the twins' columns in the other order when swapped: equal up to rounding.
    EXPECT_NEAR(a[i].time, b[i].time, 1e-12 * a[i].time);
    EXPECT_EQ(a[i].unit == 2, b[i].unit == 2);
    if (i + 1 < a.size() && a[i].unit == 0 && a[i + 1].unit == 1) {
      EXPECT_EQ(a[i].time, a[i + 1].time);  // the twins fire at the same time
      ++pairs;
    }
  }
  EXPECT_GT(pairs, 3u);
  const auto ca = res[0].snapshots[0].layers[0].at("a_z");
  const auto cb = res[1].snapshots[0].layers[0].at("a_z");
  EXPECT_NEAR(ca[2], cb[2], 1e-12);  // unit 2 received both twins' jumps, same values
  EXPECT_NEAR(ca[0], cb[1], 1e-12);
  EXPECT_EQ(ca[0], ca[1]);  // the twins stay identical
}

}  // namespace
