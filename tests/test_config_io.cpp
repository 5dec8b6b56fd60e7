// Configuration files and event text files: parsing, strict errors, atomic writes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "camera/formats/camera_readers.hpp"
#include "io/config/network_config.hpp"
#include "io/config/train_config.hpp"
#include "io/event_csv.hpp"
#include "io/hdf5/trace_file.hpp"
#include "models/continuous_egru/continuous_egru_layer.hpp"
#include "sim/precision_cast.hpp"
#include "tests/test_support.hpp"

namespace {

namespace fs = std::filesystem;

fs::path config_scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "egret_tests";
  fs::create_directories(dir);
  return dir / name;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

using egret::testing::error_of;

TEST(ConfigIo, ParsesAndBuildsANetwork) {
  const auto cfg = egret::parse_network_config(R"({
    "seed": 3, "input_channels": 4,
    "layers": [
      {"type": "continuous_egru", "units": 6, "tau_m": 5, "window_input": 2,
       "window_recurrent": "inf", "threshold": 0.4, "init": {"bias_z": 0.9}},
      {"type": "discrete_egru", "units": 3, "dt": 0.5}
    ],
    "readout_classes": 2,
    "simulation": {"end_time": 50, "readout_times": [25, 50], "snapshot_times": [10]}
  })",
                                               "inline");
  EXPECT_EQ(cfg.seed, 3u);
  ASSERT_EQ(cfg.layers.size(), 2u);
  EXPECT_EQ(cfg.layers[0].settings.at("window_input"), 2.0);
  EXPECT_TRUE(std::isinf(cfg.layers[0].settings.at("window_recurrent")));
  EXPECT_EQ(cfg.layers[0].settings.at("init.bias_z"), 0.9);
  EXPECT_EQ(cfg.layers[1].settings.at("dt"), 0.5);
  auto net = egret::build_network<double>(cfg);
  EXPECT_EQ(net.size(), 2);
  EXPECT_EQ(net.input_channels(), 4);
  ASSERT_NE(net.readout(), nullptr);
  EXPECT_EQ(net.readout()->classes(), 2);
  const auto& l0 = dynamic_cast<const egret::ContinuousEgruLayer<double>&>(net.layer(0));
  EXPECT_TRUE((l0.params().tau_m.array() == 5.0).all());  // the scalar key, broadcast
  EXPECT_EQ(l0.params().theta[0], 0.4);
  // Same seed, same parameters.
  auto again = egret::build_network<double>(cfg);
  const auto& m0 = dynamic_cast<const egret::ContinuousEgruLayer<double>&>(again.layer(0));
  EXPECT_EQ(l0.params().V_z, m0.params().V_z);
  const auto r = egret::simulate(net, egret::InputStream<double>({{1.0, 2, 1.0}}, 4),
                                 egret::sim_options<double>(cfg));
  ASSERT_EQ(r.readouts.size(), 2u);
  EXPECT_EQ(r.readouts[1].logits.size(), 2u);
}

// The "readout" section's values replace the random readout (they were once parsed and dropped).
TEST(ConfigIo, ReadoutValuesAreApplied) {
  const std::string head = R"({"seed": 1, "input_channels": 2, "readout_classes": 2,
    "layers": [{"type": "continuous_egru", "units": 3}], )";
  const auto cfg = egret::parse_network_config(
      head + R"("readout": {"W_o": [[1, 2, 3], [4, 5, 6]], "b_o": [-1, 0.5]}})", "inline");
  const auto net = egret::build_network<double>(cfg);
  ASSERT_NE(net.readout(), nullptr);
  EXPECT_EQ(net.readout()->W_o(1, 2), 6.0);
  EXPECT_EQ(net.readout()->W_o(0, 1), 2.0);
  EXPECT_EQ(net.readout()->b_o(0), -1.0);
  EXPECT_EQ(net.readout()->b_o(1), 0.5);
  const auto only_bias =
      egret::parse_network_config(head + R"("readout": {"b_o": 0.25}})", "inline");
  const auto net2 = egret::build_network<double>(only_bias);
  const auto random = egret::build_network<double>(
      egret::parse_network_config(head + R"("readout": {}})", "inline"));
  EXPECT_EQ(net2.readout()->b_o(1), 0.25);
  EXPECT_EQ(net2.readout()->W_o, random.readout()->W_o);  // W_o stays random
  EXPECT_NE(error_of([&] {
              egret::build_network<double>(egret::parse_network_config(
                  head + R"("readout": {"W_o": [[1, 2], [3, 4]]}})", "inline"));
            }).find("readout: W_o: row 0 has 2 values (expected 2x3)"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              egret::build_network<double>(
                  egret::parse_network_config(head + R"("readout": {"V_o": 1}})", "inline"));
            }).find("readout: unknown parameter 'V_o' (known: W_o, b_o)"),
            std::string::npos);
}

