// Operation counts (sim/operation_counts.hpp, docs/metrics.md) against hand counts: one tiny
// network per family, with zero weights placed by hand, binary (1) and graded inputs, closed
// gates, silent units and routed channels, worked out tick by tick in the comments. Each count
// shows the family's sparsity: only open rows, spiking columns, changed states or routed channels
// are counted.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/config/network_config.hpp"
#include "sim/engine.hpp"

namespace {

using egret::InputEvent;
using egret::OperationCounts;

struct Run {
  egret::LayerCounts layer;
  std::uint64_t ticks = 0;
};

Run run(const std::string& layer_json, int inputs, const std::vector<InputEvent<double>>& in,
        double end_time) {
  const std::string cfg =
      R"({"input_channels": )" + std::to_string(inputs) + R"(, "layers": [)" + layer_json + "]}";
  auto net = egret::build_network<double>(egret::parse_network_config(cfg, "test"));
  egret::SimOptions<double> opt;
  opt.end_time = end_time;
  const auto r = egret::simulate(net, egret::InputStream<double>(in, inputs), opt);
  return {r.layers[0], r.layers[0].internal_steps};
}

void expect_counts(const Run& r, std::uint64_t synaptic_macs, std::uint64_t gate_products,
                   std::uint64_t synaptic_acs, std::uint64_t updates) {
  EXPECT_EQ(r.layer.operations.synaptic_macs, synaptic_macs);
  EXPECT_EQ(r.layer.operations.gate_products, gate_products);
  EXPECT_EQ(r.layer.operations.synaptic_acs, synaptic_acs);
  EXPECT_EQ(r.layer.operations.membrane_updates, updates);
  EXPECT_EQ(r.layer.operations.effective_macs(), synaptic_macs + gate_products);
}

// D = 2, N = 3, theta = 1, alpha = 1/2, b = 0. W = [[1.5, 0], [0, 0], [0.5, 1]]: column 0 has 2
// nonzero weights, column 1 has 1. V has one nonzero weight, V[2][0] = 0.5.
//  tick 1: x = (1, 2): column 0 with a binary 1 -> 2 ACs, column 1 with a graded 2 -> 1 MAC.
//          v = (1.5, 0, 2.5): units 0 and 2 spike. First tick: 3 membrane updates.
//  tick 2: spikes of units 0 and 2: V's column 0 has 1 weight -> 1 AC, column 2 none.
//          v0 = 0.75 - 1, v2 = 1.25 + 0.5 - 1 change, v1 stays 0: 2 updates.
//  tick 3: no input, no spike: v0 and v2 decay, v1 stays 0: 2 updates.
TEST(OperationCounts, LifHandCount) {
  const auto r = run(R"({"type": "lif", "units": 3, "dt": 1, "tau_mem": 1.4426950408889634,
      "params": {"W": [[1.5, 0], [0, 0], [0.5, 1]], "V": [[0, 0, 0], [0, 0, 0], [0.5, 0, 0]],
                 "b": 0, "theta": 1}})",
                     2, {{0.5, 0, 1.0}, {0.5, 1, 2.0}}, 3.0);
  EXPECT_EQ(r.layer.events, 2u);
  expect_counts(r, 1, 0, 3, 7);
  EXPECT_EQ(r.layer.dense.operations_per_step, 3u * (2 + 3));
  EXPECT_EQ(r.layer.dense.state_words_per_unit, 1u);
}

// D = 2, N = 2, no recurrence. W_x = [[2, 0], [0, 0.5]], W_beta = [[0, 0], [0, 1]], b_x = 0,
// b_beta = 0.5, alpha = 1.
//  tick 1: x = (1, 0): W_x column 0 (1 weight) with a binary 1 -> 1 AC; W_beta column 0 is
//          empty. h_hat = (2, 0), beta = 0.5: unit 0 switches to 1, unit 1 stays 0. 2 updates
//          (first tick).
//  tick 2: x = (0, 3): W_x column 1 -> 1 MAC, W_beta column 1 -> 1 MAC. h_hat = (0, 1.5),
//          beta = (0.5, 3.5): nobody switches, h keeps its value: no update.
//  tick 3: no input: nothing.
TEST(OperationCounts, BmruHandCount) {
  const auto r = run(R"({"type": "bmru", "units": 2, "dt": 1,
      "params": {"W_x": [[2, 0], [0, 0.5]], "W_beta": [[0, 0], [0, 1]], "b_x": 0,
                 "b_beta": 0.5, "alpha": 1}})",
                     2, {{0.5, 0, 1.0}, {1.5, 1, 3.0}}, 3.0);
  EXPECT_EQ(r.layer.events, 1u);
  expect_counts(r, 2, 0, 1, 2);
  EXPECT_EQ(r.layer.dense.operations_per_step, 2u * 2 * 2);
}

