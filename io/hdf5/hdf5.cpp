// The thin RAII layer over libhdf5's C API (io/hdf5/hdf5.hpp): files, groups, attributes and
// datasets, read with bounds checked against the file. The validating child is
// io/hdf5/validating_child.cpp; the output files' file driver is io/hdf5/output_file.cpp.
#include "io/hdf5/hdf5.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>

#include "io/hdf5/hdf5_detail.hpp"

namespace egret::h5 {
namespace detail {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what);
}

Id check(hid_t id, const std::string& what) {
  if (id < 0) fail(what);
  return Id(id);
}

void check_status(herr_t status, const std::string& what) {
  if (status < 0) fail(what);
}

std::uint64_t file_size_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.st_size);
}

}  // namespace detail

using detail::check;
using detail::check_status;
using detail::fail;
using detail::file_size_of;

namespace {

std::string object_name(hid_t obj) {
  char buf[512];
  const ssize_t n = H5Iget_name(obj, buf, sizeof buf);
  return n > 0 ? std::string(buf) : std::string("?");
}

constexpr std::size_t kChunk = 65536;

// Dataset creation properties: chunks of `chunk` (rank 1 or 2), shuffled and deflated; without a
// chunk shape (an empty dataset) contiguous.
Id compressed_plist(int rank, const hsize_t* chunk) {
  Id plist = check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
  if (chunk) {
    check_status(H5Pset_chunk(plist.get(), rank, chunk), "H5Pset_chunk");
    check_status(H5Pset_fletcher32(plist.get()), "H5Pset_fletcher32");
    check_status(H5Pset_shuffle(plist.get()), "H5Pset_shuffle");
    check_status(H5Pset_deflate(plist.get(), 4), "H5Pset_deflate");
  }
  return plist;
}

template <class T>
void write_1d(hid_t parent, const std::string& name, const std::vector<T>& v, hid_t file_type,
              hid_t mem_type) {
  const hsize_t dims[1] = {static_cast<hsize_t>(v.size())};
  Id space = check(H5Screate_simple(1, dims, nullptr), "H5Screate_simple");
  const hsize_t chunk[1] = {static_cast<hsize_t>(std::min<std::size_t>(v.size(), kChunk))};
  Id plist = compressed_plist(1, v.empty() ? nullptr : chunk);
  Id dset = check(H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT, plist.get(),
                             H5P_DEFAULT),
                  "cannot create dataset " + object_name(parent) + "/" + name);
  if (!v.empty())
    check_status(H5Dwrite(dset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()),
                 "cannot write dataset " + name);
}

// Whole one-dimensional numeric datasets: `kind` 'f' reads floats (4 or 8 bytes), 'i' integers
// (signed or unsigned, converted without clamping: a value out of the target's range is an
// error).
template <class T>
std::vector<T> read_1d(hid_t parent, const std::string& name, const std::string& where,
                       hid_t mem_type, char kind, std::size_t max_rank = 1) {
  QuietErrors quiet;
  const std::string at = where + "/" + name;
  if (!exists(parent, name)) fail(where + ": missing dataset '" + name + "'");
  if (object_type(parent, name, at) != H5O_TYPE_DATASET) fail(at + ": not a dataset");
  Id dset = check(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), at + ": cannot open the dataset");
  Id type = check(H5Dget_type(dset.get()), at + ": no datatype");
  const char file_kind = numeric_kind(type.get(), at);
  if ((kind == 'f') != (file_kind == 'f'))
    fail(at + (kind == 'f' ? ": expected floating-point values" : ": expected integers"));
  const std::vector<hsize_t> dims = checked_extent(dset.get(), sizeof(T), at);
  if (dims.size() != 1 && max_rank == 1) fail(at + ": not one-dimensional");
  if (dims.empty() || dims.size() > max_rank)
    fail(at + ": expected 1 to " + std::to_string(max_rank) + " dimensions");
  std::size_t count = 1;  // checked_extent has bounded the product by the memory it needs
  for (const hsize_t d : dims) count *= static_cast<std::size_t>(d);
  std::vector<T> out(count);
  Id dxpl = strict_transfer_plist();
  if (!out.empty() && H5Dread(dset.get(), mem_type, H5S_ALL, H5S_ALL, dxpl.get(), out.data()) < 0)
    fail(at + ": cannot read the data (corrupt, failed checksum, or a value out of range)");
  return out;
}

