// Discrete-time EGRU training (models/discrete_egru/discrete_egru_adjoint.hpp): the backward pass's
// counts on a two-unit example worked by hand (pairs, zero pseudo-derivatives,
// multiply-accumulates, the surrogate events on the tape), and the forward pass unchanged by
// recording a tape. The gradients themselves are checked against PyTorch autograd of the same
// equations in tests/python/test_discrete_egru_gradients.py.
#include <gtest/gtest.h>

#include <cmath>

#include "adjoint/reverse_sweep.hpp"
#include "events/synthetic_input.hpp"
#include "models/discrete_egru/discrete_egru_layer.hpp"
#include "sim/engine.hpp"

namespace {

using D = egret::DiscreteEgruParams<double>;

// Unit 0 (z = tanh(0.9) = 0.716, theta 0.5, u = sigmoid(10) ~ 1) fires at every odd tick:
// c = u z, then c = u z (1 - u) ~ 3e-5 after its reset. Unit 1 (z = tanh(0.3) = 0.291, theta
// 0.5) never fires and sits at v ~ -0.21, inside the half-width 0.3: it has H' != 0 at every
// tick, so it emits a surrogate event at every tick. All weights are zero, no inputs.
egret::Network<double> two_units() {
  D p = D::zeros(2, 1, 0.5);
  p.dt = 1;
  p.tau_o.setConstant(4);
  p.half_width = 0.3;
  p.b_u << 10, 10;
  p.b_z << 0.9, 0.3;
  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::DiscreteEgruLayer<double>>(std::make_shared<D>(p)));
  egret::Readout<double> ro;
  ro.W_o = egret::Matrix<double>::Ones(1, 2);
  ro.b_o = egret::Vector<double>::Zero(1);
  net.set_readout(ro);
  return net;
}

TEST(DiscreteEgruBackward, CountsOfATwoUnitExampleByHand) {
  auto net = two_units();
  egret::Tape<double> tape;
  egret::SimOptions<double> opt;
  opt.end_time = 10;
  opt.readout_windows = {{0.5, 10}};
  opt.tape = &tape;
  const auto fwd = egret::simulate(net, egret::InputStream<double>({}, 1), opt);
  ASSERT_EQ(fwd.trace.size(), 5u);  // unit 0 at ticks 1, 3, 5, 7, 9
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(fwd.trace[i].time, 2.0 * i + 1);
    EXPECT_EQ(fwd.trace[i].unit, 0);
  }
  EXPECT_EQ(fwd.layers[0].events, 5u);
  // The tape holds one surrogate item (unit 1, value 0) per tick besides the 5 events.
  std::size_t surrogates = 0;
  for (const auto& item : tape.items) {
    if (!item.surrogate) continue;
    ++surrogates;
    EXPECT_EQ(item.index, 1);
    EXPECT_EQ(item.value, 0.0);
  }
  EXPECT_EQ(surrogates, 10u);
  EXPECT_EQ(tape.items.size(), 15u);
  // Per tick the tape keeps c (2 values) and an empty bin (its count).
  EXPECT_EQ(tape.step_states[0].size(), 10u * 3);

  auto grad = egret::zero_gradient(net, 0);
  const std::vector<std::vector<double>> d_o = {{1.0, 1.0}};
  const auto report = egret::reverse_sweep(net, tape, fwd, d_o, grad);
  ASSERT_TRUE(report.ok());
  // 2 units x 10 ticks; H' = 0 only for unit 0 at its 5 silent ticks (v ~ -0.5).
  EXPECT_EQ(report.surrogate_pairs, 20u);
  EXPECT_EQ(report.zero_surrogate_pairs, 5u);
  EXPECT_DOUBLE_EQ(report.backward_sparsity(), 0.25);
  // Tick 10 carries no adjoint (unit 0 is silent with H' = 0, and unit 1's trace adjoint at the
  // window's end is zero): no weight work. Tick 1 has no previous tick and no senders: none.
  // Even ticks 2..8 (sender unit 0, |A| = 1, N = 2): replay 3 N |A| = 6, reset-gate adjoints
  // N |A| = 2, dV columns |A| (2 N + |A|) = 5, dL/dy_{k-1} of unit 0 (sender: N for V_u, N for
  // V_r, dense since 8 |A| >= N: 4) and of unit 1 (H' != 0, not a sender: 3 N = 6): 23. Odd
  // ticks 3..9 (no sender, V_r gathered over no senders): unit 1's dL/dy_{k-1}, 2 N = 4.
  EXPECT_EQ(report.backward_macs, 4u * 23 + 4u * 4);
  // Unit 1's threshold gradient arrives through its surrogate events only.
  EXPECT_NE(grad.layers[0].at("theta", "test")(1, 0), 0.0);
}

// Recording a tape adds surrogate events to the tape only: events and readouts are bitwise
// those of a run without a tape (two discrete layers with different tick intervals, so that
// surrogate inputs arrive between the consuming layer's ticks).
TEST(DiscreteEgruBackward, RecordingATapeLeavesTheForwardPassUnchanged) {
  D p0 = D::random(12, 4, 3, {2.5, 0, 0, 0.5, 0.3, 0.2});
  p0.dt = 0.5;
  D p1 = D::random(6, 12, 4, {2.5, 0, 0, 0.4, 0.3, 0.15});
  p1.dt = 1.5;
  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::DiscreteEgruLayer<double>>(std::make_shared<D>(p0)));
  net.add_layer(std::make_unique<egret::DiscreteEgruLayer<double>>(std::make_shared<D>(p1)));
  egret::Readout<double> ro;
  ro.W_o = egret::Matrix<double>::Constant(2, 6, 0.5);
  ro.b_o = egret::Vector<double>::Zero(2);
  net.set_readout(ro);
  const auto input = egret::poisson_input<double>(4, 200.0, 40.0, 7);
  egret::SimOptions<double> opt;
  opt.end_time = 40;
  opt.readout_times = {13.3, 40};
  opt.readout_windows = {{5, 30}};
  const auto plain = egret::simulate(net, input, opt);
  egret::Tape<double> tape;
  opt.tape = &tape;
  const auto taped = egret::simulate(net, input, opt);
  std::size_t surrogates = 0;
  for (const auto& item : tape.items) surrogates += item.surrogate ? 1 : 0;
  EXPECT_GT(surrogates, 50u);
  EXPECT_GT(plain.layers[1].events, 20u);
  ASSERT_EQ(plain.trace.size(), taped.trace.size());
  for (std::size_t i = 0; i < plain.trace.size(); ++i) {
    EXPECT_EQ(plain.trace[i].time, taped.trace[i].time);
    EXPECT_EQ(plain.trace[i].layer, taped.trace[i].layer);
    EXPECT_EQ(plain.trace[i].unit, taped.trace[i].unit);
    EXPECT_EQ(plain.trace[i].value, taped.trace[i].value);
  }
  for (std::size_t l = 0; l < 2; ++l) {
    EXPECT_EQ(plain.layers[l].events, taped.layers[l].events);
    EXPECT_EQ(plain.layers[l].inputs_received, taped.layers[l].inputs_received);
  }
  for (std::size_t j = 0; j < plain.readouts.size(); ++j) {
    EXPECT_EQ(plain.readouts[j].trace, taped.readouts[j].trace);
    EXPECT_EQ(plain.readouts[j].logits, taped.readouts[j].logits);
  }
  EXPECT_EQ(plain.events_processed, taped.events_processed);
}

}  // namespace
