// Hardware estimates (io/hardware/hardware_estimate.hpp) against a hand calculation from a
// profile's constants, on the LIF network whose counts tests/test_operation_counts.cpp works out by
// hand; strict profile files; the estimate added to the trace without leaving it half-written.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "io/config/network_config.hpp"
#include "io/hardware/hardware_estimate.hpp"
#include "io/hdf5/trace_file.hpp"
#include "sim/engine.hpp"
#include "tests/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using egret::testing::error_of;

// Round numbers: every energy in pJ and time in ns is easy to multiply by hand.
const char* kProfile = R"({
  "name": "hand", "description": "round numbers", "source": "this test",
  "synapses": "effective", "neurons": "updated",
  "costs": {
    "synaptic_ac": {"energy_pj": 2, "time_ns": 1, "source": "t"},
    "synaptic_mac": {"energy_pj": 5, "time_ns": 2, "source": "t"},
    "neuron_update_active": {"energy_pj": 10, "time_ns": 3, "source": "t"},
    "neuron_update_inactive": {"energy_pj": 1, "time_ns": 1, "source": "t"},
    "spike_generation": {"energy_pj": 7, "source": "t"},
    "spike_packet": {"energy_pj": 0.5, "source": "t"},
    "packet_in": {"time_ns": 5, "source": "t"},
    "hop_east_west": {"energy_pj": 3, "source": "t"},
    "weight_read_64bit": {"energy_pj": 0.25, "source": "t"},
    "state_access_64bit": {"energy_pj": 0.1, "source": "t"},
    "step_sync": {"time_ns_by_tiles": {"1": 100, "4": 400}, "source": "t"}
  },
  "mapping": {"neurons_per_core": 2, "cores_per_tile": 1, "mesh_width": 2, "mesh_height": 1,
              "source": "t"}
})";

// The LIF network of OperationCounts.LifHandCount: 3 ticks, 3 units, 2 events; 1 MAC, 3 ACs,
// 7 membrane updates; double precision (8-byte values), one state value per unit.
std::string lif_trace(const std::string& name) {
  const std::string path = (fs::temp_directory_path() / name).string();
  const auto cfg = egret::parse_network_config(
      R"({"input_channels": 2, "layers": [{"type": "lif", "units": 3, "dt": 1,
          "tau_mem": 1.4426950408889634,
          "params": {"W": [[1.5, 0], [0, 0], [0.5, 1]], "V": [[0, 0, 0], [0, 0, 0], [0.5, 0, 0]],
                     "b": 0, "theta": 1}}]})",
      "test");
  auto net = egret::build_network<double>(cfg);
  egret::Sample<double> s;
  s.input = egret::InputStream<double>({{0.5, 0, 1.0}, {0.5, 1, 2.0}}, 2);
  s.end_time = 3.0;
  egret::write_samples_trace(path, net, {&s}, {}, {});
  return path;
}

// SANA-FE's LookupTable::get: the largest tile count at or below the mapped tiles (2 here), the
// first entry when every count is above them.
TEST(HardwareEstimate, StepSyncTakesTheLargestTileCountAtOrBelowTheMappedTiles) {
  const std::string path = lif_trace("egret_estimate_sync.h5");
  const auto trace = egret::read_trace_file(path);
  const auto latency_with = [&](const std::string& table) {
    std::string text = kProfile;
    const std::string old_table = R"({"1": 100, "4": 400})";
    text.replace(text.find(old_table), old_table.size(), table);
    const auto e = egret::estimate_hardware(trace, path, egret::parse_hardware_profile(text, "t"));
    return e.latency_s.at(0) * 1e9 - 48.0 / 2;  // the synchronisation of 3 steps [ns]
  };
  EXPECT_NEAR(latency_with(R"({"1": 100, "2": 200, "4": 400})"), 3 * 200, 1e-9);
  EXPECT_NEAR(latency_with(R"({"1": 100, "3": 300})"), 3 * 100, 1e-9);
  EXPECT_NEAR(latency_with(R"({"3": 300, "8": 800})"), 3 * 300, 1e-9);
  fs::remove(path);
}

TEST(HardwareEstimate, EqualsAHandCalculationFromTheProfile) {
  const std::string path = lif_trace("egret_estimate_hand.h5");
  const auto profile = egret::parse_hardware_profile(kProfile, "hand profile");
  const auto e = egret::estimate_hardware(egret::read_trace_file(path), path, profile);
  // 3 units at 2 per core: 2 cores, one per tile, tiles side by side (x = 0, 1).
  ASSERT_EQ(e.cores, 2u);
  ASSERT_EQ(e.tiles, 2u);
  // Energy [pJ]: 3 ACs x 2 + 1 MAC x 5 + 7 active x 10 + (9 unit-ticks - 7) x 1
  //   + 2 events x 7 + 2 events x 2 destination cores x 0.5
  //   + 2 events x 1 E-W hop (a packet to the core at the other x from the mean source: 0.5 x 2)
  //     x 3 + 4 weights x 8 B / 8 B x 0.25 + 2 x 7 state values x 8 B / 8 B x 0.1
  const double pj = 6 + 5 + 70 + 2 + 14 + 2 + 6 + 1 + 1.4;
  ASSERT_EQ(e.energy_j.size(), 1u);
  EXPECT_NEAR(e.energy_j[0], pj * 1e-12, 1e-24);
  EXPECT_NEAR(e.mean_energy_j(), pj * 1e-12, 1e-24);
  // Latency [ns]: (3 x 1 + 1 x 2 + 7 x 3 + 2 x 1 + 2 events x 2 receiving cores x 5) / 2 cores
  // + 3 steps x 100 (2 tiles: the table's entry for the largest tile count at or below 2, as
  // SANA-FE looks it up).
  ASSERT_EQ(e.latency_s.size(), 1u);
  EXPECT_NEAR(e.latency_s[0], (48.0 / 2 + 3 * 100) * 1e-9, 1e-21);
  EXPECT_NEAR(e.layers[0].energy_j_by_operation.at("hop_east_west"), 6e-12, 1e-24);

  // Added to the trace, which stays readable, and replaced when estimated again.
  egret::add_estimate_to_trace(path, e);
  egret::add_estimate_to_trace(path, e);
  EXPECT_EQ(egret::read_trace_file(path).layers.size(), 1u);
  EXPECT_FALSE(fs::exists(path + ".tmp-egret-estimate"));
  egret::h5::Id f = egret::h5::open_file_read(path);
  EXPECT_TRUE(egret::h5::exists(f.get(), "egret/estimates/hand/layer0/energy_j"));
  fs::remove(path);
}

