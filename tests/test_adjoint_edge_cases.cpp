// The backward pass's report: grazing crossings, simultaneous crossings and non-finite values
// are counted and named, never silently folded into a gradient; and a tape cannot be recorded
// for a layer that has no exact backward pass.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "adjoint/reverse_sweep.hpp"
#include "models/continuous_egru/continuous_egru_layer.hpp"
#include "sim/engine.hpp"

namespace {

using egret::Index;
using P = egret::ContinuousEgruParams<double>;

struct Outcome {
  egret::BackwardReport report;
  egret::Gradient<double> grad;
};

Outcome backward_of(const P& p, double end, std::vector<double> d_o_scale = {1.0}) {
  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(p)));
  egret::Tape<double> tape;
  egret::SimOptions<double> opt;
  opt.end_time = end;
  opt.readout_windows = {{0.5 * end, end}};
  opt.tape = &tape;
  const auto fwd = egret::simulate(net, egret::InputStream<double>({}, 1), opt);
  Outcome o;
  o.grad = egret::zero_gradient(net, 0);
  std::vector<std::vector<double>> d_o = {
      std::vector<double>(static_cast<std::size_t>(p.units()), 0)};
  for (std::size_t n = 0; n < d_o[0].size() && n < d_o_scale.size(); ++n) d_o[0][n] = d_o_scale[n];
  o.report = egret::reverse_sweep(net, tape, fwd, d_o, o.grad);
  return o;
}

TEST(AdjointEdgeCases, GrazingCrossingsAreCounted) {
  // z - theta = 1e-9: dc/dt at the crossing is u (z - theta) / tau_m ~ 5e-11, below 1e-6.
  P p = P::zeros(1, 1, 0.5);
  p.tau_m.setConstant(1.0);
  p.b_z[0] = std::atanh(0.5 + 1e-9);
  p.c_init[0] = 0.49;
  const auto o = backward_of(p, 100.0);
  EXPECT_GE(o.report.grazing_crossings, 1u);
  EXPECT_TRUE(o.report.ok());
  // A comfortable crossing is not flagged.
  p.b_z[0] = 1.0;
  EXPECT_EQ(backward_of(p, 100.0).report.grazing_crossings, 0u);
}

TEST(AdjointEdgeCases, SimultaneousCrossingsAreCounted) {
  P p = P::zeros(2, 1, 0.4);
  p.b_z << 0.9, 0.9;  // twins: they cross together, every time
  const auto o = backward_of(p, 30.0, {1.0, 1.0});
  EXPECT_GT(o.report.simultaneous_crossings, 0u);
  EXPECT_TRUE(o.report.ok());
}

TEST(AdjointEdgeCases, NonFiniteAdjointsAreReportedWithTheirStep) {
  P p = P::zeros(1, 1, 0.5);
  p.b_z[0] = 1.0;
  const auto o = backward_of(p, 50.0, {std::numeric_limits<double>::quiet_NaN()});
  EXPECT_FALSE(o.report.ok());
  EXPECT_GT(o.report.nonfinite_steps, 0u);
  EXPECT_NE(o.report.first_problem.find("non-finite adjoint at step"), std::string::npos);
  EXPECT_NE(o.report.first_problem.find("layer 0"), std::string::npos);
}

// A family without a backward pass (make_adjoint() returns nullptr): it silently forwards
// nothing, which is all the refusal needs.
class LayerWithoutAdjoint final : public egret::Layer<double> {
 public:
  std::string type_name() const override { return "forward_only"; }
  egret::Index units() const override { return 2; }
  egret::Index inputs() const override { return 1; }
  double output_time_constant(Index) const override { return 1; }
  bool clocked() const override { return false; }
  std::unique_ptr<egret::Layer<double>> clone() const override {
    return std::make_unique<LayerWithoutAdjoint>();
  }
  void reset() override {}
  void receive_input(double, egret::Index, double, egret::Scheduler<double>&) override {}
  void release(const egret::Event<double>&) override {}
  egret::InternalEvent<double> next_internal_event() const override { return {}; }
  void fire(double, egret::Scheduler<double>&, std::vector<egret::Emission<double>>&) override {}
  egret::LayerState<double> state_at(double) const override { return {}; }
  egret::OperationCounts operation_counts() const override { return {}; }
  egret::DenseCost dense_cost() const override { return {}; }
  egret::NamedParameters<double> parameters() const override { return {}; }
  std::unique_ptr<egret::Layer<double>> with_parameters(
      const egret::NamedParameters<double>&) const override {
    return clone();
  }
};

TEST(AdjointEdgeCases, NoTapeForLayersWithoutAnExactBackwardPass) {
  egret::Network<double> net;
  net.add_layer(std::make_unique<LayerWithoutAdjoint>());
  egret::Tape<double> tape;
  egret::SimOptions<double> opt;
  opt.end_time = 5;
  opt.tape = &tape;
  try {
    egret::simulate(net, egret::InputStream<double>({}, 1), opt);
    ADD_FAILURE() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("forward_only) has no exact backward pass"),
              std::string::npos);
  }
}

}  // namespace
