// NIR graphs (docs/nir.md): the file round trip through egret's writer and reader, the import's
// chain and its refusals, and the forward-only current-based families. The semantics against
// NIR's equations (integrated by SciPy) are tests/python/test_nir.py.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "io/config/network_config.hpp"
#include "io/nir/nir_chain.hpp"
#include "io/nir/nir_export.hpp"
#include "io/nir/nir_families.hpp"
#include "io/nir/nir_import.hpp"
#include "io/nir/nir_reader.hpp"
#include "io/nir/nir_units.hpp"
#include "io/nir/nir_writer.hpp"
#include "models/cell_families.hpp"
#include "train/parameters.hpp"

namespace {

using egret::nir::Array;
using egret::nir::Graph;
using egret::nir::Node;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("egret_test_nir_" + name)).string();
}

Node node(const std::string& type, std::map<std::string, Array> data) {
  Node n;
  n.type = type;
  n.data = std::move(data);
  return n;
}

Array vec(std::vector<double> v) {
  return {{v.size()}, v};
}

// Input(2) -> Affine -> LIF(3) -> Output, with a recurrent Linear.
Graph lif_graph() {
  Graph g;
  g.path = "/node";
  g.add("input", node("Input", {{"shape", vec({2})}}));
  g.add("w", node("Affine",
                  {{"weight", {{3, 2}, {1, -2, 3, -4, 5, -6}}}, {"bias", vec({0.5, -0.0, 1})}}));
  g.add("lif", node("LIF", {{"tau", vec({0.01, 0.02, 0.03})},
                            {"r", vec({1, 2, 3})},
                            {"v_leak", vec({0, 0.1, 0})},
                            {"v_threshold", vec({1, 1, 2})}}));
  g.add("rec", node("Linear", {{"weight", {{3, 3}, {0, 1, 0, 0, 0, 1, 1, 0, 0}}}}));
  g.add("output", node("Output", {{"shape", vec({3})}}));
  for (auto [a, b] : std::vector<std::pair<const char*, const char*>>{
           {"input", "w"}, {"w", "lif"}, {"lif", "rec"}, {"rec", "lif"}, {"lif", "output"}})
    g.connect(a, b);
  return g;
}

TEST(Nir, WriterAndReaderRoundTripEveryValueAndDefault) {
  const std::string path = temp_path("round_trip.nir");
  egret::nir::write_nir_file(path, lif_graph());
  const egret::nir::File f = egret::nir::read_nir_file(path);
  EXPECT_EQ(f.version, egret::nir::kNirVersion);
  ASSERT_EQ(f.graph.nodes.size(), 5u);
  ASSERT_EQ(f.graph.edges.size(), 5u);
  EXPECT_EQ(f.graph.edges[3].from, "rec");
  EXPECT_EQ(f.graph.edges[3].to, "lif");
  const Node* w = f.graph.find("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->at("weight").shape, (std::vector<std::size_t>{3, 2}));
  EXPECT_EQ(w->at("weight").values[5], -6);
  EXPECT_TRUE(std::signbit(w->at("bias").values[1]));  // -0.0 kept
  // NIR's default: v_reset = 0 when the file has none.
  EXPECT_EQ(f.graph.find("lif")->at("v_reset").values, (std::vector<double>{0, 0, 0}));
  std::filesystem::remove(path);
}

TEST(Nir, ChainFindsTheRecurrentLayer) {
  const Graph g = lif_graph();
  const egret::nir::Chain c = egret::nir::find_chain(g);
  ASSERT_EQ(c.layers.size(), 1u);
  EXPECT_EQ(c.input_channels, 2);
  EXPECT_EQ(c.layers[0].units, 3);
  ASSERT_EQ(c.layers[0].recurrent.size(), 1u);
  EXPECT_EQ(c.layers[0].recurrent[0].weight(2, 0), 1);
  EXPECT_FALSE(c.readout.has_value());
}

TEST(Nir, ImportRefusesNamingTheNode) {
  Graph g = lif_graph();
  g.add("delay", node("Delay", {{"delay", vec({1e-3, 1e-3, 1e-3})}}));
  g.connect("lif", "delay");
  g.connect("delay", "lif");
  egret::nir::File f{"1.0.7", g};
  egret::nir::ImportOptions o;
  o.dt_ms = 1;
  try {
    egret::nir::import_config(f, "x.nir", o);
    FAIL() << "a Delay was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("node 'delay' (Delay, /node/nodes/delay): egret has no "
                                         "delay on an edge"),
              std::string::npos)
        << e.what();
  }
}