// D = 2, N = 3, gates held constant (g_alpha = 0): units 0 and 2 open, unit 1 closed. b = 0.
// W = [[1, 0], [1, 1], [0, 0.5]], V = [[0, 0.5, 0], [0.3, 0, 0], [0.2, 0, 0]].
//  tick 1: x = (1, 2). Open rows only: row 0 has W[0][0] for the binary 1 -> 1 AC; row 2 has
//          W[2][1] for the graded 2 -> 1 MAC (closed row 1's two weights are not counted).
//          h = 0: no recurrent pair. h = (tanh 1, 0, tanh 1). 3 updates (first tick).
//  tick 2: open rows against h = (tanh 1, 0, tanh 1): row 0 has V[0][1] only, against h1 = 0
//          -> none; row 2 has V[2][0] -> 1 MAC. h0 = tanh 0 = 0, h2 = tanh(0.2 tanh 1): 2.
//  tick 3: h = (0, 0, h2): row 0 and row 2 have no weight at column 2 -> none. h0 stays 0,
//          h2 = tanh 0 = 0 changes: 1 update.
TEST(OperationCounts, SurnnHandCount) {
  const auto r = run(R"({"type": "surnn", "units": 3, "dt": 1, "gate": {"frequencies": 1},
      "params": {"W": [[1, 0], [1, 1], [0, 0.5]],
                 "V": [[0, 0.5, 0], [0.3, 0, 0], [0.2, 0, 0]], "b": 0,
                 "g_b": [1, -1, 1], "g_alpha": [[0], [0], [0]]}})",
                     2, {{0.5, 0, 1.0}, {0.5, 1, 2.0}}, 3.0);
  expect_counts(r, 2, 0, 1, 6);
  EXPECT_EQ(r.layer.dense.operations_per_step, 3u * (2 + 3));
}

// D = 1, N = 2, unit 0 open, unit 1 closed; biases 0. W_r = (1, 1), W_z = (0, 1), W_n = (2, 1);
// V_r = [[0.5, 1], [1, 1]], V_z = [[0, 1], [1, 1]], V_n = [[1, 1], [1, 1]].
//  tick 1: x = 1 (binary). Open row 0: W_r and W_n have a weight -> 2 ACs (W_z[0] = 0).
//          h = 0: no recurrent pair; r (V_n h) = r 0 is not counted; (1 - z) n with z = 1/2,
//          n = tanh 2 -> 1 MAC; z h = z 0 not counted. 2 updates (first tick).
//  tick 2: no input. Open row 0 against h = (h0, 0): V_r[0][0] and V_n[0][0] -> 2 MACs
//          (V_z[0][0] = 0). r (V_n h), (1 - z) n and z h0 are all nonzero -> 3 MACs. h0
//          changes: 1 update.
TEST(OperationCounts, SugruHandCount) {
  const auto r = run(R"({"type": "sugru", "units": 2, "dt": 1, "gate": {"frequencies": 1},
      "params": {"W_r": [1, 1], "W_z": [0, 1], "W_n": [2, 1],
                 "V_r": [[0.5, 1], [1, 1]], "V_z": [[0, 1], [1, 1]], "V_n": [[1, 1], [1, 1]],
                 "b_r": 0, "b_z": 0, "b_n": 0, "g_b": [1, -1], "g_alpha": [[0], [0]]}})",
                     1, {{0.5, 0, 1.0}}, 2.0);
  expect_counts(r, 2, 1 + 3, 2, 3);
  EXPECT_EQ(r.layer.dense.operations_per_step, 3u * (2 * 1 + 2 * 2) + 3 * 2);
}