TEST(ConfigIo, StrictErrorsNameTheKey) {
  auto err = [](const std::string& text) {
    return error_of([&] { egret::parse_network_config(text, "net.json"); });
  };
  EXPECT_NE(err("{").find("not valid JSON"), std::string::npos);
  // A number beyond double's range is a parse error of the file, naming it.
  EXPECT_EQ(err(R"({"input_channels": 1e999, "layers": []})").rfind("net.json: not valid JSON", 0),
            0u);
  EXPECT_NE(err(R"({"input_channels": 2, "layers": [{"type": "lif", "units": 2}],
                  "simulation": {"dense_step": 0}})")
                .find("simulation.dense_step"),
            std::string::npos);
  EXPECT_NE(err(R"({"input_channels": 2, "layers": [{"type": "continuous_egru", "units": 2,
                  "tau_mm": 3}]})")
                .find("layers[0]: unknown key 'tau_mm'"),
            std::string::npos);
  EXPECT_NE(err(R"({"input_channels": 2, "layers": [{"type": "lstm", "units": 2}]})")
                .find("unknown layer type 'lstm'"),
            std::string::npos);
  EXPECT_NE(err(R"({"input_channels": 2, "layers": [{"type": "continuous_egru", "units": "8"}]})")
                .find("layers[0].units: expected an integer >= 1, got \"8\""),
            std::string::npos);
  EXPECT_NE(err(R"({"input_channels": 0, "layers": [{"type": "continuous_egru", "units": 2}]})")
                .find("input_channels"),
            std::string::npos);
  EXPECT_NE(err(R"({"input_channels": 2, "layers": []})").find("non-empty array"),
            std::string::npos);
  // A key of another family is refused, not dropped (each family registers its own keys).
  EXPECT_NE(err(R"({"input_channels": 2, "layers": [{"type": "discrete_egru", "units": 2,
                  "tau_m": 5}]})")
                .find("layers[0]: unknown key 'tau_m' for a discrete_egru layer (known: type, "
                      "units, params, dt,"),
            std::string::npos);
  EXPECT_NE(err(R"({"input_channels": 2, "layers": [{"type": "discrete_egru", "units": 2,
                  "pseudo_derivative": {"dampening": 0.5, "width": 1}}]})")
                .find("unknown key 'pseudo_derivative.width'"),
            std::string::npos);
  // A value outside the family's registered bounds is refused when the file is read, in one
  // wording naming the file, the key, the value and the range (docs/model.md's): a negative
  // time constant, 0 and one below the floor alike.
  for (const char* tau_m : {"-10", "0", "0.0005"})
    EXPECT_EQ(err(R"({"input_channels": 2, "layers": [{"type": "continuous_egru", "units": 2,
                    "tau_m": )" +
                  std::string(tau_m) + "}]}"),
              "net.json: layers[0].tau_m: " + std::string(tau_m) +
                  " is outside [0.001, inf) (state time constant [ms])");
  EXPECT_NE(
      error_of([] { egret::load_network_config("/nonexistent/net.json"); }).find("cannot open"),
      std::string::npos);
}