TEST(Nir, ImportedLifRunsForwardOnlyAsCubaLif) {
  egret::nir::ImportOptions o;
  o.dt_ms = 0.5;
  const std::string text = egret::nir::import_config({"1.0.7", lif_graph()}, "x.nir", o);
  const egret::NetworkConfig cfg = egret::parse_network_config(text, "imported");
  ASSERT_EQ(cfg.layers.size(), 1u);
  EXPECT_EQ(cfg.layers[0].type, "cuba_lif");
  const auto net = egret::build_network<double>(cfg);
  EXPECT_FALSE(net.layer(0).has_adjoint());
  // tau 0.01 s is 10 ms; a LIF has no synapse.
  const auto p = net.layer(0).parameters();
  EXPECT_EQ(p.at("tau_mem", "test")(0, 0), 10.0);
  EXPECT_EQ(p.find("tau_syn"), nullptr);
  EXPECT_THROW(egret::ParameterVector<double>(net, false), std::invalid_argument);
}

TEST(Nir, UnitConversionsComeBackBitForBit) {
  for (double ms : {20.0, 2.4999999441206455, 0.1, 1e-3, 123456.789, 7.0 / 3.0}) {
    EXPECT_EQ(egret::nir::egret_milliseconds(egret::nir::nir_seconds(ms)), ms) << ms;
  }
  // r = 1 / (1 - exp(-dt / tau)) integrates a held input to exactly that input at the tick's end.
  const double r = egret::nir::unit_gain_resistance(20, 1);
  EXPECT_NEAR((1 - std::exp(-1.0 / 20)) * r, 1.0, 1e-15);
}

TEST(Nir, ExportRefusesWhatNirCannotExpress) {
  const egret::NetworkConfig cfg = egret::parse_network_config(
      R"({"input_channels": 2, "layers": [{"type": "bmru", "units": 3}]})", "bmru");
  const auto values = egret::nir::values_of_config(cfg);
  try {
    egret::nir::export_graph(values, {});
    FAIL() << "bmru was exported";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("layer 0 (bmru): NIR cannot express it exactly: NIR has "
                                         "no bistable unit"),
              std::string::npos)
        << e.what();
  }
  egret::nir::ExportOptions ext;
  ext.extension = true;
  const Graph g = egret::nir::export_graph(values, ext);
  ASSERT_NE(g.find("layer0.egret"), nullptr);
  EXPECT_EQ(g.find("layer0.egret")->type, "egret.bmru");
}

// The exporter reads what a family registered (CellFamily::nir) and names no family: every
// built-in family either maps to a NIR neuron or says what NIR lacks; a family registered without
// a description, and a type nobody registered, are refused as having no mapping.
TEST(Nir, ExportWalksTheFamilysRegistration) {
  for (const egret::CellFamily& f : egret::cell_families()) {
    if (f.type.rfind("nir_test_", 0) == 0) continue;
    EXPECT_TRUE(f.nir.neuron != egret::NirDescription::Neuron::kNone || !f.nir.lacks.empty())
        << f.type;
  }
  egret::CellFamily plain = egret::find_cell_family("lif", "test");
  plain.type = "nir_test_plain_lif";
  plain.nir = {};
  egret::register_cell_family(plain);
  egret::nir::LayerValues layer;
  layer.type = "nir_test_plain_lif";
  EXPECT_EQ(egret::nir::nir_lacks(layer),
            "egret has no NIR mapping for the family 'nir_test_plain_lif'");
  layer.type = "no_such_family";
  EXPECT_EQ(egret::nir::nir_lacks(layer),
            "egret has no NIR mapping for the family 'no_such_family'");
  layer.type = "lif";
  EXPECT_EQ(egret::nir::nir_lacks(layer), "");
  // su-SNN maps as LIF only while every unit's gate stays open (g_b > sum |g_alpha|).
  layer.type = "su_snn";
  layer.params["g_b"] = Eigen::MatrixXd::Constant(2, 1, 1.0);
  layer.params["g_alpha"] = Eigen::MatrixXd::Constant(2, 3, 0.25);
  EXPECT_EQ(egret::nir::nir_lacks(layer), "");
  layer.params["g_alpha"](1, 2) = -0.5;
  EXPECT_NE(egret::nir::nir_lacks(layer).find("unit 1's gate can close (g_b = 1.000000 is not "
                                              "above the sum of its |g_alpha|, 1.000000)"),
            std::string::npos)
      << egret::nir::nir_lacks(layer);
}

}  // namespace
