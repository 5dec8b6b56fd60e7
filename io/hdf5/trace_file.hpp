// Event traces in HDF5, SONATA-compatible (docs/formats.md).
//
//   /                       attrs magic = 0x0A7A (uint32), version = [0, 1] (2 x uint32),
//                           egret_format = "egret-trace", egret_format_version = 1
//   /spikes/<layer>/timestamps   float64 [events], attr units = "ms"
//   /spikes/<layer>/node_ids     uint64  [events]
//   /spikes/<layer>              attr sorting: enum over uint8 {none=0, by_id=1, by_time=2}
//   /egret/events/<layer>/values float64 [events]   graded event values (y = theta, or c)
//   /egret/samples/start_time, duration (float64 [S]), label (int64 [S]),
//                 offsets/<layer> (uint64 [S+1]: sample s is events offsets[s]..offsets[s+1])
//   /egret/metrics/<layer>       attrs: type, units, inputs, clocked, events, inputs_received,
//                                releases, internal_steps, dense_operations_per_step,
//                                state_words_per_unit, scalar_bytes, and the per-sample metrics
//                                of sim/layer_metrics.hpp (Effective_MACs, Effective_ACs, Dense,
//                                ActivationSparsity, MembraneUpdates, ..., dense_step_ms)
//   /egret/metrics/<layer>/per_sample/<counter>   uint64 [S]: the exact counts of each sample
//                                (kPerSampleCounters)
//   /egret/estimates/<profile>   written by `egret estimate` (io/hardware/hardware_profile.hpp)
//   /egret/snapshots/time        float64 [K];  /egret/snapshots/<layer>/<variable> [K, N]
//   /egret/provenance            attrs: egret_version, git_revision, configuration, seed,
//                                command_line, utc_time
//
// Samples are laid end to end on the file's timeline (sample s starts where s - 1 ended), so the
// timestamps of every layer are sorted by time across the whole file. Events are buffered per
// layer and appended in chunks (shuffle + deflate) while the simulation runs: memory stays
// bounded whatever the number of events. The file is written under a temporary name and renamed
// by finish(); a writer destroyed before finish() removes its temporary file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/hdf5/hdf5.hpp"
#include "sim/layer_metrics.hpp"
#include "sim/network.hpp"
#include "sim/recorder.hpp"
#include "train/sample.hpp"

namespace egret {

inline constexpr std::uint32_t kSonataMagic = 0x0A7A;
// Version 2: NeuroBench-named metrics and per-sample counts. Version 1 (estimated effective_macs
// and dense_macs, no operation counts) is still read: events, samples, its rates.
inline constexpr std::int64_t kTraceFormatVersion = 2;

// The exact counts stored per sample and layer, in /egret/metrics/<layer>/per_sample.
inline const std::vector<std::string> kPerSampleCounters = {
    "events",           "synaptic_macs",     "synaptic_acs", "gate_products",
    "membrane_updates", "active_unit_steps", "steps"};
inline std::vector<std::uint64_t> per_sample_counters(const LayerCounts& c) {
  return {c.events,
          c.operations.synaptic_macs,
          c.operations.synaptic_acs,
          c.operations.gate_products,
          c.operations.membrane_updates,
          c.active_unit_steps,
          c.steps};
}

struct Provenance {
  std::string configuration;  // the configuration text (JSON) that produced the run
  std::int64_t seed = 0;
  std::string command_line;
};

struct TraceLayerInfo {
  std::string name;  // "layer0", ...
  std::string type;  // the cell family (Layer::type_name)
  Index units = 0;
  Index inputs = 0;
  std::uint64_t scalar_bytes = 8;  // the run's precision: weights and state are read at this size
};

template <class Scalar>  // double and float
std::vector<TraceLayerInfo> trace_layers(const Network<Scalar>& net);

class TraceFileWriter final : public TraceSink<double> {
 public:
  TraceFileWriter(const std::string& path, std::vector<TraceLayerInfo> layers,
                  std::size_t buffer_events = 65536);
  ~TraceFileWriter() override;
  TraceFileWriter(const TraceFileWriter&) = delete;
  TraceFileWriter& operator=(const TraceFileWriter&) = delete;

  // Events between begin_sample and end_sample belong to one sample; their times are relative
  // to the sample's start.
  void begin_sample(std::int64_t label = -1);
  void on_event(const TraceEvent<double>& e) override;
  void end_sample(const SimResult<double>& result);

  // Snapshots of one sample (times relative to the first sample's start).
  void write_snapshots(const std::vector<SnapshotRecord<double>>& snapshots);
  void set_provenance(const Provenance& p) { provenance_ = p; }
  // Writes the tables, closes the file and renames it into place.
  void finish();

  std::uint64_t events_written() const;

 private:
  struct LayerStream;
  void flush(LayerStream& s);

  std::string path_;
  std::vector<TraceLayerInfo> layers_;
  std::size_t buffer_events_;
  h5::OutputFile file_;
  std::vector<std::unique_ptr<LayerStream>> streams_;
  double sample_start_ = 0;
  bool in_sample_ = false;
  std::vector<double> starts_, durations_;
  std::vector<std::int64_t> labels_;
  std::vector<LayerCounts> totals_;
  std::vector<std::vector<std::vector<std::uint64_t>>> per_sample_;  // [layer][counter][sample]
  double total_time_ = 0;
  Provenance provenance_;
  bool finished_ = false;
};

// Everything a trace file holds, read back (checked: an egret trace of a supported version with
// every required dataset, validated first in a child process: io/hdf5/hdf5.hpp).
struct TraceData {
  std::int64_t format_version = kTraceFormatVersion;  // 1: no operation counts (read-only)
  struct Layer {
    std::string name;
    std::string sorting;  // none, by_id, by_time
    std::vector<double> timestamps;
    std::vector<std::uint64_t> node_ids;
    std::vector<double> values;
    std::vector<std::uint64_t> sample_offsets;
    std::map<std::string, double> metrics;                         // the attributes
    std::map<std::string, std::vector<std::uint64_t>> per_sample;  // kPerSampleCounters
    std::string type;
  };
  std::vector<Layer> layers;
  std::vector<double> sample_start, sample_duration;
  std::vector<std::int64_t> sample_label;
  std::map<std::string, std::string> provenance;
  std::vector<double> snapshot_times;
};

TraceData read_trace_file(const std::string& path);

// What write_samples_trace ran: per-layer counts summed over the samples, the simulated time
// [ms] and the events written.
struct SamplesTraceSummary {
  std::vector<LayerCounts> layers;
  double simulated_ms = 0;
  std::uint64_t events = 0;
};

// Simulates `samples` one after another, each from the network's initial state, into an HDF5
// trace at `path` (sample i labelled labels[i], or -1 if `labels` is empty). `dense_step` [ms]:
// the step of continuous layers' dense comparison (SimOptions::dense_step), e.g. the input bin.
template <class Scalar>  // double and float; the file holds float64 either way
SamplesTraceSummary write_samples_trace(const std::string& path, const Network<Scalar>& net,
                                        const std::vector<const Sample<Scalar>*>& samples,
                                        const std::vector<std::int64_t>& labels,
                                        const Provenance& provenance, double dense_step = 1);

}  // namespace egret