// An attribute holding exactly one element (scalar or one-element simple dataspace): a read
// into one element's buffer cannot overflow it.
Id open_attribute(hid_t obj, const std::string& name, const std::string& where) {
  QuietErrors quiet;
  if (H5Aexists(obj, name.c_str()) <= 0) fail(where + ": missing attribute '" + name + "'");
  Id attr = check(H5Aopen(obj, name.c_str(), H5P_DEFAULT),
                  where + ": cannot open attribute '" + name + "'");
  Id space = check(H5Aget_space(attr.get()), where + ": attribute '" + name + "': no dataspace");
  const H5S_class_t cls = H5Sget_simple_extent_type(space.get());
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (!(cls == H5S_SCALAR || (cls == H5S_SIMPLE && n == 1)))
    fail(where + ": attribute '" + name + "' is not a single value");
  return attr;
}

std::uint64_t file_size_of(hid_t obj) {
  hsize_t size = 0;
  Id file(H5Iget_file_id(obj));
  if (!file.valid() || H5Fget_filesize(file.get(), &size) < 0) return 0;
  return size;
}

H5T_conv_ret_t refuse_lossy_conversion(H5T_conv_except_t, hid_t, hid_t, void*, void*, void*) {
  return H5T_CONV_ABORT;
}

}  // namespace

char numeric_kind(hid_t type, const std::string& where) {
  const H5T_class_t cls = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  if (cls == H5T_INTEGER) {
    if (size < 1 || size > 8)
      fail(where + ": integer type of " + std::to_string(size) + " bytes (at most 8 supported)");
    const H5T_sign_t sign = H5Tget_sign(type);
    if (sign == H5T_SGN_ERROR) fail(where + ": integer type without a sign convention");
    return sign == H5T_SGN_NONE ? 'u' : 'i';
  }
  if (cls == H5T_FLOAT) {
    if (size != 4 && size != 8)
      fail(where + ": floating-point type of " + std::to_string(size) +
           " bytes (4 or 8 supported)");
    return 'f';
  }
  fail(where + ": not a numeric type (integers of at most 8 bytes or 4/8-byte floats expected)");
}

namespace {

// The filters egret can bound: deflate (at most kMaxCompressionRatio), shuffle, Fletcher32.
std::uint64_t max_expansion(hid_t dcpl, const std::string& where) {
  const int n = H5Pget_nfilters(dcpl);
  if (n < 0) fail(where + ": cannot read the filter pipeline");
  std::uint64_t ratio = 1;
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0;
    std::size_t nvalues = 0;
    unsigned filter_config = 0;
    char name[64] = {0};
    const H5Z_filter_t id = H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &nvalues,
                                           nullptr, sizeof name, name, &filter_config);
    if (id == H5Z_FILTER_DEFLATE)
      ratio = kMaxCompressionRatio;
    else if (id != H5Z_FILTER_SHUFFLE && id != H5Z_FILTER_FLETCHER32)
      fail(where + ": unsupported HDF5 filter " + std::to_string(id) +
           " (egret reads deflate, shuffle and fletcher32 only)");
  }
  return ratio;
}

}  // namespace

