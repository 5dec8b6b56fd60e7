// Event arrays with fields x, y, p, t (t in microseconds), as tonic and numpy users keep them:
// .npy structured arrays, and HDF5 files with either a compound dataset "events" or a group
// "events" holding datasets x, y, p, t.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "camera/formats/camera_block_reader.hpp"
#include "io/hdf5/hdf5.hpp"

namespace egret {
namespace {

struct Field {
  std::string name;
  char kind = 0;  // 'i', 'u', 'b', 'f'
  int size = 0;
  bool big_endian = false;
  std::size_t offset = 0;
};

// Reads one field of a record as int64. Floats must hold whole numbers and every value must be
// representable: a uint64 beyond INT64_MAX, NaN, inf or 1e300 is refused, never wrapped.
std::int64_t field_value(const unsigned char* rec, const Field& f, const std::string& path,
                         std::uint64_t at, std::uint64_t index) {
  unsigned char b[8] = {0};
  for (int k = 0; k < f.size && k < 8; ++k)  // little-endian in b whatever the file's order
    b[k] = rec[f.offset + static_cast<std::size_t>(f.big_endian ? f.size - 1 - k : k)];
  auto fail = [&](const std::string& value) {
    throw CameraFileError(path, at,
                          "record " + std::to_string(index) + ": field '" + f.name +
                              "' = " + value + " is not a whole number in the int64 range");
  };
  if (f.kind == 'f') {
    double v = 0;
    if (f.size == 8) {
      std::memcpy(&v, b, 8);
    } else {
      float x;
      std::memcpy(&x, b, 4);
      v = x;
    }
    // 2^63 is exactly representable; every double below it converts to int64 exactly.
    if (!std::isfinite(v) || v != std::floor(v) || v < -9223372036854775808.0 ||
        v >= 9223372036854775808.0) {
      char text[64];
      std::snprintf(text, sizeof text, "%g", v);
      fail(text);
    }
    return static_cast<std::int64_t>(v);
  }
  std::uint64_t u = 0;
  for (int k = f.size - 1; k >= 0; --k) u = (u << 8) | b[k];
  if (f.kind == 'i' && f.size < 8 && (u >> (8 * f.size - 1)) & 1)
    u |= ~std::uint64_t{0} << (8 * f.size);
  if (f.kind != 'i' && u > static_cast<std::uint64_t>(INT64_MAX)) fail(std::to_string(u));
  std::int64_t v;
  std::memcpy(&v, &u, 8);
  return v;
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

// The header of a .npy file: "{'descr': [('x', '<i2'), ...], 'fortran_order': False,
// 'shape': (N,), }". Parsed with bounds on every search, each step moving forward.
class NpyHeader {
 public:
  // The dict ends at the header's newline; the padding after it is not part of it.
  NpyHeader(const std::string& text, const std::string& path, std::uint64_t at)
      : text_(text.substr(0, text.find('\n'))), path_(path), at_(at) {}

  std::vector<Field> fields() {
    const std::size_t key = text_.find("'descr'");
    if (key == std::string::npos) fail(0, "has no 'descr'");
    const std::size_t colon = text_.find(':', key);
    if (colon == std::string::npos) fail(key, "'descr' without a value");
    std::size_t pos = skip_space(colon + 1);
    if (pos >= text_.size() || text_[pos] != '[')
      fail(pos, "descr is not a list of fields: expected a structured array with x, y, p, t");
    ++pos;
    std::vector<Field> out;
    std::size_t record = 0;
    for (;;) {
      pos = skip_space(pos);
      if (pos >= text_.size()) fail(pos, "descr list never closes");
      if (text_[pos] == ']') break;
      if (text_[pos] != '(') fail(pos, "expected '(' opening a field of the descr");
      Field f;
      f.name = quoted(skip_space(pos + 1), pos);
      pos = expect(pos, ',');
      const std::string type = quoted(skip_space(pos), pos);
      pos = expect(pos, ')');
      parse_type(type, f);
      for (const auto& g : out)
        if (g.name == f.name) fail(pos, "field '" + f.name + "' appears twice");
      f.offset = record;
      record += static_cast<std::size_t>(f.size);
      out.push_back(f);
      pos = skip_space(pos);
      if (pos < text_.size() && text_[pos] == ',') ++pos;
      if (out.size() > 64) fail(pos, "more than 64 fields in the descr");
    }
    return out;
  }

  // The record count from "'shape': (N,)"; refuses other shapes.
  std::uint64_t records() {
    const std::size_t key = text_.find("'shape'");
    if (key == std::string::npos) fail(0, "has no 'shape'");
    std::size_t pos = text_.find('(', key);
    if (pos == std::string::npos) fail(key, "shape is not a tuple");
    pos = skip_space(pos + 1);
    std::uint64_t n = 0;
    const std::size_t digits = pos;
    while (pos < text_.size() && text_[pos] >= '0' && text_[pos] <= '9') {
      if (__builtin_mul_overflow(n, 10, &n) ||
          __builtin_add_overflow(n, static_cast<unsigned>(text_[pos] - '0'), &n))
        fail(digits, "shape overflows");
      ++pos;
    }
    if (pos == digits) fail(digits, "shape is not one-dimensional (N,)");
    pos = skip_space(pos);
    if (pos >= text_.size() || text_[pos] != ',') fail(pos, "shape is not one-dimensional (N,)");
    pos = skip_space(pos + 1);
    if (pos >= text_.size() || text_[pos] != ')') fail(pos, "shape is not one-dimensional (N,)");
    return n;
  }

 private:
  [[noreturn]] void fail(std::size_t pos, const std::string& what) const {
    throw CameraFileError(path_, at_ + pos, "npy header " + what);
  }
  std::size_t skip_space(std::size_t pos) const {
    while (pos < text_.size() && (text_[pos] == ' ' || text_[pos] == '\t')) ++pos;
    return pos;
  }
  // A quoted string starting at `pos`; `next` receives the position after its closing quote.
  std::string quoted(std::size_t pos, std::size_t& next) const {
    if (pos >= text_.size()) fail(pos, "ends inside the descr (it never closes)");
    if (text_[pos] != '\'' && text_[pos] != '"')
      fail(pos, "expected a quoted name or type in the descr");
    const std::size_t close = text_.find(text_[pos], pos + 1);
    if (close == std::string::npos) fail(pos, "quoted string never closes");
    next = close + 1;
    return text_.substr(pos + 1, close - pos - 1);
  }
  std::size_t expect(std::size_t pos, char c) const {
    pos = skip_space(pos);
    if (pos >= text_.size()) fail(pos, "ends inside the descr (it never closes)");
    if (text_[pos] != c)
      fail(pos, std::string("expected '") + c + "' in the descr (sub-arrays are not supported)");
    return pos + 1;
  }
  // "<i2", ">u8", "|b1", "<f4": byte order, kind, size.
  void parse_type(const std::string& type, Field& f) const {
    const bool sized = type.size() == 3 && type[2] >= '1' && type[2] <= '8';
    const char kind = type.size() > 1 ? type[1] : 0;
    const int size = sized ? type[2] - '0' : 0;
    const bool ok =
        sized && (type[0] == '<' || type[0] == '>' || type[0] == '|' || type[0] == '=') &&
        (((kind == 'i' || kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
         (kind == 'b' && size == 1) || (kind == 'f' && (size == 4 || size == 8)));
    if (!ok) fail(0, "type '" + type + "' of field '" + f.name + "' is not supported");
    f.kind = kind;
    f.size = size;
    f.big_endian = type[0] == '>';
  }

  const std::string text_;
  const std::string& path_;
  std::uint64_t at_;
};

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
  if (header_len > r.remaining() || header_len > (1u << 20))
    throw CameraFileError(path, 8,
                          "npy header length " + std::to_string(header_len) + " exceeds the " +
                              std::to_string(r.remaining()) + " bytes left in the file");
  const std::uint64_t header_at = r.offset();
  std::string header(header_len, '\0');
  if (!r.read(header.data(), header_len, "npy header"))
    throw CameraFileError(path, r.offset(), "truncated npy header");
  if (header.find("'fortran_order': True") != std::string::npos)
    throw CameraFileError(path, header_at, "Fortran-ordered arrays are not supported");
  NpyHeader parsed(header, path, header_at);
  const std::vector<Field> fields = parsed.fields();
  const std::uint64_t records = parsed.records();
  std::size_t record = 0;
  for (const auto& f : fields) record += static_cast<std::size_t>(f.size);
  auto find = [&](const char* n) -> const Field& {
    for (const auto& f : fields)
      if (f.name == n) return f;
    throw CameraFileError(path, header_at,
                          std::string("the npy dtype has no field '") + n + "' (need x, y, p, t)");
  };
  const Field &fx = find("x"), &fy = find("y"), &fp = find("p"), &ft = find("t");
  info.header_bytes = r.offset();
  detail::EventBatcher out(sink, info);
  std::vector<unsigned char> rec(record);
  std::int64_t last_t = INT64_MIN;
  std::uint64_t index = 0;
  for (;; ++index) {
    const std::uint64_t at = r.offset();
    if (!r.read(rec.data(), record, "npy record")) break;
    if (index == records)
      throw CameraFileError(
          path, at,
          "data beyond the " + std::to_string(records) + " records the npy shape declares");
    auto fail = [&](const std::string& what) {
      throw CameraFileError(path, at, "record " + std::to_string(index) + ": " + what);
    };
    const std::int64_t t = field_value(rec.data(), ft, path, at, index);
    if (!is_camera_time(t)) fail("time " + std::to_string(t) + " us outside [0, 2^53] us");
    out.push(make_event(field_value(rec.data(), fx, path, at, index),
                        field_value(rec.data(), fy, path, at, index),
                        field_value(rec.data(), fp, path, at, index), t, last_t, fail));
  }
  if (index != records)
    throw CameraFileError(path, r.offset(),
                          "the file holds " + std::to_string(index) + " records, its npy shape " +
                              std::to_string(records));
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

constexpr const char* kFieldNames[4] = {"x", "y", "p", "t"};

// /events as a group of four one-dimensional datasets x, y, p, t of one length, read in blocks;
// emit(xypt, index) gets each event.
template <class Emit>
void read_column_group(hid_t f, const std::string& path, const Emit& emit) {
  h5::Id g = h5::open_group(f, "events", path);
  h5::Id d[4];
  char kind[4];
  hsize_t n = 0;
  for (int k = 0; k < 4; ++k) {
    const std::string where = path + ":/events/" + kFieldNames[k];
    if (!h5::exists(g.get(), kFieldNames[k]))
      throw std::runtime_error(path + ":/events: missing dataset '" + kFieldNames[k] + "'");
    if (h5::object_type(g.get(), kFieldNames[k], where) != H5O_TYPE_DATASET)
      throw std::runtime_error(where + ": not a dataset");
    d[k] = h5::Id(H5Dopen2(g.get(), kFieldNames[k], H5P_DEFAULT));
    h5::Id ftype(H5Dget_type(d[k].get()));
    if (!d[k].valid() || !ftype.valid()) throw std::runtime_error(where + ": cannot be opened");
    kind[k] = h5::numeric_kind(ftype.get(), where) == 'f' ? 'f' : 'i';
    const hsize_t len = one_d_length(d[k].get(), 8, where);
    if (k > 0 && len != n) throw std::runtime_error(path + ":/events: x, y, p, t differ in length");
    n = len;
  }
  std::vector<std::int64_t> col[4];
  std::vector<double> real;
  for (hsize_t start = 0; start < n; start += kBlock) {
    const hsize_t count = std::min(kBlock, n - start);
    for (int k = 0; k < 4; ++k) {
      const std::string where = path + ":/events/" + kFieldNames[k];
      col[k].resize(count);
      if (kind[k] == 'i') {
        read_hyperslab(d[k].get(), H5T_NATIVE_INT64, start, count, col[k].data(), where);
      } else {
        real.resize(count);
        read_hyperslab(d[k].get(), H5T_NATIVE_DOUBLE, start, count, real.data(), where);
        for (hsize_t i = 0; i < count; ++i)
          col[k][i] = checked_whole(real[i], path + ":/events", start + i, kFieldNames[k]);
      }
    }
    for (hsize_t i = 0; i < count; ++i) {
      const std::int64_t xypt[4] = {col[0][i], col[1][i], col[2][i], col[3][i]};
      emit(xypt, start + i);
    }
  }
}

// /events as a compound dataset: the members x, y, p, t into int64 or double slots by their
// class, read in blocks; emit(xypt, index) gets each event.
template <class Emit>
void read_compound_dataset(hid_t f, const std::string& path, const Emit& emit) {
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
    const int idx = H5Tget_member_index(ftype.get(), kFieldNames[k]);
    if (idx < 0)
      throw std::runtime_error(where + " has no field '" + kFieldNames[k] + "' (need x, y, p, t)");
    h5::Id mtype(H5Tget_member_type(ftype.get(), static_cast<unsigned>(idx)));
    if (!mtype.valid())
      throw std::runtime_error(where + ": field '" + kFieldNames[k] + "' unreadable");
    kind[k] = h5::numeric_kind(mtype.get(), where + ": field '" + kFieldNames[k] + "'") == 'f'
                  ? 'f'
                  : 'i';
    H5Tinsert(mem.get(), kFieldNames[k], HOFFSET(Rec, v) + k * sizeof(Slot),
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
                                 : checked_whole(recs[i].v[k].f, where, start + i, kFieldNames[k]);
      emit(xypt, start + i);
    }
  }
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
  if (type == H5O_TYPE_GROUP)
    read_column_group(f, path, emit);
  else if (type == H5O_TYPE_DATASET)
    read_compound_dataset(f, path, emit);
  else
    throw std::runtime_error(path + ":/events is neither a group nor a dataset");
  out.flush();
  return info;
}

}  // namespace

// Validated in a child process first (io/hdf5/hdf5.hpp): the child reads every event with a sink
// that drops them.
CameraFileInfo read_hdf5_events(const std::string& path, const CameraEventSink& sink) {
  h5::validate_in_child(
      path, [&] { (void)read_hdf5_events_contents(path, [](const CameraEvent*, std::size_t) {}); });
  return read_hdf5_events_contents(path, sink);
}

}  // namespace egret
