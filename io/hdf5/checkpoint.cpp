#include "io/hdf5/checkpoint.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include "io/config/network_config.hpp"
#include "io/hdf5/hdf5.hpp"

namespace egret {
namespace {

// 3: a family key may name the value a configuration saved before the key existed implies
// (SettingKey::legacy_value); version 2 is read with those values filled in
// (io/config/network_config.hpp with_legacy_settings). docs/formats.md lists them.
// 4: time constants per unit (ParameterSpec::was_scalar): versions 2 and 3 hold one value per
// layer, which the readers of the training values broadcast (ParameterVector::from_format3).
constexpr std::int64_t kCheckpointVersion = 4;
constexpr std::int64_t kNewestVersionNeedingLegacySettings = 2;
constexpr std::int64_t kOldestReadableVersion = 2;
constexpr const char* kIntegrityTable = "egret_integrity";
constexpr const char* kIntegrityTableCrc = "egret_integrity_crc64";

template <class M>
void write_eigen(hid_t g, const std::string& name, const M& m) {
  std::vector<double> rows;  // row-major for HDF5
  for (Index i = 0; i < m.rows(); ++i)
    for (Index j = 0; j < m.cols(); ++j) rows.push_back(static_cast<double>(m(i, j)));
  if (m.cols() == 1)
    h5::write_vector(g, name, rows);
  else
    h5::write_matrix(g, name, rows, static_cast<std::size_t>(m.rows()),
                     static_cast<std::size_t>(m.cols()));
}

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what);
}

// ---- Integrity: CRC-64 per dataset and attribute ----------------------------------------------
//
// Every dataset and attribute of a checkpoint (except the two integrity attributes) has a
// CRC-64/XZ over a canonical serialisation of its path and value, listed in the root attribute
// egret_integrity (fixed-length text, one "<16 hex digits> <path>" line per item, sorted by
// path); egret_integrity_crc64 is the CRC-64 of that table. A damaged item is named by path.

std::uint64_t crc64_update(std::uint64_t crc, const void* data, std::size_t n) {
  static const auto table = [] {
    std::array<std::uint64_t, 256> t{};
    for (std::uint64_t i = 0; i < 256; ++i) {
      std::uint64_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? 0xC96C5795D7870F42ULL : 0);
      t[i] = c;
    }
    return t;
  }();
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return crc;
}

// One item's canonical bytes: kind, path, NUL, then the value in little-endian order.
struct Canonical {
  std::uint64_t crc = ~std::uint64_t{0};
  void bytes(const void* p, std::size_t n) { crc = crc64_update(crc, p, n); }
  void u64(std::uint64_t v) {
    unsigned char b[8];
    for (int k = 0; k < 8; ++k) b[k] = static_cast<unsigned char>(v >> (8 * k));
    bytes(b, 8);
  }
  void text(const std::string& s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  std::uint64_t value() const { return ~crc; }
};

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::uint64_t attribute_crc(hid_t obj, const std::string& path, const std::string& name,
                            const std::string& where) {
  h5::Id attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT));
  h5::Id type(H5Aget_type(attr.get()));
  if (!attr.valid() || !type.valid())
    fail(where + ": attribute '" + name + "' cannot be opened (damaged)");
  Canonical c;
  c.bytes("A", 1);
  c.text(path + "@" + name);
  switch (H5Tget_class(type.get())) {
    case H5T_STRING:
      c.bytes("s", 1);
      c.text(h5::read_string_attribute(obj, name, where));
      break;
    case H5T_INTEGER:
      c.bytes("i", 1);
      c.u64(static_cast<std::uint64_t>(h5::read_int_attribute(obj, name, where)));
      break;
    case H5T_FLOAT: {
      c.bytes("f", 1);
      const double v = h5::read_double_attribute(obj, name, where);
      std::uint64_t bits = 0;
      std::memcpy(&bits, &v, 8);
      c.u64(bits);
      break;
    }
    default:
      fail(where + ": attribute '" + name + "' has a type a checkpoint does not hold");
  }
  return c.value();
}