// "precision": float unless the file asks for double; anything else is refused, naming it.
TEST(ConfigIo, PrecisionIsFloatByDefaultAndNamedInTheFile) {
  const std::string layers = R"("input_channels": 2, "layers": [{"type": "lif", "units": 2}])";
  auto parse = [](const std::string& text) {
    return egret::parse_network_config(text, "net.json");
  };
  EXPECT_EQ(parse("{" + layers + "}").precision, egret::Precision::kFloat);
  EXPECT_EQ(parse("{" + layers + R"(, "precision": "double"})").precision,
            egret::Precision::kDouble);
  EXPECT_EQ(parse("{" + layers + R"(, "precision": "float"})").precision, egret::Precision::kFloat);
  EXPECT_EQ(error_of([&] { parse("{" + layers + R"(, "precision": "half"})"); }),
            "net.json: precision: expected \"float\" or \"double\", got \"half\"");
  EXPECT_NE(error_of([&] {
              parse("{" + layers + R"(, "precision": 64})");
            }).find("net.json: precision: expected \"float\" or \"double\", got 64"),
            std::string::npos);
  // with_precision instantiates the body once per scalar and runs the chosen one.
  EXPECT_EQ(egret::with_precision(egret::Precision::kFloat, [](auto x) { return sizeof(x); }),
            sizeof(float));
  EXPECT_EQ(egret::with_precision(egret::Precision::kDouble, [](auto x) { return sizeof(x); }),
            sizeof(double));
}

// A float run of a double input refuses values float cannot hold instead of making them inf.
TEST(ConfigIo, FloatRunsRefuseInputsBeyondFloatRange) {
  const egret::InputStream<double> in({{1.0, 0, 2.5}, {2.0, 1, 1e39}}, 2);
  EXPECT_EQ(error_of([&] { egret::cast_input<float>(in); }),
            "input event 1 value: 1e+39 is beyond the range of float (\"precision\": "
            "\"double\" runs it)");
  const auto ok = egret::cast_input<float>(egret::InputStream<double>({{1.5, 1, -3.25}}, 2));
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok.events()[0].time, 1.5f);
  EXPECT_EQ(ok.events()[0].channel, 1);
  EXPECT_EQ(ok.events()[0].value, -3.25f);
}

TEST(ConfigIo, ReadsInputEventCsvWithLineNumbersInErrors) {
  const auto p = config_scratch("events.csv");
  write(p, "t,channel,value\n# comment\n2.5,1,0.5\n1.0,0\n\n");
  const auto s = egret::read_input_events_csv(p.string(), 2);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].time, 1.0);
  EXPECT_EQ(s[0].value, 1.0);
  EXPECT_EQ(s[1].value, 0.5);

  write(p, "1.0,0\nabc,1\n");
  EXPECT_NE(error_of([&] {
              egret::read_input_events_csv(p.string(), 2);
            }).find("events.csv:2: time is not a number"),
            std::string::npos);
  write(p, "1.0,0\n2.0,7\n");
  EXPECT_NE(
      error_of([&] { egret::read_input_events_csv(p.string(), 2); }).find("channel out of range"),
      std::string::npos);
  write(p, "1.0,0\nnan,1\n");
  EXPECT_NE(error_of([&] { egret::read_input_events_csv(p.string(), 2); }).find("not finite"),
            std::string::npos);
  write(p, "1.0,0,1,9\n");
  EXPECT_NE(error_of([&] {
              egret::read_input_events_csv(p.string(), 2);
            }).find("expected t,channel[,value]"),
            std::string::npos);
}