// Weight matrices without zeros take WeightPattern's closed form for the open rows (open units
// times the operands' split) instead of a row-by-row check. D = 2, N = 3, every weight 0.5,
// biases 0; units 0 and 2 open, unit 1 closed.
//  tick 1: x = (1, 2): each open row of each gate has 1 AC (the binary 1) and 1 MAC (the graded
//          2): 2 x 3 ACs, 2 x 3 MACs. h = 0: no recurrent pair, and of the gate products only
//          (1 - z) n is nonzero: 2 MACs. 3 updates (first tick).
//  tick 2: no input. The open rows against h = (h0, 0, h2), both graded: 2 x 3 x 2 MACs; r (V_n h),
//          (1 - z) n and z h are nonzero: 2 x 3 MACs. h0 and h2 change: 2 updates.
TEST(OperationCounts, SugruFullWeightsHandCount) {
  const auto r = run(R"({"type": "sugru", "units": 3, "dt": 1, "gate": {"frequencies": 1},
      "params": {"W_r": [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]],
                 "W_z": [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]],
                 "W_n": [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]],
                 "V_r": [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]],
                 "V_z": [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]],
                 "V_n": [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]],
                 "b_r": 0, "b_z": 0, "b_n": 0, "g_b": [1, -1, 1], "g_alpha": [[0], [0], [0]]}})",
                     2, {{0.5, 0, 1.0}, {0.5, 1, 2.0}}, 2.0);
  expect_counts(r, 6 + 12, 2 + 6, 6, 3 + 2);
}

// The same for the suRNN: tick 1, 2 ACs and 2 MACs (open rows of W); tick 2, 2 x 2 MACs (open
// rows of V against h0, h2). Updates 3 + 2.
TEST(OperationCounts, SurnnFullWeightsHandCount) {
  const auto r = run(R"({"type": "surnn", "units": 3, "dt": 1, "gate": {"frequencies": 1},
      "params": {"W": [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]],
                 "V": [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]], "b": 0,
                 "g_b": [1, -1, 1], "g_alpha": [[0], [0], [0]]}})",
                     2, {{0.5, 0, 1.0}, {0.5, 1, 2.0}}, 2.0);
  expect_counts(r, 2 + 4, 0, 2, 3 + 2);
}

// D = 2, N = 2, unit 0 open, unit 1 closed; theta = 1, alpha = 1/2, b = 0.
// W = [[1, 0.5], [1, 1]], V = [[0.25, 0], [1, 0]].
//  tick 1: x = (2, 1). Open row 0: W[0][0] with the graded 2 -> 1 MAC, W[0][1] with the binary
//          1 -> 1 AC. u0 = 2.5 spikes. 2 updates (first tick).
//  tick 2: unit 0's spike: open row 0 has V[0][0] -> 1 AC (closed row 1's V[1][0] is skipped).
//          u0 = 1.25 + 0.25 - 1 changes, closed u1 is carried: 1 update.
//  tick 3: no spike: u0 decays: 1 update.
TEST(OperationCounts, SuSnnHandCount) {
  const auto r = run(R"({"type": "su_snn", "units": 2, "dt": 1, "tau_mem": 1.4426950408889634,
      "gate": {"frequencies": 1},
      "params": {"W": [[1, 0.5], [1, 1]], "V": [[0.25, 0], [1, 0]], "b": 0, "theta": 1,
                 "g_b": [1, -1], "g_alpha": [[0], [0]]}})",
                     2, {{0.5, 0, 2.0}, {0.5, 1, 1.0}}, 3.0);
  EXPECT_EQ(r.layer.events, 1u);
  expect_counts(r, 1, 0, 2, 4);
  EXPECT_EQ(r.layer.dense.operations_per_step, 2u * (2 + 2));
}