std::vector<hsize_t> checked_extent(hid_t dset, std::size_t mem_element_size,
                                    const std::string& where) {
  QuietErrors quiet;
  Id space = check(H5Dget_space(dset), where + ": no dataspace");
  const H5S_class_t cls = H5Sget_simple_extent_type(space.get());
  if (cls != H5S_SIMPLE && cls != H5S_SCALAR) fail(where + ": empty or unknown dataspace");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > 8) fail(where + ": unsupported rank");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
    fail(where + ": cannot read the dimensions");
  Id type = check(H5Dget_type(dset), where + ": no datatype");
  const std::size_t file_element = H5Tget_size(type.get());
  if (file_element == 0) fail(where + ": datatype of size 0");
  std::uint64_t count = 1, file_bytes = 0, mem_bytes = 0;
  for (hsize_t d : dims)
    if (__builtin_mul_overflow(count, d, &count)) fail(where + ": the dimensions overflow 64 bits");
  if (__builtin_mul_overflow(count, file_element, &file_bytes) ||
      __builtin_mul_overflow(count, mem_element_size, &mem_bytes) || mem_bytes > SIZE_MAX / 2)
    fail(where + ": " + std::to_string(count) + " elements do not fit in memory");
  if (count == 0) return dims;
  const std::uint64_t file_size = file_size_of(dset);
  Id dcpl = check(H5Dget_create_plist(dset), where + ": no creation properties");
  const std::string claim = where + ": the dimensions claim " + std::to_string(count) +
                            " elements (" + std::to_string(file_bytes) + " bytes)";
  switch (H5Pget_layout(dcpl.get())) {
    case H5D_CONTIGUOUS: {
      if (H5Pget_nfilters(dcpl.get()) != 0) fail(where + ": filters on a contiguous dataset");
      const haddr_t offset = H5Dget_offset(dset);
      std::uint64_t end = 0;
      if (offset == HADDR_UNDEF) fail(claim + " but no data is stored");
      if (__builtin_add_overflow(static_cast<std::uint64_t>(offset), file_bytes, &end) ||
          end > file_size)
        fail(claim + " beyond the end of the " + std::to_string(file_size) + "-byte file");
      break;
    }
    case H5D_COMPACT:
      if (file_bytes > 65536) fail(claim + ", more than a compact dataset holds");
      break;
    case H5D_CHUNKED: {
      const std::uint64_t ratio = max_expansion(dcpl.get(), where);
      std::vector<hsize_t> chunk(dims.size());
      if (H5Pget_chunk(dcpl.get(), rank, chunk.data()) != rank)
        fail(where + ": cannot read the chunk shape");
      std::uint64_t chunk_bytes = file_element;
      for (hsize_t c : chunk)
        if (c == 0 || __builtin_mul_overflow(chunk_bytes, c, &chunk_bytes) ||
            chunk_bytes > kMaxChunkBytes)
          fail(where + ": chunks larger than " + std::to_string(kMaxChunkBytes >> 20) +
               " MiB or empty");
      const std::uint64_t stored = H5Dget_storage_size(dset);
      if (stored > file_size)
        fail(where + ": " + std::to_string(stored) + " stored bytes in a " +
             std::to_string(file_size) + "-byte file");
      std::uint64_t bound = 0;
      if (__builtin_mul_overflow(stored, ratio, &bound)) bound = UINT64_MAX;
      if (file_bytes > bound)
        fail(claim + " but the file stores " + std::to_string(stored) + " bytes for it (at most " +
             std::to_string(ratio) + "x expansion)");
      break;
    }
    default:
      fail(where + ": unsupported storage layout");
  }
  return dims;
}

Id strict_transfer_plist() {
  Id dxpl = check(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate");
  check_status(H5Pset_type_conv_cb(dxpl.get(), refuse_lossy_conversion, nullptr),
               "H5Pset_type_conv_cb");
  return dxpl;
}

namespace {}  // namespace

void Id::reset() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE:
      H5Fclose(id_);
      break;
    case H5I_GROUP:
      H5Gclose(id_);
      break;
    case H5I_DATASET:
      H5Dclose(id_);
      break;
    case H5I_DATASPACE:
      H5Sclose(id_);
      break;
    case H5I_DATATYPE:
      H5Tclose(id_);
      break;
    case H5I_ATTR:
      H5Aclose(id_);
      break;
    case H5I_GENPROP_LST:
      H5Pclose(id_);
      break;
    default:
      break;
  }
  id_ = H5I_INVALID_HID;
}

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}
QuietErrors::~QuietErrors() {
  H5Eset_auto2(H5E_DEFAULT, func_, data_);
}

Id open_file_read(const std::string& path) {
  QuietErrors quiet;
  const htri_t is_h5 = H5Fis_hdf5(path.c_str());
  if (is_h5 < 0) fail(path + ": cannot open (missing or unreadable)");
  if (is_h5 == 0) fail(path + ": not an HDF5 file");
  return check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT),
               path + ": cannot open HDF5 file (corrupt?)");
}

Id open_file_write(const std::string& path) {
  QuietErrors quiet;
  if (H5Fis_hdf5(path.c_str()) <= 0) fail(path + ": not an HDF5 file");
  return check(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT),
               path + ": cannot open HDF5 file for writing");
}