TEST(ConfigIo, TraceIsWrittenAtomically) {
  const auto p = config_scratch("trace.csv");
  fs::remove(p);
  egret::write_trace_csv(p.string(), {{1.5, 0, 2, 0.3}, {2.25, 1, 0, 0.4}});
  std::ifstream in(p);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(
      all, "time_ms,layer,unit,value\n1.5,0,2,0.29999999999999999\n2.25,1,0,0.40000000000000002\n");
  EXPECT_FALSE(fs::exists(p.string() + ".tmp-egret"));
  // An unwritable destination: error, and no file (partial or temporary) left behind.
  const std::string bad = (fs::temp_directory_path() / "egret_no_such_dir" / "t.csv").string();
  EXPECT_NE(error_of([&] { egret::write_trace_csv(bad, {}); }).find("cannot create"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(bad));
}

// A time constant, window, dt or threshold far below any physical scale makes the event rate
// unbounded (the run never finishes): refused when the configuration is read, naming the key,
// the value and the minimum. The minimums themselves are accepted.
TEST(ConfigIo, UnphysicalTimeScalesAndThresholdsAreRefusedNamingTheKey) {
  const std::string hang =
      std::string(EGRET_SOURCE_DIR) +
      "/tests/fuzz/corpus/regressions/network_config/cfg_tau_m_1e-12_hang.json";
  const std::string e = error_of([&] { egret::load_network_config(hang); });
  EXPECT_EQ(e,
            hang + ": layers[0].tau_m: 1e-12 is outside [0.001, inf) (state time constant [ms])");
  auto err = [](const std::string& layer) {
    return error_of([&] {
      egret::parse_network_config(R"({"input_channels": 2, "layers": [)" + layer + "]}",
                                  "net.json");
    });
  };
  const std::string c = R"({"type": "continuous_egru", "units": 2, )";
  const std::string d = R"({"type": "discrete_egru", "units": 2, )";
  EXPECT_EQ(err(c + R"("tau_o": 1e-12})"),
            "net.json: layers[0].tau_o: 1e-12 is outside [0.001, inf) (output-trace time constant "
            "[ms])");
  EXPECT_EQ(err(c + R"("window_input": 1e-4})"),
            "net.json: layers[0].window_input: 0.0001 is outside [0.001, 1e+12] or inf (how long "
            "an input contribution is held [ms])");
  EXPECT_NE(err(c + R"("window_recurrent": 0})").find("layers[0].window_recurrent: 0 is outside"),
            std::string::npos);
  EXPECT_EQ(err(d + R"("dt": 0})"),
            "net.json: layers[0].dt: 0 is outside [0.001, inf) (tick interval [ms]; ticks at k dt, "
            "k = 1, 2, ...)");
  EXPECT_EQ(err(c + R"("threshold": 0})"),
            "net.json: layers[0].threshold: 0 is outside [1e-06, 1e+06] (initial threshold theta "
            "of every unit)");
  // A threshold given per unit is checked when the network is built, in the same words, naming
  // the file, the layer and the entry.
  const auto per_unit = egret::parse_network_config(
      R"({"input_channels": 2, "layers": [)" + c + R"("params": {"theta": [0.3, 1e-9]}}]})",
      "net.json");
  EXPECT_EQ(
      error_of([&] { egret::build_network<double>(per_unit); }),
      "net.json: layer 0 (continuous_egru): continuous_egru layer: theta[1]: 1e-09 is outside "
      "[1e-06, inf) (a threshold)");
  // Exactly the minimums: accepted.
  const auto at_floor = egret::parse_network_config(
      R"({"input_channels": 2, "layers": [)" + c +
          R"("tau_m": 0.001, "tau_o": 0.001, "window_input": 0.001, "window_recurrent": 0.001,
             "threshold": 1e-6}, )" +
          d + R"("dt": 0.001, "tau_o": 0.001, "threshold": 1e-6}]})",
      "net.json");
  const auto net = egret::build_network<double>(at_floor);
  EXPECT_EQ(net.size(), 2);
}

// A network of 4 identical units that fire together, periodically, without input (zero
// weights): u = sigmoid(0) = 1/2, z = tanh(3), so one crossing every
// (tau_m / u) ln(z / (z - theta)) = 0.718 ms (docs/model.md), about 1,390 in 1,000 ms.
std::string busy_network(const std::string& simulation) {
  return R"({"input_channels": 1, "layers": [{"type": "continuous_egru", "units": 4, "tau_m": 1,
             "threshold": 0.3, "init": {"weight_scale": 0, "bias_z": 3, "bias_spread": 0}}],
             "simulation": )" +
         simulation + "}";
}