// D = 2, N = 2, router rank 1, one unit and one channel kept per tick; tau = 1, mu = 0; biases
// 0. W_proj = (0.5, 0), W_ah = (1, 0)^T, W_ax = (0, 1)^T; W_z = [[1, 1], [1, 0]],
// W_h = [[1, 1], [1, 1]], U_z = [[1, 0], [0, 0]], U_r = [[0, 1], [1, 1]], U_h = [[1, 0], [1, 0]].
//  tick 1: x = (1, 2). Router: W_proj column 0 (1 weight) with the binary 1 -> 1 AC; column 1
//          is empty. c = 0.5: W_ah c -> 1 MAC, W_ax c -> 1 MAC. a_h = (0.5, 0) keeps unit 0,
//          a_x = (0, 0.5) keeps channel 1. x~ = m_x 2 at channel 1: W_z column 1 -> 1 MAC,
//          W_h column 1 -> 2 MACs. h = 0: h~ = 0, no U pair, no r. Products: m_x x -> 1 MAC,
//          m_h h = 0 none, z h^ for both units -> 2 MACs. 2 updates (first tick).
//  tick 2: no input: c = 0, no router pair. a_h = a_x = 0: ties keep unit 0 and channel 0,
//          x0 = 0 so x~ is empty (m_x x not counted). m_h h0 -> 1 MAC. h~ = (h~0, 0): U_z
//          column 0 -> 1 MAC, U_h column 0 -> 2 MACs; r of unit 0 only: U_r[0][0] = 0 -> none.
//          r h~0 and (1 - z) h~0 -> 2 MACs, z h^ for both -> 2 MACs. Both h change: 2 updates.
TEST(OperationCounts, DsGruHandCount) {
  const auto r = run(R"({"type": "ds_gru", "units": 2, "dt": 1,
      "router": {"rank": 1, "hidden_k": 1, "input_k": 1},
      "params": {"W_proj": [[0.5, 0]], "W_ah": [[1], [0]], "W_ax": [[0], [1]], "b_ah": 0,
                 "b_ax": 0, "tau_h": 1, "mu_h": 0, "tau_x": 1, "mu_x": 0,
                 "W_z": [[1, 1], [1, 0]], "W_r": [[1, 1], [1, 1]], "W_h": [[1, 1], [1, 1]],
                 "U_z": [[1, 0], [0, 0]], "U_r": [[0, 1], [1, 1]], "U_h": [[1, 0], [1, 0]],
                 "b_z": 0, "b_r": 0, "b_h": 0}})",
                     2, {{0.5, 0, 1.0}, {0.5, 1, 2.0}}, 2.0);
  expect_counts(r, (1 + 1 + 1 + 2) + (1 + 2), (1 + 2) + (1 + 2 + 2), 1, 4);
  // Router 2 + 2 + 2, gates 3 (2 2 + 2 2), masks 2 + 2, gate products 3 2.
  EXPECT_EQ(r.layer.dense.operations_per_step, 6u + 24 + 4 + 6);
}

// D = 1, N = 2; threshold 0.5 without noise; inv_tau_m = 1 (leak r = 1 - e^-1 = 0.632);
// W_i = (2, 0), b_i = 0; W_c = (1, 1), b_c = 0; W_x = (0, 1), b_x = 0.25.
//  tick 1: x = 1 (binary): W_i column -> 1 AC. m0 = 1.26 > 0.5: unit 0 spikes and reads its
//          rows: W_c[0] -> 1 AC, W_x[0] = 0 none; c h0 with h0 = 0 not counted. h0 = 0.25.
//          2 updates (first tick).
//  tick 2: x = 0.5 (graded): W_i -> 1 MAC. m0 = 0.46 + 0.32 > 0.5: spikes again: W_c[0] ->
//          1 MAC, c h0 -> 1 MAC. Unit 1 (m1 = 0, silent) is unchanged: 1 update.
//  tick 3: no input: m0 decays below the threshold: 1 update.
TEST(OperationCounts, SpikingGatedHandCount) {
  const auto r = run(R"({"type": "spiking_gated", "units": 2, "dt": 1, "threshold": 0.5,
      "threshold_noise": 0,
      "params": {"W_i": [2, 0], "b_i": 0, "W_c": [1, 1], "b_c": 0, "W_x": [0, 1],
                 "b_x": 0.25, "inv_tau_m": 1}})",
                     1, {{0.5, 0, 1.0}, {1.5, 0, 0.5}}, 3.0);
  EXPECT_EQ(r.layer.events, 2u);
  expect_counts(r, 2, 1, 2, 4);
  EXPECT_EQ(r.layer.dense.operations_per_step, 3u * 2 + 2);
  EXPECT_EQ(r.layer.dense.state_words_per_unit, 2u);
}

