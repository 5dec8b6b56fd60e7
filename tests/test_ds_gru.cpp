// The DS-GRU family (models/ds_gru/ds_gru_cell.hpp, DS-RNN paper Eq. 5-11) on the tick schedule:
// three ticks worked by hand with the router's choice of units and channels (ties included), the
// top-k order, a configuration with only type, units and dt, and the refusal of impossible budgets.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "io/config/network_config.hpp"
#include "models/ds_gru/ds_gru_cell.hpp"
#include "models/tick/tick_layer.hpp"
#include "sim/engine.hpp"

namespace {

using egret::Index;
using DsGruParameters = egret::DsGruParams<double>;

double sigmoid(double u) {
  return 1 / (1 + std::exp(-u));
}

// Two input channels, two units, router rank 1, one unit and one channel kept per tick.
//   router: c = x_0 + x_1, a_h = (c, -c), a_x = (c, -c), tau = 1, mu = 0: c > 0 keeps unit 0 and
//           channel 0, c < 0 unit 1 and channel 1, c = 0 ties and keeps the lower (0 and 0).
//   GRU: W_z = W_r = U_z = U_r = 0 and zero biases, so z = r = 1/2; W_h = I, U_h = [[0, 2], [2,
//   0]].
// With s = sigmoid(2), inputs x = (2, 0) at tick 1, none at tick 2, (1, -3) at tick 3:
//   tick 1: c = 2; m_h = (s, 0), m_x = (s, 0); h~ = 0, x~ = (2s, 0); h^ = (tanh 2s, 0);
//           h_1 = (tanh(2s) / 2, 0): unit 0 sends h_1[0], unit 1 (unchanged) sends nothing.
//   tick 2: c = 0, a tie: m_h = (1/2, 0), m_x = (1/2, 0); x~ = 0; h~ = (h_1[0] / 2, 0);
//           U_h (r h~) = (0, h_1[0] / 2); h_2 = (h_1[0] / 4, tanh(h_1[0] / 2) / 2).
//   tick 3: c = -2; m_h = (0, s), m_x = (0, s): channel 0's x = 1 is dropped, and so is unit 0's
//           state; h~ = (0, s h_2[1]), x~ = (0, -3s); h^ = (tanh(s h_2[1]), tanh(-3s));
//           h_3 = (tanh(s h_2[1]) / 2, s h_2[1] / 2 + tanh(-3s) / 2).
DsGruParameters hand_params() {
  DsGruParameters p;
  for (egret::Matrix<double>* w : {&p.W_z, &p.W_r, &p.U_z, &p.U_r}) w->setZero(2, 2);
  p.W_h.setIdentity(2, 2);
  p.U_h.resize(2, 2);
  p.U_h << 0, 2, 2, 0;
  for (egret::Vector<double>* b : {&p.b_z, &p.b_r, &p.b_h, &p.b_ah, &p.b_ax}) b->setZero(2);
  p.W_proj.setOnes(1, 2);
  for (egret::Matrix<double>* w : {&p.W_ah, &p.W_ax}) {
    w->resize(2, 1);
    *w << 1, -1;
  }
  p.hidden_k = 1;
  p.input_k = 1;
  return p;
}

TEST(DsGru, RouterChoiceAndStatesByHand) {
  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::TickLayer<double, egret::DsGruCell>>(
      std::make_shared<DsGruParameters>(hand_params())));
  egret::SimOptions<double> opt;
  opt.end_time = 3;
  opt.snapshot_times = {1, 2, 3};
  const auto r = egret::simulate(
      net, egret::InputStream<double>({{0.5, 0, 2.0}, {2.5, 0, 1.0}, {2.5, 1, -3.0}}, 2), opt);
  const double s = sigmoid(2);
  const double h1 = std::tanh(2 * s) / 2;
  const double h2[2] = {h1 / 4, std::tanh(h1 / 2) / 2};
  const double h3[2] = {std::tanh(s * h2[1]) / 2, s * h2[1] / 2 + std::tanh(-3 * s) / 2};
  const std::vector<std::vector<double>> m_h = {{s, 0}, {0.5, 0}, {0, s}};
  const std::vector<std::vector<double>> h = {{h1, 0}, {h2[0], h2[1]}, {h3[0], h3[1]}};
  ASSERT_EQ(r.snapshots.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    const auto& state = r.snapshots[k].layers[0];
    EXPECT_EQ(state.at("m_h"), m_h[k]) << "tick " << k + 1;
    EXPECT_EQ(state.at("m_x"), m_h[k]) << "tick " << k + 1;  // the router's a_x = a_h here
    for (std::size_t m = 0; m < 2; ++m)
      EXPECT_NEAR(state.at("h")[m], h[k][m], 1e-15) << "tick " << k + 1 << " unit " << m;
  }
  // Delta semantics: the changes of h, in tick and unit order; unit 1 is unchanged at tick 1.
  const std::vector<std::pair<double, Index>> sent = {{1, 0}, {2, 0}, {2, 1}, {3, 0}, {3, 1}};
  const std::vector<double> change = {h1, h2[0] - h1, h2[1], h3[0] - h2[0], h3[1] - h2[1]};
  ASSERT_EQ(r.trace.size(), sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(r.trace[i].time, sent[i].first);
    EXPECT_EQ(r.trace[i].unit, sent[i].second);
    EXPECT_NEAR(r.trace[i].value, change[i], 1e-15) << i;
  }
}