TEST(ConfigIo, EventBudgetStopsTheRunAndLeavesNoTrace) {
  const auto cfg = egret::parse_network_config(
      busy_network(R"({"end_time": 1000, "max_events": 200})"), "busy.json");
  EXPECT_EQ(cfg.max_events, 200u);
  const egret::InputStream<double> none({}, 1);
  {  // Without the configured budget (the default), the run finishes with far more events.
    auto net = egret::build_network<double>(
        egret::parse_network_config(busy_network(R"({"end_time": 1000})"), "busy.json"));
    auto options = egret::sim_options<double>(cfg);
    options.max_events = egret::kDefaultEventBudget;
    const auto result = egret::simulate(net, none, options);
    const double z = std::tanh(3.0), interval = 2 * std::log(z / (z - 0.3));
    EXPECT_NEAR(static_cast<double>(result.events_processed), 1000 / interval, 1.0);
    EXPECT_EQ(result.layers[0].events, 4 * result.events_processed);
  }
  const fs::path dir = config_scratch("budget");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string trace = (dir / "trace.h5").string();
  auto net = egret::build_network<double>(cfg);
  std::string message;
  try {  // as `egret simulate --trace` runs it: the trace streamed while the run goes on
    egret::TraceFileWriter writer(trace, egret::trace_layers(net));
    writer.begin_sample(-1);
    auto options = egret::sim_options<double>(cfg);
    options.sink = &writer;
    options.record_trace = false;
    const auto result = egret::simulate(net, none, options);
    writer.end_sample(result);
    writer.finish();
    ADD_FAILURE() << "the run finished within a budget of 200 events";
  } catch (const egret::EventBudgetExceeded& e) {
    message = e.what();
  }
  for (const char* fragment : {"event budget exceeded: 200 events processed", "end_time = 1000",
                               "\"max_events\"", "--max-events"})
    EXPECT_NE(message.find(fragment), std::string::npos) << message << " lacks " << fragment;
  EXPECT_TRUE(fs::is_empty(dir)) << "a partial trace or temporary file was left behind";
  // A budget of 0 is not a budget.
  EXPECT_NE(error_of([] {
              egret::parse_network_config(busy_network(R"({"max_events": 0})"), "busy.json");
            }).find("simulation.max_events: expected an integer >= 1"),
            std::string::npos);
}