void remove_link(hid_t parent, const std::string& name, const std::string& file) {
  if (H5Ldelete(parent, name.c_str(), H5P_DEFAULT) < 0) fail(file + ": cannot remove " + name);
}

void flush_file(hid_t file, const std::string& path) {
  if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0) fail(path + ": cannot flush (disk full?)");
}

Id create_group(hid_t parent, const std::string& name) {
  return check(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
               "cannot create group " + name);
}

Id open_group(hid_t parent, const std::string& name, const std::string& file) {
  QuietErrors quiet;
  if (!exists(parent, name)) fail(file + ": missing group '" + name + "'");
  const std::string where =
      file + ":" + object_name(parent) + (object_name(parent) == "/" ? "" : "/") + name;
  if (object_type(parent, name, where) != H5O_TYPE_GROUP) fail(where + ": not a group");
  return check(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), where + ": cannot open the group");
}

H5O_type_t object_type(hid_t parent, const std::string& name, const std::string& where) {
  QuietErrors quiet;
  // Every link on the way must be hard or soft: external links would open other files.
  std::string path;
  for (std::size_t start = 0; start <= name.size();) {
    const std::size_t slash = name.find('/', start);
    const std::string part =
        name.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!part.empty()) {
      path += (path.empty() ? "" : "/") + part;
      H5L_info_t link{};
      if (H5Lexists(parent, path.c_str(), H5P_DEFAULT) <= 0 ||
          H5Lget_info(parent, path.c_str(), &link, H5P_DEFAULT) < 0)
        fail(where + ": missing");
      if (link.type != H5L_TYPE_HARD && link.type != H5L_TYPE_SOFT)
        fail(where +
             ": an external or user-defined link (egret follows only links inside the "
             "file)");
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (H5Oexists_by_name(parent, name.c_str(), H5P_DEFAULT) <= 0)
    fail(where + ": a dangling link (its target does not exist)");
  H5O_info_t info{};
#if H5_VERSION_GE(1, 12, 0)
  if (H5Oget_info_by_name3(parent, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
#else
  if (H5Oget_info_by_name2(parent, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
#endif
    fail(where + ": cannot read the object's header");
  return info.type;
}

bool exists(hid_t parent, const std::string& name) {
  QuietErrors quiet;
  // Check each path component (H5Lexists fails on a missing intermediate group).
  std::string path;
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t slash = name.find('/', start);
    const std::string part =
        name.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!part.empty()) {
      path += (path.empty() ? "" : "/") + part;
      if (H5Lexists(parent, path.c_str(), H5P_DEFAULT) <= 0) return false;
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return true;
}

// Strings are variable-length UTF-8, the form h5py and libsonata read as text.
void write_attribute(hid_t obj, const std::string& name, const std::string& value) {
  Id type = check(H5Tcopy(H5T_C_S1), "H5Tcopy");
  check_status(H5Tset_size(type.get(), H5T_VARIABLE), "H5Tset_size");
  check_status(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset");
  Id space = check(H5Screate(H5S_SCALAR), "H5Screate");
  Id attr = check(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                  "cannot create attribute " + name);
  const char* data = value.c_str();
  check_status(H5Awrite(attr.get(), type.get(), &data), "cannot write attribute " + name);
}

void write_attribute(hid_t obj, const std::string& name, double value) {
  Id space = check(H5Screate(H5S_SCALAR), "H5Screate");
  Id attr =
      check(H5Acreate2(obj, name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
            "cannot create attribute " + name);
  check_status(H5Awrite(attr.get(), H5T_NATIVE_DOUBLE, &value), "cannot write attribute " + name);
}

void write_attribute(hid_t obj, const std::string& name, std::int64_t value) {
  Id space = check(H5Screate(H5S_SCALAR), "H5Screate");
  Id attr =
      check(H5Acreate2(obj, name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
            "cannot create attribute " + name);
  check_status(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value), "cannot write attribute " + name);
}

void write_attribute(hid_t obj, const std::string& name, const std::vector<std::uint32_t>& value) {
  const hsize_t dims[1] = {static_cast<hsize_t>(value.size())};
  Id space = check(H5Screate_simple(1, dims, nullptr), "H5Screate_simple");
  Id attr =
      check(H5Acreate2(obj, name.c_str(), H5T_STD_U32LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
            "cannot create attribute " + name);
  check_status(H5Awrite(attr.get(), H5T_NATIVE_UINT32, value.data()),
               "cannot write attribute " + name);
}

// A failed lookup (damaged attribute storage) is an error, not a missing attribute.
bool has_attribute(hid_t obj, const std::string& name) {
  QuietErrors quiet;
  const htri_t found = H5Aexists(obj, name.c_str());
  if (found < 0) {
    char file[4096] = "?";
    H5Fget_name(obj, file, sizeof file);
    fail(std::string(file) + ":" + object_name(obj) + ": cannot look up attribute '" + name +
         "' (the attribute storage is damaged)");
  }
  return found > 0;
}

void write_fixed_string_attribute(hid_t obj, const std::string& name, const std::string& value) {
  Id type = check(H5Tcopy(H5T_C_S1), "H5Tcopy");
  check_status(H5Tset_size(type.get(), std::max<std::size_t>(1, value.size())), "H5Tset_size");
  check_status(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
  Id space = check(H5Screate(H5S_SCALAR), "H5Screate");
  Id attr = check(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                  "cannot create attribute " + name);
  std::string padded = value;
  padded.resize(std::max<std::size_t>(1, value.size()), '\0');
  check_status(H5Awrite(attr.get(), type.get(), padded.data()), "cannot write attribute " + name);
}

// Fixed-length strings are read with one bounded read (the size is checked against the file);
// variable-length ones (the form h5py and SONATA use for text) through libhdf5, which the
// validating child has already survived on this file.
std::string read_string_attribute(hid_t obj, const std::string& name, const std::string& where) {
  Id attr = open_attribute(obj, name, where);
  const std::string at = where + ": attribute '" + name + "'";
  Id type = check(H5Aget_type(attr.get()), at + ": no type");
  if (H5Tget_class(type.get()) != H5T_STRING) fail(at + " is not a string");
  QuietErrors quiet;
  if (H5Tis_variable_str(type.get()) > 0) {
    Id mem = check(H5Tcopy(H5T_C_S1), "H5Tcopy");
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    char* s = nullptr;
    check_status(H5Aread(attr.get(), mem.get(), &s), at + ": cannot read it (corrupt)");
    std::string out = s ? s : "";
    H5free_memory(s);
    if (out.size() > file_size_of(obj)) fail(at + ": longer than the file");
    return out;
  }
  const std::size_t size = H5Tget_size(type.get());
  if (size == 0 || size > file_size_of(obj)) fail(at + ": string size larger than the file");
  std::string buf(size, '\0');
  check_status(H5Aread(attr.get(), type.get(), buf.data()), at + ": cannot read it (corrupt)");
  const auto end = buf.find('\0');
  return end == std::string::npos ? buf : buf.substr(0, end);
}

double read_double_attribute(hid_t obj, const std::string& name, const std::string& where) {
  Id attr = open_attribute(obj, name, where);
  Id type = check(H5Aget_type(attr.get()), where + ": attribute '" + name + "': no type");
  if (numeric_kind(type.get(), where + ": attribute '" + name + "'") != 'f')
    fail(where + ": attribute '" + name + "' is not a floating-point number");
  double v = 0;
  QuietErrors quiet;
  check_status(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &v),
               where + ": cannot read attribute '" + name + "'");
  return v;
}

// Read in the attribute's own signedness (libhdf5 would clamp a uint64 above INT64_MAX).
std::int64_t read_int_attribute(hid_t obj, const std::string& name, const std::string& where) {
  Id attr = open_attribute(obj, name, where);
  const std::string at = where + ": attribute '" + name + "'";
  Id type = check(H5Aget_type(attr.get()), at + ": no type");
  const char kind = numeric_kind(type.get(), at);
  if (kind == 'f') fail(at + " is not an integer");
  QuietErrors quiet;
  if (kind == 'u') {
    std::uint64_t u = 0;
    check_status(H5Aread(attr.get(), H5T_NATIVE_UINT64, &u), at + ": cannot read it");
    if (u > static_cast<std::uint64_t>(INT64_MAX)) fail(at + ": value out of range");
    return static_cast<std::int64_t>(u);
  }
  std::int64_t v = 0;
  check_status(H5Aread(attr.get(), H5T_NATIVE_INT64, &v), at + ": cannot read it");
  return v;
}

void write_vector(hid_t parent, const std::string& name, const std::vector<double>& v) {
  write_1d(parent, name, v, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
}
void write_vector(hid_t parent, const std::string& name, const std::vector<std::uint64_t>& v) {
  write_1d(parent, name, v, H5T_STD_U64LE, H5T_NATIVE_UINT64);
}
void write_vector(hid_t parent, const std::string& name, const std::vector<std::int64_t>& v) {
  write_1d(parent, name, v, H5T_STD_I64LE, H5T_NATIVE_INT64);
}

void write_matrix(hid_t parent, const std::string& name, const std::vector<double>& data,
                  std::size_t rows, std::size_t cols) {
  if (data.size() != rows * cols) fail("write_matrix: " + name + ": size mismatch");
  const hsize_t dims[2] = {static_cast<hsize_t>(rows), static_cast<hsize_t>(cols)};
  Id space = check(H5Screate_simple(2, dims, nullptr), "H5Screate_simple");
  const hsize_t chunk[2] = {static_cast<hsize_t>(std::min<std::size_t>(rows, 256)),
                            static_cast<hsize_t>(std::min<std::size_t>(cols, 4096))};
  Id plist = compressed_plist(2, rows > 0 && cols > 0 ? chunk : nullptr);
  Id dset = check(H5Dcreate2(parent, name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT,
                             plist.get(), H5P_DEFAULT),
                  "cannot create dataset " + name);
  if (!data.empty())
    check_status(
        H5Dwrite(dset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()),
        "cannot write dataset " + name);
}

std::vector<double> read_doubles(hid_t parent, const std::string& name, const std::string& where) {
  return read_1d<double>(parent, name, where, H5T_NATIVE_DOUBLE, 'f');
}
std::vector<double> read_double_array(hid_t parent, const std::string& name,
                                      const std::string& where) {
  return read_1d<double>(parent, name, where, H5T_NATIVE_DOUBLE, 'f', 2);
}
std::vector<std::uint64_t> read_uint64s(hid_t parent, const std::string& name,
                                        const std::string& where) {
  return read_1d<std::uint64_t>(parent, name, where, H5T_NATIVE_UINT64, 'i');
}
std::vector<std::int64_t> read_int64s(hid_t parent, const std::string& name,
                                      const std::string& where) {
  return read_1d<std::int64_t>(parent, name, where, H5T_NATIVE_INT64, 'i');
}

namespace {

// The dataset `name` of `parent`, which must exist and be a dataset.
Id open_dataset(hid_t parent, const std::string& name, const std::string& at,
                const std::string& where) {
  if (!exists(parent, name)) fail(where + ": missing dataset '" + name + "'");
  if (object_type(parent, name, at) != H5O_TYPE_DATASET) fail(at + ": not a dataset");
  return check(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), at + ": cannot open the dataset");
}

std::size_t element_count(const std::vector<hsize_t>& dims) {
  std::size_t count = 1;  // checked_extent has bounded the product by the memory it needs
  for (const hsize_t d : dims) count *= static_cast<std::size_t>(d);
  return count;
}

// A string of at most max_length bytes, cut at its first NUL and without fixed-length padding.
std::string bounded_string(const char* s, std::size_t size, std::size_t max_length,
                           const std::string& at) {
  const char* end = static_cast<const char*>(std::memchr(s, '\0', size));
  std::size_t n = end ? static_cast<std::size_t>(end - s) : size;
  while (n > 0 && s[n - 1] == ' ') --n;
  if (n > max_length) fail(at + ": a string longer than " + std::to_string(max_length) + " bytes");
  return std::string(s, n);
}

}  // namespace

NumericArray read_numeric_array(hid_t parent, const std::string& name, const std::string& where) {
  QuietErrors quiet;
  const std::string at = where + "/" + name;
  Id dset = open_dataset(parent, name, at, where);
  Id type = check(H5Dget_type(dset.get()), at + ": no datatype");
  NumericArray out;
  out.kind = numeric_kind(type.get(), at);
  out.dims = checked_extent(dset.get(), sizeof(double), at);
  const std::size_t count = element_count(out.dims);
  out.values.resize(count);
  Id dxpl = strict_transfer_plist();
  const char* corrupt = ": cannot read the data (corrupt, or a failed checksum)";
  if (count == 0) return out;
  if (out.kind == 'f') {
    if (H5Dread(dset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, dxpl.get(), out.values.data()) < 0)
      fail(at + corrupt);
    return out;
  }
  // Integers in their own signedness (libhdf5's integer-to-float conversion refuses some
  // values under the strict transfer list), then to double only where exact.
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (out.kind == 'u') {
    std::vector<std::uint64_t> u(count);
    if (H5Dread(dset.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, dxpl.get(), u.data()) < 0)
      fail(at + corrupt);
    for (std::size_t i = 0; i < count; ++i) {
      if (static_cast<double>(u[i]) > kExact)
        fail(at + ": an integer a double cannot hold exactly");
      out.values[i] = static_cast<double>(u[i]);
    }
    return out;
  }
  std::vector<std::int64_t> v(count);
  if (H5Dread(dset.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, dxpl.get(), v.data()) < 0)
    fail(at + corrupt);
  for (std::size_t i = 0; i < count; ++i) {
    if (std::fabs(static_cast<double>(v[i])) > kExact)
      fail(at + ": an integer a double cannot hold exactly");
    out.values[i] = static_cast<double>(v[i]);
  }
  return out;
}

StringArray read_string_array(hid_t parent, const std::string& name, const std::string& where,
                              std::size_t max_length) {
  QuietErrors quiet;
  const std::string at = where + "/" + name;
  Id dset = open_dataset(parent, name, at, where);
  Id type = check(H5Dget_type(dset.get()), at + ": no datatype");
  if (H5Tget_class(type.get()) != H5T_STRING) fail(at + ": not a string dataset");
  StringArray out;
  if (H5Tis_variable_str(type.get()) > 0) {
    // The heap references are read through libhdf5, which the validating child has survived.
    out.dims = checked_extent(dset.get(), sizeof(char*), at);
    std::vector<char*> ptrs(element_count(out.dims), nullptr);
    Id mem = check(H5Tcopy(H5T_C_S1), "H5Tcopy");
    check_status(H5Tset_size(mem.get(), H5T_VARIABLE), "H5Tset_size");
    check_status(H5Tset_cset(mem.get(), H5Tget_cset(type.get())), "H5Tset_cset");
    if (!ptrs.empty() &&
        H5Dread(dset.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0)
      fail(at + ": cannot read the strings (corrupt)");
    std::string error;
    for (char* p : ptrs) {
      if (!error.empty()) break;
      try {
        const std::size_t n = p ? strnlen(p, max_length + 1) : 0;  // stops at the NUL
        if (n > max_length)
          fail(at + ": a string longer than " + std::to_string(max_length) + " bytes");
        out.values.push_back(std::string(p ? p : "", n));
      } catch (const std::runtime_error& e) {
        error = e.what();
      }
    }
    Id space = check(H5Dget_space(dset.get()), at + ": no dataspace");
    if (!ptrs.empty()) H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, ptrs.data());
    if (!error.empty()) fail(error);
    return out;
  }
  const std::size_t size = H5Tget_size(type.get());
  if (size == 0 || size > max_length + 1)
    fail(at + ": fixed-length strings of " + std::to_string(size) + " bytes (at most " +
         std::to_string(max_length) + ")");
  out.dims = checked_extent(dset.get(), size, at);
  const std::size_t count = element_count(out.dims);
  std::string buf(count * size, '\0');
  Id mem = check(H5Tcopy(H5T_C_S1), "H5Tcopy");
  check_status(H5Tset_size(mem.get(), size), "H5Tset_size");
  check_status(H5Tset_strpad(mem.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
  if (count > 0 && H5Dread(dset.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0)
    fail(at + ": cannot read the strings (corrupt)");
  for (std::size_t i = 0; i < count; ++i)
    out.values.push_back(bounded_string(buf.data() + i * size, size, max_length, at));
  return out;
}

std::vector<std::string> group_members(hid_t group, const std::string& where,
                                       std::size_t max_members) {
  QuietErrors quiet;
  H5G_info_t info{};
  check_status(H5Gget_info(group, &info), where + ": cannot read the group's links");
  if (info.nlinks > max_members)
    fail(where + ": " + std::to_string(info.nlinks) + " members (at most " +
         std::to_string(max_members) + ")");
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t n =
        H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (n < 0 || n > 4096) fail(where + ": cannot read the name of member " + std::to_string(i));
    std::string name(static_cast<std::size_t>(n) + 1, '\0');
    if (H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(),
                           H5P_DEFAULT) != n)
      fail(where + ": cannot read the name of member " + std::to_string(i));
    name.resize(static_cast<std::size_t>(n));
    names.push_back(name);
  }
  return names;
}

namespace {

template <class T>
void write_nd(hid_t parent, const std::string& name, const std::vector<hsize_t>& dims,
              const std::vector<T>& values, hid_t file_type, hid_t mem_type) {
  std::size_t count = 1;
  for (const hsize_t d : dims) count *= static_cast<std::size_t>(d);
  if (count != values.size()) fail("write_array: " + name + ": size mismatch");
  Id space = dims.empty()
                 ? check(H5Screate(H5S_SCALAR), "H5Screate")
                 : check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                         "H5Screate_simple");
  Id dset = check(H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT),
                  "cannot create dataset " + object_name(parent) + "/" + name);
  if (count > 0)
    check_status(H5Dwrite(dset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
                 "cannot write dataset " + name);
}

Id utf8_vlen_string_type() {
  Id type = check(H5Tcopy(H5T_C_S1), "H5Tcopy");
  check_status(H5Tset_size(type.get(), H5T_VARIABLE), "H5Tset_size");
  check_status(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset");
  return type;
}

}  // namespace

void write_array(hid_t parent, const std::string& name, const std::vector<hsize_t>& dims,
                 const std::vector<double>& values) {
  write_nd(parent, name, dims, values, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
}

void write_int_array(hid_t parent, const std::string& name, const std::vector<hsize_t>& dims,
                     const std::vector<std::int64_t>& values) {
  write_nd(parent, name, dims, values, H5T_STD_I64LE, H5T_NATIVE_INT64);
}

void write_string(hid_t parent, const std::string& name, const std::string& value) {
  write_string_table(parent, name, {}, {value});
}

void write_string_table(hid_t parent, const std::string& name, const std::vector<hsize_t>& dims,
                        const std::vector<std::string>& values) {
  std::vector<const char*> ptrs;
  for (const auto& v : values) ptrs.push_back(v.c_str());
  Id type = utf8_vlen_string_type();
  write_nd(parent, name, dims, ptrs, type.get(), type.get());
}

AppendableDataset::AppendableDataset(hid_t parent, const std::string& name, hid_t mem_type,
                                     std::size_t chunk)
    : mem_type_(mem_type) {
  const hsize_t dims[1] = {0}, maxdims[1] = {H5S_UNLIMITED};
  Id space = check(H5Screate_simple(1, dims, maxdims), "H5Screate_simple");
  const hsize_t c[1] = {static_cast<hsize_t>(chunk)};
  Id plist = compressed_plist(1, c);
  hid_t file_type = mem_type == H5T_NATIVE_DOUBLE   ? H5T_IEEE_F64LE
                    : mem_type == H5T_NATIVE_UINT64 ? H5T_STD_U64LE
                                                    : H5T_STD_I64LE;
  dset_ = check(H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT, plist.get(),
                           H5P_DEFAULT),
                "cannot create dataset " + name);
}

void AppendableDataset::append(const void* data, std::size_t n) {
  if (n == 0) return;
  const hsize_t new_size[1] = {static_cast<hsize_t>(size_ + n)};
  check_status(H5Dset_extent(dset_.get(), new_size), "cannot extend dataset");
  Id file_space = check(H5Dget_space(dset_.get()), "H5Dget_space");
  const hsize_t start[1] = {static_cast<hsize_t>(size_)}, count[1] = {static_cast<hsize_t>(n)};
  check_status(
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
      "H5Sselect_hyperslab");
  Id mem_space = check(H5Screate_simple(1, count, nullptr), "H5Screate_simple");
  check_status(
      H5Dwrite(dset_.get(), mem_type_, mem_space.get(), file_space.get(), H5P_DEFAULT, data),
      "cannot append to dataset");
  size_ += n;
}

}  // namespace egret::h5
