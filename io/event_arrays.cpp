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

CameraFileInfo read_hdf5_events(const std::string& path, const CameraEventSink& sink) {
  h5::Id file = h5::open_file_read(path);
  const hid_t f = file.get();
  CameraFileInfo info;
  info.format = "hdf5";
  if (!h5::exists(f, "events")) throw std::runtime_error(path + ": no 'events' dataset or group");
  H5O_info_t oinfo;
  h5::QuietErrors quiet;
#if H5_VERSION_GE(1, 12, 0)
  H5Oget_info_by_name3(f, "events", &oinfo, H5O_INFO_BASIC, H5P_DEFAULT);
#else
  H5Oget_info_by_name(f, "events", &oinfo, H5P_DEFAULT);
#endif
  // Read in blocks of at most kBlock events (hyperslabs), so memory stays bounded.
  constexpr hsize_t kBlock = 1 << 16;
  auto one_d_length = [&](hid_t dset, const std::string& name) {
    h5::Id space(H5Dget_space(dset));
    if (H5Sget_simple_extent_ndims(space.get()) != 1)
      throw std::runtime_error(path + ":/events/" + name + " is not one-dimensional");
    hsize_t n = 0;
    H5Sget_simple_extent_dims(space.get(), &n, nullptr);
    return n;
  };
  auto read_block = [&](hid_t dset, hid_t mem_type, hsize_t start, hsize_t count, void* out,
                        const std::string& name) {
    h5::Id fspace(H5Dget_space(dset));
    H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, &start, nullptr, &count, nullptr);
    h5::Id mspace(H5Screate_simple(1, &count, nullptr));
    if (H5Dread(dset, mem_type, mspace.get(), fspace.get(), H5P_DEFAULT, out) < 0)
      throw std::runtime_error(path + ":/events" + name + " cannot be read as integers");
  };
  detail::EventBatcher out(sink, info);
  std::int64_t last_t = INT64_MIN;
  auto emit = [&](std::int64_t x, std::int64_t y, std::int64_t p, std::int64_t t, hsize_t i) {
    out.push(make_event(x, y, p, t, last_t, [&](const std::string& what) {
      throw std::runtime_error(path + ":/events: event " + std::to_string(i) + ": " + what);
    }));
  };
  if (oinfo.type == H5O_TYPE_GROUP) {
    h5::Id g = h5::open_group(f, "events", path);
    h5::Id d[4];
    hsize_t n = 0;
    const char* names[4] = {"x", "y", "p", "t"};
    for (int k = 0; k < 4; ++k) {
      if (!h5::exists(g.get(), names[k]))
        throw std::runtime_error(path + ":/events: missing dataset '" + names[k] + "'");
      d[k] = h5::Id(H5Dopen2(g.get(), names[k], H5P_DEFAULT));
      const hsize_t len = one_d_length(d[k].get(), names[k]);
      if (k > 0 && len != n)
        throw std::runtime_error(path + ":/events: x, y, p, t differ in length");
      n = len;
    }
    std::vector<std::int64_t> col[4];
    for (hsize_t start = 0; start < n; start += kBlock) {
      const hsize_t count = std::min(kBlock, n - start);
      for (int k = 0; k < 4; ++k) {
        col[k].resize(count);
        read_block(d[k].get(), H5T_NATIVE_INT64, start, count, col[k].data(),
                   std::string("/") + names[k]);
      }
      for (hsize_t i = 0; i < count; ++i)
        emit(col[0][i], col[1][i], col[2][i], col[3][i], start + i);
    }
  } else {
    // A compound dataset: HDF5 converts the members named x, y, p, t to int64.
    h5::Id dset(H5Dopen2(f, "events", H5P_DEFAULT));
    h5::Id ftype(H5Dget_type(dset.get()));
    if (H5Tget_class(ftype.get()) != H5T_COMPOUND)
      throw std::runtime_error(path + ":/events is neither a group nor a compound dataset");
    for (const char* name : {"x", "y", "p", "t"})
      if (H5Tget_member_index(ftype.get(), name) < 0)
        throw std::runtime_error(path + ":/events has no field '" + name + "' (need x, y, p, t)");
    const hsize_t n = one_d_length(dset.get(), "");
    struct Rec {
      std::int64_t x, y, p, t;
    };
    h5::Id mem(H5Tcreate(H5T_COMPOUND, sizeof(Rec)));
    H5Tinsert(mem.get(), "x", HOFFSET(Rec, x), H5T_NATIVE_INT64);
    H5Tinsert(mem.get(), "y", HOFFSET(Rec, y), H5T_NATIVE_INT64);
    H5Tinsert(mem.get(), "p", HOFFSET(Rec, p), H5T_NATIVE_INT64);
    H5Tinsert(mem.get(), "t", HOFFSET(Rec, t), H5T_NATIVE_INT64);
    std::vector<Rec> recs;
    for (hsize_t start = 0; start < n; start += kBlock) {
      const hsize_t count = std::min(kBlock, n - start);
      recs.resize(count);
      read_block(dset.get(), mem.get(), start, count, recs.data(), "");
      for (hsize_t i = 0; i < count; ++i)
        emit(recs[i].x, recs[i].y, recs[i].p, recs[i].t, start + i);
    }
  }
  out.flush();
  return info;
}

}  // namespace egret