TEST(DsGru, TopKBreaksTiesTowardTheLowerChannelAndRanksNanLast) {
  std::vector<Index> kept;
  egret::Vector<double> score(5);
  score << 1, 3, 3, 2, 3;
  egret::keep_top_k(score, 2, kept);
  EXPECT_EQ(kept, (std::vector<Index>{1, 2}));
  egret::keep_top_k(score, 4, kept);
  EXPECT_EQ(kept, (std::vector<Index>{1, 2, 3, 4}));
  egret::keep_top_k(score, 5, kept);
  EXPECT_EQ(kept, (std::vector<Index>{0, 1, 2, 3, 4}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  score << nan, -1, nan, -5, 0;
  egret::keep_top_k(score, 3, kept);
  EXPECT_EQ(kept, (std::vector<Index>{1, 3, 4}));
  egret::keep_top_k(score, 4, kept);
  EXPECT_EQ(kept, (std::vector<Index>{0, 1, 3, 4}));
}

const egret::DsGruParams<double>& params_of(const egret::Network<double>& net) {
  using Layer = egret::TickLayer<double, egret::DsGruCell>;
  return dynamic_cast<const Layer&>(net.layer(0)).params();
}

TEST(DsGru, TypeUnitsAndDtBuildALayerWithTheDefaultBudgets) {
  const auto cfg = egret::parse_network_config(
      R"({"input_channels": 3, "layers": [{"type": "ds_gru", "units": 8, "dt": 1}]})", "test");
  auto net = egret::build_network<double>(cfg);
  EXPECT_EQ(net.layer(0).type_name(), "ds_gru");
  EXPECT_TRUE(net.layer(0).has_adjoint());
  const auto& p = params_of(net);
  EXPECT_EQ(p.hidden_k, 4);  // ceil(0.5 * 8)
  EXPECT_EQ(p.input_k, 2);   // ceil(0.5 * 3)
  EXPECT_EQ(p.router_rank(), 4);
  EXPECT_TRUE(p.straight_through);
  EXPECT_EQ(p.tau_h, 1.0);
  EXPECT_EQ(p.mu_x, 0.0);
  egret::SimOptions<double> opt;
  opt.end_time = 5;
  const auto r = egret::simulate(net, egret::InputStream<double>({{0.5, 2, 1.0}}, 3), opt);
  EXPECT_EQ(r.layers[0].internal_steps, 5u);
  EXPECT_GT(r.trace.size(), 0u);
}

TEST(DsGru, BudgetsResolveFromSparsityOrCount) {
  const auto cfg = egret::parse_network_config(
      R"({"input_channels": 10, "layers": [{"type": "ds_gru", "units": 10,
          "router": {"hidden_sparsity": 0.7, "input_k": 10, "rank": 2, "straight_through": 0}}]})",
      "test");
  auto net = egret::build_network<double>(cfg);
  const auto& p = params_of(net);
  EXPECT_EQ(p.hidden_k, 3);  // ceil(0.3 * 10), although 0.3 * 10 = 3.0000000000000004
  EXPECT_EQ(p.input_k, 10);
  EXPECT_EQ(p.router_rank(), 2);
  EXPECT_FALSE(p.straight_through);
}

