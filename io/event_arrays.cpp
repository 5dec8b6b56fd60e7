// Event arrays with fields x, y, p, t (t in microseconds), as tonic and numpy users keep them:
// .npy structured arrays, and HDF5 files with either a compound dataset "events" or a group
// "events" holding datasets x, y, p, t.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "io/camera_block_reader.hpp"
#include "io/hdf5.hpp"

namespace egret {
namespace {

struct Field {
  std::string name;
  char kind = 0;  // 'i', 'u', 'b', 'f'
  int size = 0;
  bool big_endian = false;
  std::size_t offset = 0;
};

// Reads one field of a record as int64 (floats must hold whole numbers).
std::int64_t field_value(const unsigned char* rec, const Field& f, const std::string& path,
                         std::uint64_t at) {
  unsigned char b[8] = {0};
  for (int k = 0; k < f.size && k < 8; ++k)  // little-endian in b whatever the file's order
    b[k] = rec[f.offset + static_cast<std::size_t>(f.big_endian ? f.size - 1 - k : k)];
  if (f.kind == 'f') {
    double v = 0;
    if (f.size == 8)
      std::memcpy(&v, b, 8);
    else {
      float x;
      std::memcpy(&x, b, 4);
      v = x;
    }
    if (!std::isfinite(v) || v != std::floor(v))
      throw CameraFileError(path, at, "field '" + f.name + "' is not a whole number");
    return static_cast<std::int64_t>(v);
  }
  std::uint64_t u = 0;
  for (int k = f.size - 1; k >= 0; --k) u = (u << 8) | b[k];
  if (f.kind == 'i' && f.size < 8 && (u >> (8 * f.size - 1)) & 1)
    u |= ~std::uint64_t{0} << (8 * f.size);
  return static_cast<std::int64_t>(u);
}

// `fail(what)` throws an error that says where (a byte offset or an event index).
template <class Fail>
CameraEvent make_event(std::int64_t x, std::int64_t y, std::int64_t p, std::int64_t t,
                       std::int64_t& last_t, const Fail& fail) {
  if (x < 0 || x > 0xFFFF || y < 0 || y > 0xFFFF)
    fail("coordinates (" + std::to_string(x) + ", " + std::to_string(y) + ") out of range");
  if (p != 0 && p != 1 && p != -1) fail("polarity " + std::to_string(p) + " is not 0/1 (or -1/1)");
  if (t < last_t) fail("events are not sorted by time");
  last_t = t;
  return {t, static_cast<std::uint16_t>(x), static_cast<std::uint16_t>(y),
          static_cast<std::uint8_t>(p == 1)};
}

}  // namespace

CameraFileInfo read_npy_events(const std::string& path, const CameraEventSink& sink) {
  detail::BlockReader r(path);
  CameraFileInfo info;
  info.format = "npy";
  unsigned char magic[8];
  if (!r.read(magic, 8, "npy magic") || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw CameraFileError(path, 0, "not a .npy file");
  std::uint32_t header_len = 0;
  unsigned char hl[4] = {0};
  if (magic[6] == 1) {
    if (!r.read(hl, 2, "npy header length")) throw CameraFileError(path, 8, "truncated npy header");
    header_len = detail::le16(hl);
  } else if (magic[6] == 2 || magic[6] == 3) {
    if (!r.read(hl, 4, "npy header length")) throw CameraFileError(path, 8, "truncated npy header");
    header_len = detail::le32(hl);
  } else {
    throw CameraFileError(path, 6, "unsupported npy version " + std::to_string(magic[6]));
  }
  if (header_len > (1u << 20)) throw CameraFileError(path, 8, "npy header too long");
  std::string header(header_len, '\0');
  if (!r.read(header.data(), header_len, "npy header"))
    throw CameraFileError(path, r.offset(), "truncated npy header");
  if (header.find("'fortran_order': True") != std::string::npos)
    throw CameraFileError(path, 10, "Fortran-ordered arrays are not supported");
  // descr: [('x', '<i2'), ('y', '<i2'), ('p', '|b1'), ('t', '<i8')]
  std::vector<Field> fields;
  std::size_t pos = header.find("'descr'");
  if (pos == std::string::npos || header.find('[', pos) == std::string::npos)
    throw CameraFileError(path, 10, "expected a structured array with fields x, y, p, t");
  pos = header.find('[', pos);
  const std::size_t end = header.find(']', pos);
  std::size_t record = 0;
  while (true) {
    const std::size_t open = header.find('(', pos);
    if (open == std::string::npos || open > end) break;
    const std::size_t close = header.find(')', open);
    const std::string tuple = header.substr(open + 1, close - open - 1);
    std::vector<std::string> parts;
    for (std::size_t q = tuple.find('\''); q != std::string::npos; q = tuple.find('\'', q + 1)) {
      const std::size_t q2 = tuple.find('\'', q + 1);
      if (q2 == std::string::npos) break;
      parts.push_back(tuple.substr(q + 1, q2 - q - 1));
      q = q2;
    }
    if (parts.size() != 2 || parts[1].size() < 3)
      throw CameraFileError(path, 10, "cannot read the field '" + tuple + "' of the npy dtype");
    Field f;
    f.name = parts[0];
    f.big_endian = parts[1][0] == '>';
    f.kind = parts[1][1];
    f.size = std::atoi(parts[1].c_str() + 2);
    if ((f.kind != 'i' && f.kind != 'u' && f.kind != 'b' && f.kind != 'f') || f.size < 1 ||
        f.size > 8)
      throw CameraFileError(path, 10, "unsupported type " + parts[1] + " for field " + f.name);
    f.offset = record;
    record += static_cast<std::size_t>(f.size);
    fields.push_back(f);
    pos = close + 1;
  }
  auto find = [&](const char* n) -> const Field& {
    for (const auto& f : fields)
      if (f.name == n) return f;
    throw CameraFileError(path, 10,
                          std::string("the npy dtype has no field '") + n + "' (need x, y, p, t)");
  };
  const Field &fx = find("x"), &fy = find("y"), &fp = find("p"), &ft = find("t");
  info.header_bytes = r.offset();
  detail::EventBatcher out(sink, info);
  std::vector<unsigned char> rec(record);
  std::int64_t last_t = INT64_MIN;
  for (;;) {
    const std::uint64_t at = r.offset();
    if (!r.read(rec.data(), record, "npy record")) break;
    out.push(make_event(
        field_value(rec.data(), fx, path, at), field_value(rec.data(), fy, path, at),
        field_value(rec.data(), fp, path, at), field_value(rec.data(), ft, path, at), last_t,
        [&](const std::string& what) { throw CameraFileError(path, at, what); }));
  }
  out.flush();
  return info;
}

namespace {

// ---- HDF5 event arrays -----------------------------------------------------------------------

// One field of the HDF5 events, read as int64 slots: integers (at most 8 bytes) converted by
// libhdf5 under the strict transfer list (a uint64 above INT64_MAX is an error, not a clamped
// value); floats read as double and checked here (finite, whole, in range), so a time of 1e300
// or NaN is an error naming the event.
struct Hdf5Field {
  char kind = 'i';  // 'i' (any integer) or 'f'
};

std::int64_t checked_whole(double v, const std::string& where, std::uint64_t index,
                           const char* field) {
  // 2^63 is exactly representable; every double below it converts exactly.
  if (!std::isfinite(v) || v != std::floor(v) || v >= 9223372036854775808.0 ||
      v < -9223372036854775808.0)
    throw std::runtime_error(where + ": event " + std::to_string(index) + ": field '" + field +
                             "' = " + std::to_string(v) + " is not a whole number in int64 range");
  return static_cast<std::int64_t>(v);
}

// The events as one read pass in blocks of kBlock (hyperslabs): memory stays bounded.
constexpr hsize_t kBlock = 1 << 16;

void read_hyperslab(hid_t dset, hid_t mem_type, hsize_t start, hsize_t count, void* out,
                    const std::string& where) {
  h5::Id fspace(H5Dget_space(dset));
  h5::Id mspace(H5Screate_simple(1, &count, nullptr));
  h5::Id dxpl = h5::strict_transfer_plist();
  if (!fspace.valid() || !mspace.valid() ||
      H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, &start, nullptr, &count, nullptr) < 0 ||
      H5Dread(dset, mem_type, mspace.get(), fspace.get(), dxpl.get(), out) < 0)
    throw std::runtime_error(where + ": events " + std::to_string(start) + ".." +
                             std::to_string(start + count - 1) +
                             " cannot be read (corrupt, or an integer out of int64 range)");
}

hsize_t one_d_length(hid_t dset, std::size_t mem_size, const std::string& where) {
  const std::vector<hsize_t> dims = h5::checked_extent(dset, mem_size, where);
  if (dims.size() != 1) throw std::runtime_error(where + ": not one-dimensional");
  return dims[0];
}

CameraFileInfo read_hdf5_events_contents(const std::string& path, const CameraEventSink& sink) {
  h5::Id file = h5::open_file_read(path);
  const hid_t f = file.get();
  CameraFileInfo info;
  info.format = "hdf5";
  h5::QuietErrors quiet;
  if (!h5::exists(f, "events")) throw std::runtime_error(path + ": no 'events' dataset or group");
  const H5O_type_t type = h5::object_type(f, "events", path + ":/events");
  detail::EventBatcher out(sink, info);
  std::int64_t last_t = INT64_MIN;
  auto emit = [&](const std::int64_t* xypt, hsize_t i) {
    out.push(make_event(xypt[0], xypt[1], xypt[2], xypt[3], last_t, [&](const std::string& what) {
      throw std::runtime_error(path + ":/events: event " + std::to_string(i) + ": " + what);
    }));
  };
  const char* names[4] = {"x", "y", "p", "t"};
  if (type == H5O_TYPE_GROUP) {
    h5::Id g = h5::open_group(f, "events", path);
    h5::Id d[4];
    char kind[4];
    hsize_t n = 0;
    for (int k = 0; k < 4; ++k) {
      const std::string where = path + ":/events/" + names[k];
      if (!h5::exists(g.get(), names[k]))
        throw std::runtime_error(path + ":/events: missing dataset '" + names[k] + "'");
      if (h5::object_type(g.get(), names[k], where) != H5O_TYPE_DATASET)
        throw std::runtime_error(where + ": not a dataset");
      d[k] = h5::Id(H5Dopen2(g.get(), names[k], H5P_DEFAULT));
      h5::Id ftype(H5Dget_type(d[k].get()));
      if (!d[k].valid() || !ftype.valid()) throw std::runtime_error(where + ": cannot be opened");
      kind[k] = h5::numeric_kind(ftype.get(), where) == 'f' ? 'f' : 'i';
      const hsize_t len = one_d_length(d[k].get(), 8, where);
      if (k > 0 && len != n)
        throw std::runtime_error(path + ":/events: x, y, p, t differ in length");
      n = len;
    }
    std::vector<std::int64_t> col[4];
    std::vector<double> real;
    for (hsize_t start = 0; start < n; start += kBlock) {
      const hsize_t count = std::min(kBlock, n - start);
      for (int k = 0; k < 4; ++k) {
        const std::string where = path + ":/events/" + names[k];
        col[k].resize(count);
        if (kind[k] == 'i') {
          read_hyperslab(d[k].get(), H5T_NATIVE_INT64, start, count, col[k].data(), where);
        } else {
          real.resize(count);
          read_hyperslab(d[k].get(), H5T_NATIVE_DOUBLE, start, count, real.data(), where);
          for (hsize_t i = 0; i < count; ++i)
            col[k][i] = checked_whole(real[i], path + ":/events", start + i, names[k]);
        }
      }
      for (hsize_t i = 0; i < count; ++i) {
        const std::int64_t xypt[4] = {col[0][i], col[1][i], col[2][i], col[3][i]};
        emit(xypt, start + i);
      }
    }
  } else if (type == H5O_TYPE_DATASET) {
    // A compound dataset: the members x, y, p, t into int64 or double slots by their class.
    const std::string where = path + ":/events";
    h5::Id dset(H5Dopen2(f, "events", H5P_DEFAULT));
    h5::Id ftype(H5Dget_type(dset.get()));
    if (!dset.valid() || !ftype.valid() || H5Tget_class(ftype.get()) != H5T_COMPOUND)
      throw std::runtime_error(where + " is neither a group nor a compound dataset");
    union Slot {
      std::int64_t i;
      double f;
    };
    struct Rec {
      Slot v[4];
    };
    h5::Id mem(H5Tcreate(H5T_COMPOUND, sizeof(Rec)));
    char kind[4];
    for (int k = 0; k < 4; ++k) {
      const int idx = H5Tget_member_index(ftype.get(), names[k]);
      if (idx < 0)
        throw std::runtime_error(where + " has no field '" + names[k] + "' (need x, y, p, t)");
      h5::Id mtype(H5Tget_member_type(ftype.get(), static_cast<unsigned>(idx)));
      if (!mtype.valid()) throw std::runtime_error(where + ": field '" + names[k] + "' unreadable");
      kind[k] =
          h5::numeric_kind(mtype.get(), where + ": field '" + names[k] + "'") == 'f' ? 'f' : 'i';
      H5Tinsert(mem.get(), names[k], HOFFSET(Rec, v) + k * sizeof(Slot),
                kind[k] == 'f' ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64);
    }
    const hsize_t n = one_d_length(dset.get(), sizeof(Rec), where);
    std::vector<Rec> recs;
    for (hsize_t start = 0; start < n; start += kBlock) {
      const hsize_t count = std::min(kBlock, n - start);
      recs.resize(count);
      read_hyperslab(dset.get(), mem.get(), start, count, recs.data(), where);
      for (hsize_t i = 0; i < count; ++i) {
        std::int64_t xypt[4];
        for (int k = 0; k < 4; ++k)
          xypt[k] = kind[k] == 'i' ? recs[i].v[k].i
                                   : checked_whole(recs[i].v[k].f, where, start + i, names[k]);
        emit(xypt, start + i);
      }
    }
  } else {
    throw std::runtime_error(path + ":/events is neither a group nor a dataset");
  }
  out.flush();
  return info;
}

}  // namespace

// Validated in a child process first (io/hdf5.hpp): the child reads every event with a sink
// that drops them.
CameraFileInfo read_hdf5_events(const std::string& path, const CameraEventSink& sink) {
  h5::validate_in_child(
      path, [&] { (void)read_hdf5_events_contents(path, [](const CameraEvent*, std::size_t) {}); });
  return read_hdf5_events_contents(path, sink);
}

}  // namespace egret
