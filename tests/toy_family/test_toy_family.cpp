// The toy family (docs/cell_families.md, "Checklist: adding a family"): a family defined outside
// models/, in this folder only, registered by one line, then built from a configuration file,
// simulated and differentiated by the same engine, tape and reverse sweep as the built-in ones.
// Checked against a hand computation of its equations and against central finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/config/network_config.hpp"
#include "models/cell_families.hpp"
#include "toy_family.hpp"
#include "train/sample_gradient.hpp"

namespace {

void register_toy_family_once() {
  static std::once_flag once;
  std::call_once(once, [] { egret::register_cell_family(egret::toy_family()); });  // the line
}

nlohmann::json toy_config(double tau, const std::vector<std::vector<double>>& W,
                          const std::vector<double>& b) {
  return {{"precision", "double"},
          {"seed", 4},
          {"input_channels", 2},
          {"readout_classes", 2},
          {"layers",
           {{{"type", "toy_integrator"},
             {"units", 2},
             {"dt", 1.0},
             {"tau", tau},
             {"params", {{"W", W}, {"b", b}}}}}}};
}

egret::Network<double> toy_network(const nlohmann::json& cfg) {
  return egret::build_network<double>(egret::parse_network_config(cfg.dump(), "toy test"));
}

egret::Sample<double> toy_sample() {
  egret::Sample<double> s;
  s.input =
      egret::InputStream<double>({{0.4, 0, 1.0}, {1.5, 1, -2.0}, {1.7, 0, 0.5}, {3.2, 1, 1.0}}, 2);
  s.end_time = 6.0;
  s.readout_times = {4.0};
  s.readout_windows = {{2.0, 6.0}};
  s.targets.labels = {1, 0};
  return s;
}

}  // namespace

TEST(ToyFamily, RegisteredByOneLineItRunsAsTheHandComputationSays) {
  register_toy_family_once();
  EXPECT_NO_THROW(egret::find_cell_family("toy_integrator", "test"));
  EXPECT_THROW(egret::register_cell_family(egret::toy_family()), std::invalid_argument);
  const std::vector<std::vector<double>> W = {{1.0, 0.5}, {0.0, -1.0}};
  const std::vector<double> b = {0.1, 0.0};
  auto net = toy_network(toy_config(2.0, W, b));
  egret::SimOptions<double> opt;
  opt.end_time = 4.0;
  const auto r = egret::simulate(net, toy_sample().input, opt);
  // By hand: x per tick (bins (k-1, k]), h_k = exp(-1/2) h_{k-1} + W x_k + b.
  const double alpha = std::exp(-0.5);
  const double x[4][2] = {{1.0, 0.0}, {0.5, -2.0}, {0.0, 0.0}, {0.0, 1.0}};
  double h[2] = {0, 0};
  std::vector<std::pair<int, double>> expected;  // (unit, value) in order
  for (const auto& xk : x)
    for (int m = 0; m < 2; ++m) {
      h[m] = alpha * h[m] + W[m][0] * xk[0] + W[m][1] * xk[1] + b[m];
      if (h[m] != 0) expected.emplace_back(m, h[m]);
    }
  ASSERT_EQ(r.trace.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(r.trace[i].unit, expected[i].first);
    EXPECT_NEAR(r.trace[i].value, expected[i].second, 1e-15);
  }
}

TEST(ToyFamily, GradientEqualsCentralDifferences) {
  register_toy_family_once();
  const std::vector<std::vector<double>> W = {{1.0, 0.5}, {0.3, -1.0}};
  const std::vector<double> b = {0.1, -0.2};
  const double tau = 2.0;
  const auto sample = toy_sample();
  auto loss_of = [&](double t, const std::vector<std::vector<double>>& w,
                     const std::vector<double>& bias) {
    auto net = toy_network(toy_config(t, w, bias));
    return egret::sample_loss_and_gradient(net, sample, egret::LossKind::kSoftmaxCrossEntropy,
                                           false)
        .loss.loss;
  };
  auto net = toy_network(toy_config(tau, W, b));
  const auto o =
      egret::sample_loss_and_gradient(net, sample, egret::LossKind::kSoftmaxCrossEntropy, true);
  const auto& g = o.grad.layers[0];
  const double h = 1e-5;
  for (int m = 0; m < 2; ++m)
    for (int c = 0; c < 2; ++c) {
      auto up = W, down = W;
      up[m][c] += h;
      down[m][c] -= h;
      const double fd = (loss_of(tau, up, b) - loss_of(tau, down, b)) / (2 * h);
      EXPECT_NEAR(g.find("W")->coeff(m, c), fd, 1e-8 * std::max(1.0, std::abs(fd))) << m << c;
    }
  for (int m = 0; m < 2; ++m) {
    auto up = b, down = b;
    up[m] += h;
    down[m] -= h;
    const double fd = (loss_of(tau, W, up) - loss_of(tau, W, down)) / (2 * h);
    EXPECT_NEAR(g.find("b")->coeff(m, 0), fd, 1e-8 * std::max(1.0, std::abs(fd))) << m;
  }
  const double fd_tau = (loss_of(tau + h, W, b) - loss_of(tau - h, W, b)) / (2 * h);
  EXPECT_NE(fd_tau, 0.0);
  EXPECT_NEAR(g.find("tau")->coeff(0, 0), fd_tau, 1e-8 * std::max(1.0, std::abs(fd_tau)));
}