std::uint64_t dataset_crc(hid_t parent, const std::string& name, const std::string& path,
                          const std::string& where) {
  h5::Id dset(H5Dopen2(parent, name.c_str(), H5P_DEFAULT));
  if (!dset.valid()) fail(where + ": cannot open the dataset (damaged)");
  h5::Id type(H5Dget_type(dset.get()));
  if (!type.valid() || h5::numeric_kind(type.get(), where) != 'f')
    fail(where + ": a checkpoint holds only floating-point datasets");
  const std::vector<hsize_t> dims = h5::checked_extent(dset.get(), sizeof(double), where);
  std::size_t n = 1;
  for (hsize_t d : dims) n *= static_cast<std::size_t>(d);  // checked by checked_extent
  std::vector<double> data(n);
  h5::Id dxpl = h5::strict_transfer_plist();
  if (n > 0 &&
      H5Dread(dset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, dxpl.get(), data.data()) < 0)
    fail(where + ": cannot read the data (damaged: failed checksum or corrupt storage)");
  Canonical c;
  c.bytes("D", 1);
  c.text(path);
  c.u64(dims.size());
  for (hsize_t d : dims) c.u64(d);
  for (double v : data) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, 8);
    c.u64(bits);
  }
  return c.value();
}

std::vector<std::string> names_of(hid_t obj, bool attributes, const std::string& where) {
  std::vector<std::string> names;
  herr_t status = 0;
  if (attributes) {
    status = H5Aiterate2(
        obj, H5_INDEX_NAME, H5_ITER_INC, nullptr,
        [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
          static_cast<std::vector<std::string>*>(out)->push_back(name);
          return 0;
        },
        &names);
  } else {
    status = H5Literate(
        obj, H5_INDEX_NAME, H5_ITER_INC, nullptr,
        [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
          static_cast<std::vector<std::string>*>(out)->push_back(name);
          return 0;
        },
        &names);
  }
  if (status < 0)
    fail(where + ": cannot list its " + (attributes ? "attributes" : "members") + " (damaged)");
  if (names.size() > 100000) fail(where + ": implausibly many members");
  return names;
}

// Every dataset and attribute under `group` (at `path`), by path, with its CRC-64.
void collect_items(hid_t group, const std::string& path, const std::string& file, int depth,
                   std::map<std::string, std::uint64_t>& items) {
  if (depth > 8) fail(file + ":" + path + ": groups nested too deeply");
  const std::string where = file + ":" + path;
  for (const std::string& a : names_of(group, true, where))
    if (!(path == "/" && (a == kIntegrityTable || a == kIntegrityTableCrc)))
      items[path + "@" + a] = attribute_crc(group, path, a, where);
  for (const std::string& name : names_of(group, false, where)) {
    const std::string child = (path == "/" ? "/" : path + "/") + name;
    switch (h5::object_type(group, name, file + ":" + child)) {
      case H5O_TYPE_GROUP: {
        h5::Id g(H5Gopen2(group, name.c_str(), H5P_DEFAULT));
        if (!g.valid()) fail(file + ":" + child + ": cannot open the group (damaged)");
        collect_items(g.get(), child, file, depth + 1, items);
        break;
      }
      case H5O_TYPE_DATASET: {
        items[child] = dataset_crc(group, name, child, file + ":" + child);
        h5::Id d(H5Dopen2(group, name.c_str(), H5P_DEFAULT));
        for (const std::string& a : names_of(d.get(), true, file + ":" + child))
          items[child + "@" + a] = attribute_crc(d.get(), child, a, file + ":" + child);
        break;
      }
      default:
        fail(file + ":" + child + ": neither a group nor a dataset");
    }
  }
}

std::string integrity_table(const std::map<std::string, std::uint64_t>& items) {
  std::string table;
  for (const auto& [path, crc] : items) table += hex64(crc) + " " + path + "\n";
  return table;
}

void write_integrity(hid_t f, const std::string& path) {
  std::map<std::string, std::uint64_t> items;
  collect_items(f, "/", path, 0, items);
  const std::string table = integrity_table(items);
  h5::write_fixed_string_attribute(f, kIntegrityTable, table);
  h5::write_fixed_string_attribute(
      f, kIntegrityTableCrc,
      hex64(crc64_update(~std::uint64_t{0}, table.data(), table.size()) ^ ~std::uint64_t{0}));
}