TEST(HardwareEstimate, DenseDevicesChargeEverySynapseAndNeuronEveryStep) {
  const std::string path = lif_trace("egret_estimate_dense.h5");
  const auto profile = egret::parse_hardware_profile(R"({
    "name": "dense", "description": "d", "source": "s", "synapses": "dense", "neurons": "all",
    "costs": {"synaptic_mac": {"energy_pj": 1, "source": "t"},
              "synaptic_ac": {"energy_pj": 100, "source": "t"},
              "neuron_update_active": {"energy_pj": 10, "source": "t"}}})",
                                                     "dense profile");
  const auto e = egret::estimate_hardware(egret::read_trace_file(path), path, profile);
  // Dense: 3 ticks x 3 (2 + 3) pairs at 1 pJ; every unit every tick: 9 x 10 pJ. No latency.
  EXPECT_NEAR(e.energy_j[0], (45.0 + 90.0) * 1e-12, 1e-24);
  EXPECT_TRUE(e.latency_s.empty());
  EXPECT_TRUE(std::isnan(e.mean_latency_s()));
  fs::remove(path);
}

TEST(HardwareEstimate, BuiltInProfilesLoadAndCiteEveryConstant) {
  const auto names = egret::builtin_profile_names();
  EXPECT_EQ(names.size(), 9u);
  for (const auto& n : names) {
    const auto p = egret::load_hardware_profile(n);
    EXPECT_EQ(p.name, n);
    for (const auto& [op, c] : p.costs) EXPECT_FALSE(c.source.empty()) << n << " " << op;
  }
  const auto loihi = egret::load_hardware_profile("loihi_davies2018");
  EXPECT_EQ(loihi.cost("synaptic_ac").energy_pj, 23.6);
  EXPECT_EQ(loihi.cost("neuron_update_active").energy_pj, 81.0);
  EXPECT_EQ(loihi.cost("neuron_update_inactive").energy_pj, 52.0);
  EXPECT_EQ(loihi.cost("spike_packet").energy_pj, 1.7);
  EXPECT_EQ(loihi.cost("hop_east_west").energy_pj, 3.0);
  EXPECT_EQ(loihi.cost("hop_north_south").energy_pj, 4.0);
  const auto cmos = egret::load_hardware_profile("cmos45_horowitz2014");
  EXPECT_EQ(cmos.cost("synaptic_mac").energy_pj, 4.6);
  EXPECT_EQ(cmos.cost("synaptic_ac").energy_pj, 0.9);
  EXPECT_EQ(cmos.cost("weight_read_64bit").energy_pj, 10.0);
}

TEST(HardwareEstimate, BadProfilesAreClearErrors) {
  const auto bad = [](const std::string& costs) {
    return error_of([&] {
      egret::parse_hardware_profile(R"({"name": "x", "description": "d", "source": "s",
          "synapses": "effective", "neurons": "updated", "costs": )" +
                                        costs + "}",
                                    "my.json");
    });
  };
  EXPECT_NE(bad(R"({"synaptic_ac": {"energy_pj": 1}})").find("source"), std::string::npos);
  EXPECT_NE(bad(R"({"synaptic_ac": {"energy_pj": -1, "source": "s"}})").find(">= 0"),
            std::string::npos);
  EXPECT_NE(bad(R"({"synaptic_op": {"energy_pj": 1, "source": "s"}})").find("unknown operation"),
            std::string::npos);
  EXPECT_NE(bad(R"({"synaptic_ac": {"energy_pj": 1e999, "source": "s"}})").find("my.json"),
            std::string::npos);
  EXPECT_NE(
      bad(R"({"step_sync": {"time_ns_by_tiles": {"0": 1}, "source": "s"}})").find("tile count"),
      std::string::npos);
  EXPECT_NE(error_of([] {
              egret::load_hardware_profile("no_such_profile");
            }).find("neither a built-in profile"),
            std::string::npos);
  // A network that does not fit the mesh is refused, naming both sizes.
  const std::string path = lif_trace("egret_estimate_fit.h5");
  auto tiny = egret::parse_hardware_profile(kProfile, "hand profile");
  tiny.neurons_per_core = 1;  // 3 cores needed, 2 available
  EXPECT_NE(error_of([&] {
              egret::estimate_hardware(egret::read_trace_file(path), path, tiny);
            }).find("needs 3 cores but profile hand has 2"),
            std::string::npos);
  fs::remove(path);
}

}  // namespace