// "connectivity": each input channel and each unit keeps a fixed share of receivers, the same
// in the three gates (the dense initialisation's weights where kept); the layer is then sparse.
// A share of 0 is refused, naming the layer.
TEST(ConfigIo, ConnectivityMakesASparseLayerWithAFixedFanOut) {
  const auto cfg = egret::parse_network_config(
      R"({"input_channels": 7, "seed": 4, "layers": [{"type": "continuous_egru", "units": 40,
          "connectivity": {"input": 0.25, "recurrent": 0.1}}]})",
      "net.json");
  const auto net = egret::build_network<double>(cfg);
  const auto& p = dynamic_cast<const egret::ContinuousEgruLayer<double>&>(net.layer(0)).params();
  EXPECT_TRUE(p.sparse);
  auto dense_cfg = egret::parse_network_config(
      R"({"input_channels": 7, "seed": 4, "layers": [{"type": "continuous_egru", "units": 40}]})",
      "net.json");
  const auto dense = egret::build_network<double>(dense_cfg);
  const auto& q = dynamic_cast<const egret::ContinuousEgruLayer<double>&>(dense.layer(0)).params();
  EXPECT_FALSE(q.sparse);
  auto fan_out = [](const egret::Matrix<double>& a, const egret::Matrix<double>& b,
                    const egret::Matrix<double>& c, egret::Index k) {
    egret::Index n = 0;
    for (egret::Index m = 0; m < a.rows(); ++m) {
      const bool any = a(m, k) != 0 || b(m, k) != 0 || c(m, k) != 0;
      EXPECT_EQ(any, a(m, k) != 0 && b(m, k) != 0 && c(m, k) != 0) << "gates share connections";
      n += any;
    }
    return n;
  };
  for (egret::Index k = 0; k < 7; ++k) EXPECT_EQ(fan_out(p.U_u, p.U_r, p.U_z, k), 10) << k;
  // 4 receivers per unit, never itself (without self-recurrence, the default).
  for (egret::Index k = 0; k < 40; ++k) EXPECT_EQ(fan_out(p.V_u, p.V_r, p.V_z, k), 4) << k;
  EXPECT_EQ(p.V_u.diagonal().cwiseAbs().sum(), 0.0);
  for (egret::Index k = 0; k < 40; ++k)
    for (egret::Index m = 0; m < 40; ++m)
      if (p.V_u(m, k) != 0) {
        EXPECT_EQ(p.V_u(m, k), q.V_u(m, k));
      }
  const auto fnet = egret::build_network<float>(cfg);  // float: the same connections
  const auto& pf = dynamic_cast<const egret::ContinuousEgruLayer<float>&>(fnet.layer(0)).params();
  EXPECT_EQ((pf.V_z.array() != 0).count(), (p.V_z.array() != 0).count());
  EXPECT_EQ((pf.V_z.array() != 0).cast<int>().matrix(), (p.V_z.array() != 0).cast<int>().matrix());

  EXPECT_EQ(error_of([] {
              egret::parse_network_config(
                  R"({"input_channels": 2, "layers": [{"type": "continuous_egru", "units": 3,
                      "connectivity": {"recurrent": 0}}]})",
                  "net.json");
            }),
            "net.json: layers[0].connectivity.recurrent: 0 is outside (0, 1] (share of the units "
            "each unit connects to (the three gates share the connections))");
}

// "self_recurrence": a yes/no key, false by default (the paper's Eq. S11): the diagonal of V is
// then 0 and the other weights are those of the same seed with it; true keeps the diagonal.
TEST(ConfigIo, SelfRecurrenceIsABooleanKeyFalseByDefault) {
  auto layer_params = [](const std::string& extra) {
    const auto cfg = egret::parse_network_config(
        R"({"input_channels": 3, "seed": 4, "layers": [{"type": "continuous_egru", "units": 5)" +
            extra + "}]}",
        "net.json");
    const auto net = egret::build_network<double>(cfg);
    return dynamic_cast<const egret::ContinuousEgruLayer<double>&>(net.layer(0)).params();
  };
  const auto by_default = layer_params("");
  const auto with = layer_params(R"(, "self_recurrence": true)");
  const auto without = layer_params(R"(, "self_recurrence": false)");
  EXPECT_FALSE(by_default.self_recurrence);
  EXPECT_TRUE(with.self_recurrence);
  EXPECT_EQ(by_default.V_z, without.V_z);
  EXPECT_EQ(by_default.V_u.diagonal().cwiseAbs().sum(), 0.0);
  EXPECT_GT(with.V_u.diagonal().cwiseAbs().sum(), 0.0);
  egret::Matrix<double> off_diagonal = with.V_r;
  off_diagonal.diagonal().setZero();
  EXPECT_EQ(off_diagonal, by_default.V_r);
  EXPECT_NE(error_of([&] {
              layer_params(R"(, "self_recurrence": 1)");
            }).find("net.json: layers[0].self_recurrence: expected true or false"),
            std::string::npos)
      << error_of([&] { layer_params(R"(, "self_recurrence": 1)"); });
}