// Refuses a checkpoint any of whose datasets or attributes differs from its checksum, naming it.
// Returns the paths of its items (all verified).
std::vector<std::string> verify_integrity(hid_t f, const std::string& path) {
  for (const char* a : {kIntegrityTable, kIntegrityTableCrc})
    if (!h5::has_attribute(f, a))
      fail(path + ": no integrity table (attribute '" + a + "'): not a complete checkpoint");
  const std::string table = h5::read_string_attribute(f, kIntegrityTable, path);
  const std::string table_crc = h5::read_string_attribute(f, kIntegrityTableCrc, path);
  if (table_crc !=
      hex64(crc64_update(~std::uint64_t{0}, table.data(), table.size()) ^ ~std::uint64_t{0}))
    fail(path + ": the integrity table (root attributes " + kIntegrityTable + ", " +
         kIntegrityTableCrc + ") is damaged");
  std::map<std::string, std::uint64_t> items;
  collect_items(f, "/", path, 0, items);
  std::map<std::string, std::string> listed;
  for (std::size_t start = 0; start < table.size();) {
    const std::size_t nl = table.find('\n', start);
    if (nl == std::string::npos) fail(path + ": the integrity table is malformed");
    const std::string line = table.substr(start, nl - start);
    if (line.size() < 18 || line[16] != ' ') fail(path + ": the integrity table is malformed");
    listed[line.substr(17)] = line.substr(0, 16);
    start = nl + 1;
  }
  for (const auto& [item, crc] : items) {
    const auto it = listed.find(item);
    if (it == listed.end())
      fail(path + ": " + item + " is not in the integrity table (damaged or added)");
    if (it->second != hex64(crc))
      fail(path + ": " + item + " is damaged (its CRC-64 does not match the integrity table)");
  }
  for (const auto& [item, crc] : listed)
    if (!items.count(item))
      fail(path + ": " + item + " is missing (listed in the integrity table)");
  std::vector<std::string> paths;
  for (const auto& [item, crc] : items) paths.push_back(item);
  return paths;
}

// The parameters in natural coordinates (/parameters/layer<l>/<name> datasets and
// /parameters/layer<l>@<name> scalar attributes; the readout's), named "layer<l>.<name>".
std::map<std::string, std::vector<double>> read_natural_parameters(
    hid_t f, const std::vector<std::string>& items, const std::string& path) {
  std::map<std::string, std::vector<double>> out;
  const std::string prefix = "/parameters/";
  for (const std::string& item : items) {
    if (item.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = item.substr(prefix.size());  // "layer0@tau_m" or "layer0/V_u"
    const std::size_t at = rest.find('@'), slash = rest.find('/');
    if (at != std::string::npos && slash == std::string::npos) {
      const std::string group = rest.substr(0, at), name = rest.substr(at + 1);
      if (name == "type") continue;
      h5::Id g = h5::open_group(f, prefix + group, path);
      out[group + "." + name] = {h5::read_double_attribute(g.get(), name, path + ":" + item)};
    } else if (slash != std::string::npos && at == std::string::npos) {
      const std::string group = rest.substr(0, slash), name = rest.substr(slash + 1);
      h5::Id g = h5::open_group(f, prefix + group, path);
      out[group + "." + name] = h5::read_double_array(g.get(), name, path + ":" + item);
    }
  }
  return out;
}

Checkpoint read_checkpoint_contents(const std::string& path) {
  h5::Id file = h5::open_file_read(path);
  const hid_t f = file.get();
  if (!h5::has_attribute(f, "egret_format"))
    throw std::runtime_error(path + ": not an egret checkpoint");
  // The checksums first: a damaged egret_format or version is named as damaged.
  const bool has_integrity = h5::has_attribute(f, kIntegrityTable);
  std::vector<std::string> items;
  if (has_integrity) items = verify_integrity(f, path);
  if (h5::read_string_attribute(f, "egret_format", path) != "egret-checkpoint")
    throw std::runtime_error(path + ": not an egret checkpoint");
  const std::int64_t version = h5::read_int_attribute(f, "egret_format_version", path);
  if (version == 1)
    throw std::runtime_error(path +
                             ": checkpoint version 1 carries no integrity check (written by an "
                             "older egret); egret reads version " +
                             std::to_string(kCheckpointVersion));
  if (version < kOldestReadableVersion || version > kCheckpointVersion)
    throw std::runtime_error(path + ": unsupported checkpoint version " + std::to_string(version));
  if (!has_integrity) items = verify_integrity(f, path);  // names the missing table
  Checkpoint c;
  const std::int64_t epoch = h5::read_int_attribute(f, "epoch", path);
  if (epoch < 0 || epoch > INT32_MAX)
    throw std::runtime_error(path + ": attribute 'epoch' out of range: " + std::to_string(epoch));
  c.epoch = static_cast<int>(epoch);
  c.optimizer_steps = h5::read_int_attribute(f, "optimizer_steps", path);
  c.config_text = h5::read_string_attribute(f, "configuration", path);
  c.format_version = version;
  if (version <= kNewestVersionNeedingLegacySettings)
    c.config_text = with_legacy_settings(c.config_text, path + ": configuration");
  c.rng_state = h5::read_string_attribute(f, "rng_state", path);
  if (h5::has_attribute(f, "training_loop"))
    c.loop_state = h5::read_string_attribute(f, "training_loop", path);
  h5::Id training = h5::open_group(f, "training", path);
  c.values = h5::read_doubles(training.get(), "values", path + ":/training");
  c.adam_m = h5::read_doubles(training.get(), "adam_m", path + ":/training");
  c.adam_v = h5::read_doubles(training.get(), "adam_v", path + ":/training");
  c.natural_parameters = read_natural_parameters(f, items, path);
  return c;
}

}  // namespace

