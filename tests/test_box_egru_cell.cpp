// One unit with constant gates: the first crossing time (tau_m/u) ln((z - c0)/(z - theta)) and
// the periodic firing interval (tau_m/u) ln(z/(z - theta)), to 1e-12, computed here in long
// double from the formula; the engine computes them from the cell's closed form.
#include <gtest/gtest.h>

#include <cmath>

#include "models/continuous_egru/box_kernel_cell.hpp"
#include "models/continuous_egru/continuous_egru_layer.hpp"
#include "sim/engine.hpp"

namespace {

using egret::Index;
using P = egret::ContinuousEgruParams<double>;
using Cell = egret::BoxEgruCell<double>;

long double sigmoidl(long double a) {
  return 1.0L / (1.0L + std::exp(-a));
}

struct Case {
  double b_u, b_z, theta, c0, tau_m;
};
void PrintTo(const Case& k, std::ostream* os) {
  *os << "b_u=" << k.b_u << " b_z=" << k.b_z << " theta=" << k.theta << " c0=" << k.c0
      << " tau_m=" << k.tau_m;
}

class ConstantGates : public ::testing::TestWithParam<Case> {};

TEST_P(ConstantGates, FirstCrossingAndPeriod) {
  const Case k = GetParam();
  P p = P::zeros(1, 1, k.theta);
  p.b_u[0] = k.b_u;
  p.b_z[0] = k.b_z;
  p.c_init[0] = k.c0;
  p.tau_m.setConstant(k.tau_m);
  const long double u = sigmoidl(k.b_u), z = std::tanh(static_cast<long double>(k.b_z));
  const long double th = k.theta, tau = k.tau_m;
  const long double first = (tau / u) * std::log((z - k.c0) / (z - th));
  const long double period = (tau / u) * std::log(z / (z - th));

  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(p)));
  egret::SimOptions<double> opt;
  opt.end_time = static_cast<double>(first + 40.5L * period);
  const auto r = egret::simulate(net, egret::InputStream<double>({}, 1), opt);
  ASSERT_EQ(r.trace.size(), 41u);
  for (std::size_t i = 0; i < r.trace.size(); ++i) {
    const long double expected = first + static_cast<long double>(i) * period;
    EXPECT_NEAR(r.trace[i].time, static_cast<double>(expected),
                1e-12 * static_cast<double>(expected))
        << "event " << i;
    EXPECT_EQ(r.trace[i].value, k.theta);  // y = c(s-) = theta
  }
  for (std::size_t i = 1; i < r.trace.size(); ++i) {
    const double interval = r.trace[i].time - r.trace[i - 1].time;
    EXPECT_NEAR(interval, static_cast<double>(period), 1e-12 * static_cast<double>(period) * 50);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConstantGates,
    ::testing::Values(Case{0.0, 1.0, 0.5, 0.0, 10.0}, Case{1.3, 0.6, 0.2, -0.4, 3.0},
                      Case{-2.0, 2.5, 0.9, 0.85, 25.0}, Case{0.4, 0.35, 0.3, 0.1, 1.0}),
    [](const auto& param_info) { return "case" + std::to_string(param_info.index); });

TEST(BoxEgruCell, NoCrossingWhenCandidateBelowThreshold) {
  EXPECT_TRUE(std::isinf(Cell::time_to_crossing(0.0, 0.5, 0.3, 0.3, 10.0)));
  EXPECT_TRUE(std::isinf(Cell::time_to_crossing(0.1, 0.5, -0.9, 0.3, 10.0)));
  EXPECT_EQ(Cell::time_to_crossing(0.3, 0.5, 0.1, 0.3, 10.0), 0.0);  // at threshold: now
}

TEST(BoxEgruCell, FlowSolvesTheOde) {
  // c(t) = z + (c0 - z) exp(-u t / tau): check c(0) = c0 and dc/dt = u (z - c) / tau by a
  // central difference at several times.
  const double c0 = -0.3, u = 0.7, z = 0.8, tau = 5.0;
  EXPECT_EQ(Cell::flow(c0, u, z, 0.0, tau), c0);
  for (double t : {0.1, 1.0, 7.0}) {
    const double h = 1e-5;
    const double d =
        (Cell::flow(c0, u, z, t + h, tau) - Cell::flow(c0, u, z, t - h, tau)) / (2 * h);
    EXPECT_NEAR(d, Cell::rate(Cell::flow(c0, u, z, t, tau), u, z, tau), 1e-9);
  }
  // The crossing time lands on theta.
  const double theta = 0.5;
  const double dt = Cell::time_to_crossing(c0, u, z, theta, tau);
  EXPECT_NEAR(Cell::flow(c0, u, z, dt, tau), theta, 1e-15);
}

}  // namespace