// D = 1, N = 2, theta = 0.5, biases 0. U_u = (1, 0), U_r = (0, 1), U_z = (2, 0);
// V_u = [[0, 0], [1, 0]], V_r = 0, V_z = [[0, 0], [1, 0]].
//  tick 1: x = 1 (binary): one weight in each of U_u, U_r, U_z -> 3 ACs. u z: unit 0's is
//          nonzero -> 1 MAC; unit 1's z = tanh 0 = 0 none. (1 - u) c = 0 none. c0 = 0.70 fires.
//          2 updates (first tick).
//  tick 2: sender 0 with graded y0: V_u column 0 -> 1 MAC, V_r none, V_z column 0 (operand
//          r0 y0) -> 1 MAC, r0 y0 -> 1 MAC. u z: unit 0's z = 0 none, unit 1's -> 1 MAC.
//          (1 - u) c: c0 != 0 -> 1 MAC, c1 = 0 none. Both c change: 2 updates.
//  tick 3: no sender (c0 < 0, c1 = 0.27 < 0.5). z = tanh 0 = 0 for both: no u z; (1 - u) c for
//          both -> 2 MACs. Both c change: 2 updates.
TEST(OperationCounts, DiscreteEgruHandCount) {
  const auto r = run(R"({"type": "discrete_egru", "units": 2, "dt": 1,
      "params": {"U_u": [1, 0], "U_r": [0, 1], "U_z": [2, 0],
                 "V_u": [[0, 0], [1, 0]], "V_r": 0, "V_z": [[0, 0], [1, 0]],
                 "b_u": 0, "b_r": 0, "b_z": 0, "theta": 0.5}})",
                     1, {{0.5, 0, 1.0}}, 3.0);
  EXPECT_EQ(r.layer.events, 1u);
  expect_counts(r, 2, 1 + 3 + 2, 3, 6);
  EXPECT_EQ(r.layer.dense.operations_per_step, 3u * (2 + 4) + 3 * 2);
  EXPECT_EQ(r.layer.dense.state_words_per_unit, 2u);
}

// Continuous EGRU, inputs only (theta out of reach): D = 2, N = 2, inputs held 2 ms.
// U_u = [[1, 0], [0, 0]], U_r = [[0, 0], [1, 0]], U_z = [[1, 0], [1, 0.5]]: column 0 has
// 1 + 1 + 2 = 4 weights and reaches both units; column 1 has 1 and reaches unit 1.
//   t = 1: channel 0, value 1 (binary): 4 ACs, 2 updates.   t = 3: its release, value -1: the
//   same.   t = 2: channel 1, value 0.5: 1 MAC, 1 update.   t = 4: its release: the same.
TEST(OperationCounts, ContinuousEgruInputsAndReleases) {
  const auto r = run(R"({"type": "continuous_egru", "units": 2, "window_input": 2,
      "params": {"U_u": [[1, 0], [0, 0]], "U_r": [[0, 0], [1, 0]], "U_z": [[1, 0], [1, 0.5]],
                 "V_u": 0, "V_r": 0, "V_z": 0, "b_u": 0, "b_r": 0, "b_z": 0, "theta": 5}})",
                     2, {{1.0, 0, 1.0}, {2.0, 1, 0.5}}, 10.0);
  EXPECT_EQ(r.layer.events, 0u);
  EXPECT_EQ(r.layer.releases, 2u);
  expect_counts(r, 2, 0, 8, 6);
  EXPECT_EQ(r.layer.dense.operations_per_step, 3u * (2 * 2 + 2 * 2));
  EXPECT_EQ(r.layer.dense.state_words_per_unit, 4u);
}

// Continuous EGRU crossings: unit 0 fires on its own (b_u = 5, b_z = 1, theta = 0.5), unit 1
// never (b_z = -1). V_u[1][0] = 0.5, V_r = 0, V_z[1][0] = 0.5, recurrent window 1 ms. Each of
// unit 0's events forms r y (1 gate product) and multiplies column 0: V_u with y = theta and
// V_z with r y, both graded -> 2 MACs; it updates unit 1 (reached) and unit 0 (reset): 2. Each
// release of an event multiplies the same column -> 2 MACs and updates unit 1 only.
TEST(OperationCounts, ContinuousEgruCrossingsAndRecurrentReleases) {
  const auto r = run(R"({"type": "continuous_egru", "units": 2,
      "window_recurrent": 1, "tau_m": 1,
      "params": {"U_u": 0, "U_r": 0, "U_z": 0, "V_u": [[0, 0], [0.5, 0]], "V_r": 0,
                 "V_z": [[0, 0], [0.5, 0]], "b_u": [5, 0], "b_r": 0, "b_z": [1, -1],
                 "theta": 0.5}})",
                     1, {}, 20.0);
  ASSERT_GE(r.layer.events, 3u);
  ASSERT_GE(r.layer.releases, 2u);
  expect_counts(r, 2 * (r.layer.events + r.layer.releases), r.layer.events, 0,
                2 * r.layer.events + r.layer.releases);
}

}  // namespace