template <class Scalar>
void write_checkpoint(const std::string& path, const Checkpoint& c, const Network<Scalar>* net) {
  h5::OutputFile file(path);
  const hid_t f = file.get();
  h5::write_attribute(f, "egret_format", std::string("egret-checkpoint"));
  h5::write_attribute(f, "egret_format_version", kCheckpointVersion);
  h5::write_attribute(f, "epoch", static_cast<std::int64_t>(c.epoch));
  h5::write_attribute(f, "optimizer_steps", c.optimizer_steps);
  h5::write_attribute(f, "configuration", c.config_text);
  h5::write_attribute(f, "rng_state", c.rng_state);
  if (!c.loop_state.empty()) h5::write_attribute(f, "training_loop", c.loop_state);
  {
    h5::Id training = h5::create_group(f, "training");
    h5::write_vector(training.get(), "values", c.values);
    h5::write_vector(training.get(), "adam_m", c.adam_m);
    h5::write_vector(training.get(), "adam_v", c.adam_v);
  }
  if (net) {
    h5::Id params = h5::create_group(f, "parameters");
    for (Index l = 0; l < net->size(); ++l) {
      // Every named parameter of the layer's family; a scalar is an attribute.
      h5::Id g = h5::create_group(params.get(), "layer" + std::to_string(l));
      h5::write_attribute(g.get(), "type", net->layer(l).type_name());
      for (const auto& e : net->layer(l).parameters()) {
        if (e.spec.rank == Rank::kScalar)
          h5::write_attribute(g.get(), e.spec.name, static_cast<double>(e.value(0, 0)));
        else
          write_eigen(g.get(), e.spec.name, e.value);
      }
    }
    if (const auto* ro = net->readout()) {
      h5::Id g = h5::create_group(params.get(), "readout");
      write_eigen(g.get(), "W_o", ro->W_o);
      write_eigen(g.get(), "b_o", ro->b_o);
    }
  }
  file.check();
  write_integrity(f, path);
  file.commit();
}

template void write_checkpoint(const std::string&, const Checkpoint&, const Network<double>*);
template void write_checkpoint(const std::string&, const Checkpoint&, const Network<float>*);

Checkpoint read_checkpoint(const std::string& path) {
  return h5::read_untrusted(path, [&] { return read_checkpoint_contents(path); });
}

std::uint64_t crc64(const void* data, std::size_t n) {
  return crc64_update(~std::uint64_t{0}, data, n) ^ ~std::uint64_t{0};
}

}  // namespace egret