// Each configuration is refused with an error naming the layer and the key.
TEST(DsGru, ImpossibleBudgetsAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("router": {"hidden_k": 9})", "router.hidden_k: 9 exceeds the layer's 8 units"},
      {R"("router": {"input_k": 4})", "router.input_k: 4 exceeds the layer's 3 input channels"},
      {R"("router": {"hidden_sparsity": 1})", "router.hidden_sparsity: 1 would keep no channel"},
      {R"("router": {"input_sparsity": -0.1})", "router.input_sparsity: -0.1 is outside [0, 1]"},
      {R"("router": {"hidden_k": 2.5})", "router.hidden_k: must be a whole number"},
      {R"("router": {"rank": 0})", "router.rank: 0 is outside [1, 1e+06]"},
      {R"("router": {"straight_through": 0.5})", "router.straight_through: must be a whole number"},
      {R"("router": {"k": 2})", "unknown key 'router.k' for a ds_gru layer"},
  };
  for (const auto& [keys, message] : cases) {
    const std::string json =
        R"({"input_channels": 3, "layers": [{"type": "ds_gru", "units": 8, )" + keys + "}]}";
    try {
      const auto cfg = egret::parse_network_config(json, "test");
      egret::build_network<double>(cfg);
      ADD_FAILURE() << "accepted: " << keys;
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      const bool names_layer = what.find("layer 0") != std::string::npos ||  // the factory
                               what.find("layers[0]") != std::string::npos;  // the parser
      EXPECT_TRUE(names_layer) << what;
      EXPECT_NE(what.find(message), std::string::npos) << what;
    }
  }
}

TEST(DsGru, ParametersWithImpossibleShapesOrValuesAreRefused) {
  DsGruParameters p = hand_params();
  p.W_ah.resize(3, 1);
  p.W_ah.setZero();
  EXPECT_THROW(p.validate("layer 0 (ds_gru)"), std::invalid_argument);
  p = hand_params();
  p.tau_x = std::numeric_limits<double>::infinity();
  try {
    p.validate("layer 0 (ds_gru)");
    ADD_FAILURE() << "an infinite tau_x was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tau_x must be finite"), std::string::npos) << e.what();
  }
  p = hand_params();
  p.hidden_k = 3;
  EXPECT_THROW(p.validate("layer 0 (ds_gru)"), std::invalid_argument);
}

// r is computed at every unit only while a tape is recorded, by the same sums: the events do not
// depend on it. The float build follows the double one.
TEST(DsGru, RecordingATapeChangesNothingAndFloatFollowsDouble) {
  const auto cfg = egret::parse_network_config(
      R"({"seed": 4, "input_channels": 4, "layers": [
          {"type": "ds_gru", "units": 12, "router": {"hidden_k": 5, "input_k": 2},
           "init": {"weight_scale": 2}},
          {"type": "ds_gru", "units": 6, "router": {"straight_through": 0}}]})",
      "test");
  auto net = egret::build_network<double>(cfg);
  auto net_f = egret::build_network<float>(cfg);
  std::vector<egret::InputEvent<double>> in;
  std::vector<egret::InputEvent<float>> in_f;
  for (int i = 0; i < 60; ++i) {
    const double t = 0.3 + 0.65 * i, v = 0.5 + (i % 7) * 0.25 - (i % 3 == 0 ? 1.5 : 0);
    in.push_back({t, i % 4, v});
    in_f.push_back({static_cast<float>(t), i % 4, static_cast<float>(v)});
  }
  egret::SimOptions<double> plain;
  plain.end_time = 40;
  plain.snapshot_times = {40};
  egret::Tape<double> tape;
  egret::SimOptions<double> taped = plain;
  taped.tape = &tape;
  const auto a = egret::simulate(net, egret::InputStream<double>(in, 4), plain);
  const auto b = egret::simulate(net, egret::InputStream<double>(in, 4), taped);
  ASSERT_GT(a.trace.size(), 500u);
  ASSERT_EQ(a.trace.size(), b.trace.size());
  for (std::size_t i = 0; i < a.trace.size(); ++i) {
    EXPECT_EQ(a.trace[i].time, b.trace[i].time);
    EXPECT_EQ(a.trace[i].unit, b.trace[i].unit);
    EXPECT_EQ(a.trace[i].value, b.trace[i].value) << i;
  }
  egret::SimOptions<float> plain_f;
  plain_f.end_time = 40;
  plain_f.snapshot_times = {40};
  const auto f = egret::simulate(net_f, egret::InputStream<float>(in_f, 4), plain_f);
  for (std::size_t l = 0; l < 2; ++l) {
    const auto& h = a.snapshots[0].layers[l].at("h");
    const auto& h_f = f.snapshots[0].layers[l].at("h");
    for (std::size_t m = 0; m < h.size(); ++m) EXPECT_NEAR(h_f[m], h[m], 1e-4) << l << " " << m;
  }
}

}  // namespace
