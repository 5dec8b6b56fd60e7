// HDF5 traces and checkpoints: simulate -> write -> read gives identical events; batches keep
// their sample boundaries on one sorted timeline; missing, foreign, corrupt and wrong-version
// files are errors that name the problem; an unfinished writer leaves no file behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "events/synthetic_input.hpp"
#include "io/hdf5/checkpoint.hpp"
#include "io/hdf5/trace_file.hpp"
#include "models/continuous_egru/continuous_egru_layer.hpp"
#include "models/discrete_egru/discrete_egru_layer.hpp"
#include "sim/engine.hpp"
#include "tests/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using P = egret::ContinuousEgruParams<double>;

std::string trace_scratch(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "egret_trace_tests";
  fs::create_directories(dir);
  return (dir / name).string();
}

egret::Network<double> network() {
  P::RandomInit init;
  init.weight_scale = 1.5;
  init.bias_z = 0.8;
  P p = P::random(10, 4, 3, init);
  p.window_input = 3;
  p.window_recurrent = 2;
  egret::DiscreteEgruParams<double>::RandomInit dinit;
  dinit.bias_z = 0.6;
  auto d = egret::DiscreteEgruParams<double>::random(5, 10, 4, dinit);
  egret::Network<double> net;
  net.add_layer(std::make_unique<egret::ContinuousEgruLayer<double>>(std::make_shared<P>(p)));
  net.add_layer(std::make_unique<egret::DiscreteEgruLayer<double>>(
      std::make_shared<egret::DiscreteEgruParams<double>>(d)));
  return net;
}

using egret::testing::error_of;

TEST(TraceFile, RoundTripGivesIdenticalEvents) {
  auto net = network();
  const auto input = egret::poisson_input<double>(4, 100.0, 200.0, 9);
  egret::SimOptions<double> opt;
  opt.end_time = 200;
  opt.snapshot_times = {50, 150};
  const std::string path = trace_scratch("roundtrip.h5");
  egret::TraceFileWriter writer(path, egret::trace_layers(net), /*buffer_events=*/37);
  writer.set_provenance({"{\"a\": 1}", 42, "egret test"});
  opt.sink = &writer;
  const auto r = egret::simulate(net, input, opt);  // also keeps the trace in memory
  writer.end_sample(r);
  writer.write_snapshots(r.snapshots);
  writer.finish();
  ASSERT_GT(r.trace.size(), 200u);

  const egret::TraceData d = egret::read_trace_file(path);
  ASSERT_EQ(d.layers.size(), 2u);
  std::vector<egret::TraceEvent<double>> back;
  for (std::size_t l = 0; l < 2; ++l) {
    const auto& L = d.layers[l];
    EXPECT_EQ(L.sorting, "by_time");
    for (std::size_t i = 0; i < L.timestamps.size(); ++i)
      back.push_back({L.timestamps[i], static_cast<egret::Index>(l),
                      static_cast<egret::Index>(L.node_ids[i]), L.values[i]});
    EXPECT_EQ(L.metrics.at("events"), static_cast<double>(L.timestamps.size()));
    EXPECT_EQ(L.sample_offsets, (std::vector<std::uint64_t>{0, L.timestamps.size()}));
  }
  // The file groups events by layer; compare per layer, in order, bit for bit.
  for (egret::Index l = 0; l < 2; ++l) {
    std::vector<egret::TraceEvent<double>> a, b;
    for (const auto& e : r.trace)
      if (e.layer == l) a.push_back(e);
    for (const auto& e : back)
      if (e.layer == l) b.push_back(e);
    EXPECT_EQ(a, b) << "layer " << l;
  }
  EXPECT_EQ(d.provenance.at("configuration"), "{\"a\": 1}");
  EXPECT_EQ(d.provenance.at("seed"), "42");
  EXPECT_EQ(d.provenance.at("command_line"), "egret test");
  EXPECT_EQ(d.snapshot_times, (std::vector<double>{50, 150}));
  // Clocked layer: active unit-ticks are its events. Continuous layer: the (unit, 1 ms bin) pairs
  // with an event, bins ((k - 1), k] ms, counted here from the events themselves.
  EXPECT_NEAR(d.layers[1].metrics.at("ActivationSparsity"), r.activity_sparsity(1), 1e-15);
  std::set<std::pair<egret::Index, long>> active;
  for (const auto& e : r.trace)
    if (e.layer == 0) active.insert({e.unit, std::max(1L, static_cast<long>(std::ceil(e.time)))});
  EXPECT_NEAR(d.layers[0].metrics.at("ActivationSparsity"),
              1.0 - static_cast<double>(active.size()) / (10.0 * 200.0), 1e-15);
  // The counts survive the file: per sample (one here) and as NeuroBench-named metrics.
  for (std::size_t l = 0; l < 2; ++l) {
    const auto& ops = r.layers[l].operations;
    EXPECT_EQ(d.layers[l].per_sample.at("synaptic_macs"),
              (std::vector<std::uint64_t>{ops.synaptic_macs}));
    EXPECT_EQ(d.layers[l].per_sample.at("membrane_updates"),
              (std::vector<std::uint64_t>{ops.membrane_updates}));
    EXPECT_EQ(d.layers[l].metrics.at("Effective_MACs"),
              static_cast<double>(ops.synaptic_macs + ops.gate_products));
    EXPECT_EQ(d.layers[l].metrics.at("Effective_ACs"), static_cast<double>(ops.synaptic_acs));
    EXPECT_GT(ops.synaptic_macs, 0u);
  }
  // Dense: 3 N (D + N) per step, 200 steps (1 ms for the continuous layer, 1 ms ticks for the
  // discrete one), plus the discrete EGRU's 3 N gate products.
  EXPECT_EQ(d.layers[0].metrics.at("Dense"), 3.0 * 10 * (4 + 10) * 200);
  EXPECT_EQ(d.layers[1].metrics.at("Dense"), (3.0 * 5 * (10 + 5) + 3 * 5) * 200);
  EXPECT_EQ(d.format_version, 2);
  EXPECT_FALSE(fs::exists(path + ".tmp-egret"));
}