// A configuration saved before a key existed gets the key's legacy value where it does not set
// the key (checkpoint format 2: continuous EGRUs then had self-recurrence).
TEST(ConfigIo, LegacySettingsFillOnlyWhatALayerLeavesOut) {
  const std::string old = R"({"input_channels": 3, "layers": [
      {"type": "continuous_egru", "units": 4},
      {"type": "continuous_egru", "units": 4, "self_recurrence": false},
      {"type": "discrete_egru", "units": 2}]})";
  const auto cfg =
      egret::parse_network_config(egret::with_legacy_settings(old, "old.json"), "old.json");
  const auto net = egret::build_network<double>(cfg);
  using L = egret::ContinuousEgruLayer<double>;
  EXPECT_TRUE(dynamic_cast<const L&>(net.layer(0)).params().self_recurrence);
  EXPECT_FALSE(dynamic_cast<const L&>(net.layer(1)).params().self_recurrence);
  EXPECT_EQ(net.layer(2).type_name(), "discrete_egru");
}

// "cross_entropy", the old name of "softmax_cross_entropy" (issue 38), is read as the new one for
// one release, with a warning on stderr naming the file, the key and the new name.
TEST(ConfigIo, RenamedLossIsReadAsItsNewNameWithAWarning) {
  const std::string text = R"({
    "input_channels": 3, "layers": [{"type": "continuous_egru", "units": 4}],
    "readout_classes": 2, "task": {"name": "delay_copy", "bits": 2},
    "training": {"loss": "LOSS"}})";
  auto with_loss = [&](const std::string& loss) {
    return std::string(text).replace(text.find("LOSS"), 4, loss);
  };
  ::testing::internal::CaptureStderr();
  const auto old_name = egret::parse_train_config(with_loss("cross_entropy"), "old.json");
  const std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(old_name.training.loss, egret::LossKind::kSoftmaxCrossEntropy);
  EXPECT_EQ(warning,
            "egret: warning: old.json: training.loss: the loss 'cross_entropy' is deprecated; use "
            "'softmax_cross_entropy' (the old name is accepted until the next release)\n");

  ::testing::internal::CaptureStderr();
  const auto new_name = egret::parse_train_config(with_loss("softmax_cross_entropy"), "new.json");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(new_name.training.loss, egret::LossKind::kSoftmaxCrossEntropy);
  EXPECT_EQ(error_of([&] { egret::parse_train_config(with_loss("hinge"), "bad.json"); }),
            "bad.json: training.loss: unknown loss 'hinge' (known: softmax_cross_entropy, "
            "binary_cross_entropy, mean_squared_error)");
}

// The file "net.json" with one layer of `type` whose key `key` ("a.b" nests) is `value`.
std::string network_with_key(const std::string& type, const std::string& key, double value) {
  nlohmann::json layer = {{"type", type}, {"units", 4}};
  nlohmann::json* obj = &layer;
  std::string name = key;
  for (auto dot = name.find('.'); dot != std::string::npos; dot = name.find('.')) {
    obj = &(*obj)[name.substr(0, dot)];
    name = name.substr(dot + 1);
  }
  (*obj)[name] = value;
  return R"({"input_channels": 3, "layers": [)" + layer.dump() + "]}";
}

// Every registered key of every family: its range is the whole check of one value. Below the
// minimum (or at an exclusive one) the file is refused, in the one wording, when it is read; at
// an inclusive minimum the layer builds, so the family's own validation never refuses a value
// the range admits. Only keys that another key also bounds may fail there, naming the file.
TEST(ConfigIo, EveryKeysRangeIsTheOneCheckOfItsValues) {
  int keys = 0;
  for (const egret::CellFamily& family : egret::cell_families()) {
    for (const egret::SettingKey& k : family.keys) {
      if (k.boolean || !k.choices.empty() || !std::isfinite(k.minimum)) continue;
      ++keys;
      const double below = k.minimum_exclusive ? k.minimum
                           : k.minimum == 0    ? -1
                           : k.minimum > 0     ? k.minimum / 2
                                               : k.minimum * 2;
      EXPECT_EQ(error_of([&] {
                  egret::parse_network_config(network_with_key(family.type, k.name, below),
                                              "net.json");
                }),
                egret::outside_range("net.json: layers[0]." + k.name, below, k.range(), k.doc))
          << family.type << "." << k.name;
      if (k.whole_number) {
        EXPECT_NE(error_of([&] {
                    egret::parse_network_config(
                        network_with_key(family.type, k.name, k.minimum + 0.5), "net.json");
                  }).find("net.json: layers[0]." + k.name + ": must be a whole number, got "),
                  std::string::npos)
            << family.type << "." << k.name;
      }
      if (k.minimum_exclusive) continue;
      const std::string at_minimum = error_of([&] {
        egret::build_network<double>(egret::parse_network_config(
            network_with_key(family.type, k.name, k.minimum), "net.json"));
      });
      const std::string expected =  // gate.period_max is also bounded by gate.period_min (2 ms)
          k.name == "gate.period_max" ? "net.json: layer 0 (" + family.type +
                                            "): gate.period_min must not exceed gate.period_max"
                                      : "";
      EXPECT_EQ(at_minimum, expected) << family.type << "." << k.name;
    }
  }
  EXPECT_GT(keys, 80);
}

