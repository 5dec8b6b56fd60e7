#include "io/hdf5/trace_file.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <stdexcept>

#include "sim/precision_cast.hpp"

#ifndef EGRET_VERSION
#define EGRET_VERSION "unknown"
#endif
#ifndef EGRET_GIT_REVISION
#define EGRET_GIT_REVISION "unknown"
#endif

namespace egret {
namespace {

enum SortingValue : std::uint8_t { kNone = 0, kById = 1, kByTime = 2 };

h5::Id sorting_enum_type() {
  h5::Id type(H5Tenum_create(H5T_NATIVE_UINT8));
  if (!type.valid()) throw std::runtime_error("cannot create the sorting enum type");
  const std::uint8_t none = kNone, by_id = kById, by_time = kByTime;
  H5Tenum_insert(type.get(), "none", &none);
  H5Tenum_insert(type.get(), "by_id", &by_id);
  H5Tenum_insert(type.get(), "by_time", &by_time);
  return type;
}

void write_sorting(hid_t group, std::uint8_t value) {
  h5::Id type = sorting_enum_type();
  h5::Id space(H5Screate(H5S_SCALAR));
  h5::Id attr(H5Acreate2(group, "sorting", type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attr.valid() || H5Awrite(attr.get(), type.get(), &value) < 0)
    throw std::runtime_error("cannot write the sorting attribute");
}

std::string read_sorting(hid_t group, const std::string& where) {
  h5::QuietErrors quiet;
  if (H5Aexists(group, "sorting") <= 0)
    throw std::runtime_error(where + ": missing attribute 'sorting'");
  h5::Id attr(H5Aopen(group, "sorting", H5P_DEFAULT));
  h5::Id space(H5Aget_space(attr.get()));
  h5::Id type(H5Aget_type(attr.get()));
  if (!attr.valid() || !space.valid() || H5Sget_simple_extent_npoints(space.get()) != 1)
    throw std::runtime_error(where + ": attribute 'sorting' is not a single value");
  if (H5Tget_class(type.get()) != H5T_ENUM || H5Tget_size(type.get()) != 1)
    throw std::runtime_error(where + ": attribute 'sorting' is not an enum over uint8");
  std::uint8_t v = 0;
  if (H5Aread(attr.get(), type.get(), &v) < 0)
    throw std::runtime_error(where + ": cannot read attribute 'sorting'");
  char name[32] = {0};
  if (H5Tenum_nameof(type.get(), &v, name, sizeof name) < 0)
    throw std::runtime_error(where + ": attribute 'sorting' has an unnamed value");
  return name;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

template <class Scalar>
std::vector<TraceLayerInfo> trace_layers(const Network<Scalar>& net) {
  std::vector<TraceLayerInfo> out;
  for (Index l = 0; l < net.size(); ++l)
    out.push_back({"layer" + std::to_string(l), net.layer(l).type_name(), net.layer(l).units(),
                   net.layer(l).inputs(), sizeof(Scalar)});
  return out;
}
template std::vector<TraceLayerInfo> trace_layers(const Network<double>&);
template std::vector<TraceLayerInfo> trace_layers(const Network<float>&);

struct TraceFileWriter::LayerStream {
  h5::Id group, values_group;
  h5::AppendableDataset timestamps, node_ids, values;
  std::vector<double> t_buf, v_buf;
  std::vector<std::uint64_t> id_buf;
  std::vector<std::uint64_t> offsets{0};
  std::uint64_t written = 0;
};

TraceFileWriter::TraceFileWriter(const std::string& path, std::vector<TraceLayerInfo> layers,
                                 std::size_t buffer_events)
    : path_(path),
      layers_(std::move(layers)),
      buffer_events_(std::max<std::size_t>(1, buffer_events)),
      file_(layers_.empty()
                ? throw std::invalid_argument(path + ": a trace needs at least one layer")
                : path) {
  const hid_t f = file_.get();
  {  // SONATA: a scalar uint32
    h5::Id space(H5Screate(H5S_SCALAR));
    h5::Id attr(H5Acreate2(f, "magic", H5T_STD_U32LE, space.get(), H5P_DEFAULT, H5P_DEFAULT));
    const std::uint32_t magic = kSonataMagic;
    if (!attr.valid() || H5Awrite(attr.get(), H5T_NATIVE_UINT32, &magic) < 0)
      throw std::runtime_error(path + ": cannot write the magic attribute");
  }
  h5::write_attribute(f, "version", std::vector<std::uint32_t>{0, 1});
  h5::write_attribute(f, "egret_format", std::string("egret-trace"));
  h5::write_attribute(f, "egret_format_version", kTraceFormatVersion);
  h5::Id spikes = h5::create_group(f, "spikes");
  h5::Id egret = h5::create_group(f, "egret");
  h5::Id events = h5::create_group(egret.get(), "events");
  const std::size_t chunk = std::min<std::size_t>(buffer_events_, 1 << 20);
  for (const auto& info : layers_) {
    auto s = std::make_unique<LayerStream>();
    s->group = h5::create_group(spikes.get(), info.name);
    s->timestamps = h5::AppendableDataset(s->group.get(), "timestamps", H5T_NATIVE_DOUBLE, chunk);
    h5::write_attribute(s->timestamps.id(), "units", std::string("ms"));
    s->node_ids = h5::AppendableDataset(s->group.get(), "node_ids", H5T_NATIVE_UINT64, chunk);
    write_sorting(s->group.get(), kByTime);
    s->values_group = h5::create_group(events.get(), info.name);
    s->values = h5::AppendableDataset(s->values_group.get(), "values", H5T_NATIVE_DOUBLE, chunk);
    s->t_buf.reserve(buffer_events_);
    s->v_buf.reserve(buffer_events_);
    s->id_buf.reserve(buffer_events_);
    streams_.push_back(std::move(s));
  }
  totals_.resize(layers_.size());
  per_sample_.assign(layers_.size(),
                     std::vector<std::vector<std::uint64_t>>(kPerSampleCounters.size()));
}

// Uncommitted, file_ removes the temporary file (after the streams close their datasets).
TraceFileWriter::~TraceFileWriter() {
  streams_.clear();
}

void TraceFileWriter::begin_sample(std::int64_t label) {
  if (in_sample_) throw std::logic_error("trace writer: begin_sample inside a sample");
  in_sample_ = true;
  labels_.push_back(label);
  starts_.push_back(sample_start_);
}

void TraceFileWriter::on_event(const TraceEvent<double>& e) {
  if (e.layer < 0 || static_cast<std::size_t>(e.layer) >= streams_.size())
    throw std::invalid_argument(path_ + ": event of layer " + std::to_string(e.layer) +
                                " but the trace has " + std::to_string(streams_.size()) +
                                " layers");
  LayerStream& s = *streams_[static_cast<std::size_t>(e.layer)];
  s.t_buf.push_back(sample_start_ + e.time);
  s.id_buf.push_back(static_cast<std::uint64_t>(e.unit));
  s.v_buf.push_back(e.value);
  if (s.t_buf.size() >= buffer_events_) flush(s);
}

void TraceFileWriter::flush(LayerStream& s) {
  s.timestamps.append(s.t_buf.data(), s.t_buf.size());
  s.node_ids.append(s.id_buf.data(), s.id_buf.size());
  s.values.append(s.v_buf.data(), s.v_buf.size());
  s.written += s.t_buf.size();
  file_.check();  // a full disk stops the run here, not at the end
  s.t_buf.clear();
  s.id_buf.clear();
  s.v_buf.clear();
}

void TraceFileWriter::end_sample(const SimResult<double>& r) {
  if (!in_sample_) {  // a single run without begin_sample: one implicit sample
    begin_sample(-1);
  }
  in_sample_ = false;
  durations_.push_back(r.end_time);
  sample_start_ += r.end_time;
  total_time_ += r.end_time;
  for (std::size_t l = 0; l < streams_.size(); ++l) {
    LayerStream& s = *streams_[l];
    s.offsets.push_back(s.written + s.t_buf.size());
    if (l >= r.layers.size()) continue;
    totals_[l] += r.layers[l];
    const std::vector<std::uint64_t> counters = per_sample_counters(r.layers[l]);
    for (std::size_t k = 0; k < counters.size(); ++k) per_sample_[l][k].push_back(counters[k]);
  }
}

void TraceFileWriter::write_snapshots(const std::vector<SnapshotRecord<double>>& snapshots) {
  if (snapshots.empty()) return;
  const hid_t f = file_.get();
  h5::Id group = h5::exists(f, "egret/snapshots") ? h5::open_group(f, "egret/snapshots", path_)
                                                  : h5::create_group(f, "egret/snapshots");
  if (h5::exists(group.get(), "time"))
    throw std::logic_error(path_ + ": snapshots were already written");
  std::vector<double> times;
  for (const auto& s : snapshots) times.push_back(s.time);
  h5::write_vector(group.get(), "time", times);
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    h5::Id lg = h5::create_group(group.get(), layers_[l].name);
    for (const auto& [name, first] : snapshots.front().layers[l].variables) {
      std::vector<double> m;
      for (const auto& s : snapshots) {
        const auto& v = s.layers[l].at(name);
        m.insert(m.end(), v.begin(), v.end());
      }
      h5::write_matrix(lg.get(), name, m, snapshots.size(), first.size());
    }
  }
}

std::uint64_t TraceFileWriter::events_written() const {
  std::uint64_t n = 0;
  for (const auto& s : streams_) n += s->written + s->t_buf.size();
  return n;
}

void TraceFileWriter::finish() {
  if (finished_) return;
  if (in_sample_) throw std::logic_error(path_ + ": finish() inside a sample");
  for (auto& s : streams_) flush(*s);
  const hid_t f = file_.get();
  h5::Id samples = h5::create_group(f, "egret/samples");
  h5::write_vector(samples.get(), "start_time", starts_);
  h5::write_vector(samples.get(), "duration", durations_);
  h5::write_vector(samples.get(), "label", labels_);
  h5::Id offsets = h5::create_group(samples.get(), "offsets");
  h5::Id metrics = h5::create_group(f, "egret/metrics");
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    h5::write_vector(offsets.get(), layers_[l].name, streams_[l]->offsets);
    h5::Id m = h5::create_group(metrics.get(), layers_[l].name);
    const LayerCounts& t = totals_[l];
    const TraceLayerInfo& info = layers_[l];
    h5::write_attribute(m.get(), "type", info.type);
    h5::write_attribute(m.get(), "units", static_cast<std::int64_t>(info.units));
    h5::write_attribute(m.get(), "inputs", static_cast<std::int64_t>(info.inputs));
    h5::write_attribute(m.get(), "clocked", static_cast<std::int64_t>(t.clocked ? 1 : 0));
    h5::write_attribute(m.get(), "events", static_cast<std::int64_t>(t.events));
    h5::write_attribute(m.get(), "inputs_received", static_cast<std::int64_t>(t.inputs_received));
    h5::write_attribute(m.get(), "releases", static_cast<std::int64_t>(t.releases));
    h5::write_attribute(m.get(), "internal_steps", static_cast<std::int64_t>(t.internal_steps));
    h5::write_attribute(m.get(), "dense_operations_per_step",
                        static_cast<std::int64_t>(t.dense.operations_per_step));
    h5::write_attribute(m.get(), "state_words_per_unit",
                        static_cast<std::int64_t>(t.dense.state_words_per_unit));
    // The run's precision, not the file's (which holds float64 in both): weights and state are
    // read at this size (docs/metrics.md).
    h5::write_attribute(m.get(), "scalar_bytes", static_cast<std::int64_t>(info.scalar_bytes));
    // Per sample, as NeuroBench reports (sim/layer_metrics.hpp; docs/metrics.md).
    for (const auto& [name, value] :
         layer_metrics(t, starts_.size(), total_time_, info.scalar_bytes))
      h5::write_attribute(m.get(), name.c_str(), value);
    h5::Id per = h5::create_group(m.get(), "per_sample");
    for (std::size_t k = 0; k < kPerSampleCounters.size(); ++k)
      h5::write_vector(per.get(), kPerSampleCounters[k], per_sample_[l][k]);
  }
  h5::Id prov = h5::create_group(f, "egret/provenance");
  h5::write_attribute(prov.get(), "egret_version", std::string(EGRET_VERSION));
  h5::write_attribute(prov.get(), "git_revision", std::string(EGRET_GIT_REVISION));
  h5::write_attribute(prov.get(), "configuration", provenance_.configuration);
  h5::write_attribute(prov.get(), "seed", provenance_.seed);
  h5::write_attribute(prov.get(), "command_line", provenance_.command_line);
  h5::write_attribute(prov.get(), "utc_time", utc_now());
  streams_.clear();
  samples.reset();
  offsets.reset();
  metrics.reset();
  prov.reset();
  file_.commit();
  finished_ = true;
}

namespace {

// Version 2: the counts and the NeuroBench-named metrics (sim/layer_metrics.hpp), and the exact
// counts per sample.
void read_metrics(hid_t m, const std::string& mw, std::size_t samples, TraceData::Layer& L) {
  for (const char* k :
       {"units", "inputs", "clocked", "events", "inputs_received", "releases", "internal_steps",
        "dense_operations_per_step", "state_words_per_unit", "scalar_bytes"})
    L.metrics[k] = static_cast<double>(h5::read_int_attribute(m, k, mw));
  for (const std::string& k : layer_metric_names())
    L.metrics[k] = h5::read_double_attribute(m, k.c_str(), mw);
  h5::Id per = h5::open_group(m, "per_sample", mw);
  for (const std::string& k : kPerSampleCounters) {
    std::vector<std::uint64_t> v = h5::read_uint64s(per.get(), k, mw + "/per_sample");
    if (v.size() != samples)
      throw std::runtime_error(mw + "/per_sample/" + k + " has " + std::to_string(v.size()) +
                               " values for " + std::to_string(samples) + " samples");
    L.per_sample[k] = std::move(v);
  }
}

// Version 1 (before operation counts): the counts and rates it had; no per-sample counts.
void read_version1_metrics(hid_t m, const std::string& mw, TraceData::Layer& L) {
  for (const char* k : {"units", "events", "inputs_received", "releases", "internal_steps"})
    L.metrics[k] = static_cast<double>(h5::read_int_attribute(m, k, mw));
  for (const char* k : {"events_per_unit_per_s", "activity_sparsity"})
    L.metrics[k] = h5::read_double_attribute(m, k, mw);
}

TraceData read_trace_contents(const std::string& path) {
  h5::Id file = h5::open_file_read(path);
  const hid_t f = file.get();
  if (!h5::has_attribute(f, "egret_format") ||
      h5::read_string_attribute(f, "egret_format", path) != "egret-trace")
    throw std::runtime_error(path + ": not an egret trace (no egret_format = \"egret-trace\")");
  const std::int64_t version = h5::read_int_attribute(f, "egret_format_version", path);
  if (version != 1 && version != kTraceFormatVersion)
    throw std::runtime_error(path + ": unsupported egret trace version " + std::to_string(version) +
                             " (this egret reads versions 1 and " +
                             std::to_string(kTraceFormatVersion) + ")");
  TraceData d;
  d.format_version = version;
  h5::Id spikes = h5::open_group(f, "spikes", path);
  h5::Id samples = h5::open_group(f, "egret/samples", path);
  d.sample_start = h5::read_doubles(samples.get(), "start_time", path + ":/egret/samples");
  d.sample_duration = h5::read_doubles(samples.get(), "duration", path + ":/egret/samples");
  d.sample_label = h5::read_int64s(samples.get(), "label", path + ":/egret/samples");
  // Layers in order layer0, layer1, ...
  for (int l = 0;; ++l) {
    const std::string name = "layer" + std::to_string(l);
    if (!h5::exists(spikes.get(), name)) break;
    TraceData::Layer L;
    L.name = name;
    const std::string where = path + ":/spikes/" + name;
    h5::Id g = h5::open_group(spikes.get(), name, path);
    L.sorting = read_sorting(g.get(), where);
    L.timestamps = h5::read_doubles(g.get(), "timestamps", where);
    L.node_ids = h5::read_uint64s(g.get(), "node_ids", where);
    if (L.node_ids.size() != L.timestamps.size())
      throw std::runtime_error(where + ": timestamps and node_ids differ in length");
    h5::Id ev = h5::open_group(f, "egret/events/" + name, path);
    L.values = h5::read_doubles(ev.get(), "values", path + ":/egret/events/" + name);
    if (L.values.size() != L.timestamps.size())
      throw std::runtime_error(path + ": /egret/events/" + name + "/values has the wrong length");
    h5::Id off = h5::open_group(samples.get(), "offsets", path);
    L.sample_offsets = h5::read_uint64s(off.get(), name, path + ":/egret/samples/offsets");
    if (L.sample_offsets.size() != d.sample_start.size() + 1 || L.sample_offsets.front() != 0 ||
        !std::is_sorted(L.sample_offsets.begin(), L.sample_offsets.end()) ||
        L.sample_offsets.back() != L.timestamps.size())
      throw std::runtime_error(path + ": /egret/samples/offsets/" + name +
                               " does not match the samples and events");
    h5::Id m = h5::open_group(f, "egret/metrics/" + name, path);
    const std::string mw = path + ":/egret/metrics/" + name;
    L.type = h5::read_string_attribute(m.get(), "type", mw);
    if (version == 1)
      read_version1_metrics(m.get(), mw, L);
    else
      read_metrics(m.get(), mw, d.sample_start.size(), L);
    d.layers.push_back(std::move(L));
  }
  if (d.layers.empty()) throw std::runtime_error(path + ": /spikes holds no layer");
  h5::Id prov = h5::open_group(f, "egret/provenance", path);
  for (const char* k :
       {"egret_version", "git_revision", "configuration", "command_line", "utc_time"})
    d.provenance[k] = h5::read_string_attribute(prov.get(), k, path + ":/egret/provenance");
  d.provenance["seed"] =
      std::to_string(h5::read_int_attribute(prov.get(), "seed", path + ":/egret/provenance"));
  if (h5::exists(f, "egret/snapshots/time")) {
    h5::Id snaps = h5::open_group(f, "egret/snapshots", path);
    d.snapshot_times = h5::read_doubles(snaps.get(), "time", path + ":/egret/snapshots");
  }
  return d;
}

}  // namespace

TraceData read_trace_file(const std::string& path) {
  return h5::read_untrusted(path, [&] { return read_trace_contents(path); });
}

template <class Scalar>
SamplesTraceSummary write_samples_trace(const std::string& path, const Network<Scalar>& net,
                                        const std::vector<const Sample<Scalar>*>& samples,
                                        const std::vector<std::int64_t>& labels,
                                        const Provenance& provenance, double dense_step) {
  if (!labels.empty() && labels.size() != samples.size())
    throw std::invalid_argument(path + ": one label per sample expected");
  TraceFileWriter writer(path, trace_layers(net));
  writer.set_provenance(provenance);
  CastingTraceSink<Scalar, double> sink(writer);  // the file holds float64 in both precisions
  Network<Scalar> local = net.clone();
  SamplesTraceSummary summary;
  summary.layers.resize(static_cast<std::size_t>(net.size()));
  for (std::size_t i = 0; i < samples.size(); ++i) {
    writer.begin_sample(labels.empty() ? -1 : labels[i]);
    SimOptions<Scalar> opt = samples[i]->options();
    opt.record_trace = false;
    opt.sink = &sink;
    opt.dense_step = static_cast<Scalar>(dense_step);
    const SimResult<Scalar> r = simulate(local, samples[i]->input, opt);
    for (std::size_t l = 0; l < r.layers.size(); ++l) summary.layers[l] += r.layers[l];
    summary.simulated_ms += static_cast<double>(samples[i]->end_time);
    writer.end_sample(cast_result<double>(r));
  }
  summary.events = writer.events_written();  // finish() releases the per-layer streams
  writer.finish();
  return summary;
}

template SamplesTraceSummary write_samples_trace(const std::string&, const Network<double>&,
                                                 const std::vector<const Sample<double>*>&,
                                                 const std::vector<std::int64_t>&,
                                                 const Provenance&, double);
template SamplesTraceSummary write_samples_trace(const std::string&, const Network<float>&,
                                                 const std::vector<const Sample<float>*>&,
                                                 const std::vector<std::int64_t>&,
                                                 const Provenance&, double);

}  // namespace egret