TEST(TraceFile, BatchesAreLaidEndToEndWithTheirLabels) {
  auto net = network();
  const std::string path = trace_scratch("batch.h5");
  egret::TraceFileWriter writer(path, egret::trace_layers(net), 16);
  std::vector<std::size_t> counts;
  for (int s = 0; s < 3; ++s) {
    writer.begin_sample(10 + s);
    egret::SimOptions<double> opt;
    opt.end_time = 50 + 10 * s;
    opt.sink = &writer;
    const auto r =
        egret::simulate(net, egret::poisson_input<double>(4, 80.0, opt.end_time, 20 + s), opt);
    writer.end_sample(r);
    std::size_t n0 = 0;
    for (const auto& e : r.trace) n0 += e.layer == 0;
    counts.push_back(n0);
  }
  writer.finish();
  const auto d = egret::read_trace_file(path);
  EXPECT_EQ(d.sample_label, (std::vector<std::int64_t>{10, 11, 12}));
  EXPECT_EQ(d.sample_start, (std::vector<double>{0, 50, 110}));
  EXPECT_EQ(d.sample_duration, (std::vector<double>{50, 60, 70}));
  const auto& off = d.layers[0].sample_offsets;
  ASSERT_EQ(off.size(), 4u);
  for (std::size_t s = 0; s < 3; ++s) {
    EXPECT_EQ(off[s + 1] - off[s], counts[s]);
    for (std::uint64_t i = off[s]; i < off[s + 1]; ++i) {
      EXPECT_GE(d.layers[0].timestamps[i], d.sample_start[s]);
      EXPECT_LE(d.layers[0].timestamps[i], d.sample_start[s] + d.sample_duration[s]);
    }
  }
  EXPECT_TRUE(std::is_sorted(d.layers[0].timestamps.begin(), d.layers[0].timestamps.end()));
}

TEST(TraceFile, UnfinishedWriterLeavesNoFile) {
  auto net = network();
  const std::string path = trace_scratch("unfinished.h5");
  fs::remove(path);
  {
    egret::TraceFileWriter writer(path, egret::trace_layers(net));
    writer.on_event({1.0, 0, 2, 0.3});
    EXPECT_TRUE(fs::exists(path + ".tmp-egret"));
  }  // e.g. an exception unwound the run
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp-egret"));
}

TEST(TraceFile, BadFilesAreNamedErrors) {
  EXPECT_NE(error_of([] {
              egret::read_trace_file(trace_scratch("does_not_exist.h5"));
            }).find("cannot open (missing or unreadable)"),
            std::string::npos);
  const std::string text = trace_scratch("text.h5");
  std::ofstream(text) << "this is not HDF5\n";
  EXPECT_NE(error_of([&] { egret::read_trace_file(text); }).find("not an HDF5 file"),
            std::string::npos);
  // An HDF5 file that is not an egret trace: a checkpoint.
  const std::string ckpt = trace_scratch("ckpt.h5");
  egret::write_checkpoint(ckpt, egret::Checkpoint{});
  EXPECT_NE(error_of([&] { egret::read_trace_file(ckpt); }).find("not an egret trace"),
            std::string::npos);
  EXPECT_NE(error_of([&] { egret::read_checkpoint(text); }).find("not an HDF5 file"),
            std::string::npos);
  // A truncated trace.
  auto net = network();
  const std::string good = trace_scratch("good.h5");
  {
    egret::TraceFileWriter w(good, egret::trace_layers(net));
    egret::SimOptions<double> opt;
    opt.end_time = 100;
    opt.sink = &w;
    w.end_sample(egret::simulate(net, egret::poisson_input<double>(4, 80.0, 100, 1), opt));
    w.finish();
  }
  const auto size = fs::file_size(good);
  const std::string cut = trace_scratch("truncated.h5");
  fs::copy_file(good, cut, fs::copy_options::overwrite_existing);
  fs::resize_file(cut, size / 2);
  EXPECT_FALSE(error_of([&] { egret::read_trace_file(cut); }).empty());
  // Wrong version and a missing dataset, made with the HDF5 API directly.
  const std::string edited = trace_scratch("edited.h5");
  fs::copy_file(good, edited, fs::copy_options::overwrite_existing);
  {
    egret::h5::Id f(H5Fopen(edited.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    H5Adelete(f.get(), "egret_format_version");
    egret::h5::write_attribute(f.get(), "egret_format_version", std::int64_t{99});
  }
  EXPECT_NE(
      error_of([&] { egret::read_trace_file(edited); }).find("unsupported egret trace version 99"),
      std::string::npos);
  fs::copy_file(good, edited, fs::copy_options::overwrite_existing);
  {
    egret::h5::Id f(H5Fopen(edited.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    H5Ldelete(f.get(), "spikes/layer1/node_ids", H5P_DEFAULT);
  }
  EXPECT_NE(error_of([&] { egret::read_trace_file(edited); }).find("missing dataset 'node_ids'"),
            std::string::npos);
}

}  // namespace