// Simultaneous inputs (a binned stream) are applied together: the layer refreshes its gates and
// crossing times once per time, when asked (the engine asks after the last input of a time).
// The result must be bitwise that of refreshing after every input.
TEST(ContinuousEgruLayer, SimultaneousInputsSettleOnceWithTheSameResult) {
  P::RandomInit init;
  init.weight_scale = 1.5;
  init.bias_z = 0.9;
  P p = P::random(12, 6, 7, init);
  p.window_input = 3.0;
  auto shared = std::make_shared<P>(p);
  egret::ContinuousEgruLayer<double> each(shared), grouped(shared);
  egret::EventQueue<double> q_each, q_grouped;
  egret::Scheduler<double> s_each(q_each, 0), s_grouped(q_grouped, 0);
  for (double t : {0.7, 1.9, 4.0}) {
    const egret::ContinuousEgruLayer<double>::Array before = grouped.crossing_times();
    for (Index k = 0; k < 8; ++k) {
      const Index ch = (k * 5 + static_cast<Index>(t * 10)) % 6;
      const double x = 0.2 + 0.1 * static_cast<double>(k);
      each.receive_input(t, ch, x, s_each);
      (void)each.next_internal_event();  // settles after every input
      grouped.receive_input(t, ch, x, s_grouped);
    }
    const auto a = each.crossing_times(), b = grouped.crossing_times();
    for (Index m = 0; m < a.size(); ++m) EXPECT_EQ(a[m], b[m]) << "unit " << m << " at t " << t;
    EXPECT_EQ(each.next_internal_event().time, grouped.next_internal_event().time);
    EXPECT_FALSE((before == b).all()) << "the inputs at " << t << " moved the crossing times";
    EXPECT_EQ(each.state_at(t + 0.3).variables, grouped.state_at(t + 0.3).variables);
  }
  EXPECT_TRUE(std::isfinite(grouped.next_internal_event().time)) << "a crossing is scheduled";
}

namespace {

// The excess integral int_0^dt max(0, c(s) - a) ds by composite Simpson on 2^16 panels of the
// closed-form flow, in long double, split at the level crossing (found by bisection) so that the
// integrand is smooth on each part: independent of the cell's antiderivative.
long double excess_by_quadrature(long double c0, long double u, long double z, long double dt,
                                 long double tau, long double a) {
  const auto c = [&](long double s) { return z + (c0 - z) * std::exp(-u * s / tau); };
  const auto f = [&](long double s) { return std::max(0.0L, c(s) - a); };
  long double cut = -1;
  if ((c(0) - a) * (c(dt) - a) < 0) {
    long double lo = 0, hi = dt;
    for (int k = 0; k < 200; ++k) {
      const long double mid = (lo + hi) / 2;
      ((c(lo) - a) * (c(mid) - a) <= 0 ? hi : lo) = mid;
    }
    cut = (lo + hi) / 2;
  }
  const auto simpson = [&](long double x0, long double x1) {
    const int n = 1 << 16;
    const long double h = (x1 - x0) / n;
    long double sum = f(x0) + f(x1);
    for (int k = 1; k < n; ++k) sum += (k % 2 ? 4 : 2) * f(x0 + k * h);
    return sum * h / 3;
  };
  return cut < 0 ? simpson(0, dt) : simpson(0, cut) + simpson(cut, dt);
}

}  // namespace

// BoxEgruCell::excess_integral against quadrature, and its partial derivatives against central
// differences of the quadrature: c above the level throughout, falling through it, rising
// through it, below it throughout, and an interval so short that the series branch is used.
TEST(BoxEgruCell, ExcessIntegralAndItsPartialsAgainstQuadrature) {
  struct Scenario {
    double c0, u, z, dt, tau, a;
  };
  for (const Scenario& k : {Scenario{0.5, 0.6, 0.7, 3.0, 5.0, 0.25},       // above throughout
                            Scenario{0.45, 0.7, 0.1, 4.0, 3.0, 0.25},      // falls through a
                            Scenario{0.05, 0.5, 0.8, 6.0, 4.0, 0.25},      // rises through a
                            Scenario{0.1, 0.5, 0.2, 6.0, 4.0, 0.25},       // below throughout
                            Scenario{0.3, 0.4, 0.9, 2e-3, 20.0, 0.25}}) {  // x = k dt tiny
    const double c_end = Cell::flow(k.c0, k.u, k.z, k.dt, k.tau);
    const auto g = Cell::excess_integral(k.c0, c_end, k.u, k.z, k.dt, k.tau, k.a);
    const long double q = excess_by_quadrature(k.c0, k.u, k.z, k.dt, k.tau, k.a);
    EXPECT_NEAR(g.value, static_cast<double>(q), 1e-12 * std::max(1.0L, q));
    const auto central = [&](int which) {
      long double h = 1e-5L, x[6] = {k.c0, k.u, k.z, k.dt, k.tau, k.a}, lo[6], hi[6];
      for (int j = 0; j < 6; ++j) lo[j] = hi[j] = x[j];
      lo[which] -= h;
      hi[which] += h;
      return (excess_by_quadrature(hi[0], hi[1], hi[2], hi[3], hi[4], hi[5]) -
              excess_by_quadrature(lo[0], lo[1], lo[2], lo[3], lo[4], lo[5])) /
             (2 * h);
    };
    const double partials[6] = {g.c0, g.u, g.z, g.dt, g.tau_m, g.level};
    const char* names[6] = {"c0", "u", "z", "dt", "tau_m", "level"};
    for (int j = 0; j < 6; ++j) {
      const double fd = static_cast<double>(central(j));
      EXPECT_NEAR(partials[j], fd, 1e-7 * std::max(1.0, std::abs(fd)))
          << names[j] << " in scenario c0=" << k.c0 << " z=" << k.z << " dt=" << k.dt;
    }
  }
}