// A gradient's shape (Layer::parameter_zeros, made from the shapes alone) is the parameters':
// the same names, specs and shapes in the same order, every entry zero, for every family, with
// a sparse continuous EGRU and the exp gate kernel too.
TEST(ConfigIo, EveryFamilysParameterZerosHaveItsParametersShapes) {
  std::vector<nlohmann::json> layers;
  for (const egret::CellFamily& family : egret::cell_families())
    layers.push_back({{"type", family.type}, {"units", 4}});
  layers.push_back({{"type", "continuous_egru"},
                    {"units", 4},
                    {"connectivity", {{"input", 0.5}, {"recurrent", 0.5}}}});
  layers.push_back({{"type", "continuous_egru"}, {"units", 4}, {"gate_kernel", "exp"}});
  for (const nlohmann::json& layer : layers) {
    const std::string text = R"({"input_channels": 3, "layers": [)" + layer.dump() + "]}";
    const auto net = egret::build_network<float>(egret::parse_network_config(text, "net.json"));
    const auto values = net.layer(0).parameters();
    const auto zeros = net.layer(0).parameter_zeros();
    ASSERT_EQ(zeros.size(), values.size()) << layer.dump();
    EXPECT_GT(values.size(), 0u) << layer.dump();
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto &v = values[i], &z = zeros[i];
      EXPECT_EQ(z.spec.name, v.spec.name) << layer.dump();
      EXPECT_EQ(z.spec.constraint, v.spec.constraint) << v.spec.name;
      EXPECT_EQ(z.spec.training, v.spec.training) << v.spec.name;
      EXPECT_EQ(z.spec.rank, v.spec.rank) << v.spec.name;
      EXPECT_EQ(z.spec.was_scalar, v.spec.was_scalar) << v.spec.name;
      EXPECT_EQ(z.value.rows(), v.value.rows()) << v.spec.name;
      EXPECT_EQ(z.value.cols(), v.value.cols()) << v.spec.name;
      EXPECT_TRUE((z.value.array() == 0.0f).all()) << v.spec.name;
    }
  }
}

// An event file with nothing in it says so, naming the file, in the CSV reader and in every
// camera format's detection; a CSV with only a header holds no events (egret simulate warns).
TEST(ConfigIo, EmptyEventFilesAreRefusedAsEmpty) {
  const auto csv = config_scratch("empty.csv");
  write(csv, "");
  EXPECT_EQ(error_of([&] { egret::read_input_events_csv(csv.string(), 2); }),
            csv.string() + ": empty file (0 bytes): no events");
  write(csv, "t_ms,channel,value\n# nothing yet\n");
  EXPECT_EQ(egret::read_input_events_csv(csv.string(), 2).size(), 0u);
  for (const char* name : {"empty.aedat4", "empty.aedat", "empty.raw", "empty.dat", "empty.bin",
                           "empty.npy", "empty.h5"}) {
    const auto path = config_scratch(name);
    write(path, "");
    EXPECT_EQ(error_of([&] { egret::read_camera_recording(path.string()); }),
              path.string() + ": byte 0: empty file (0 bytes): no events");
  }
}

}  // namespace
