#include "io/hdf5.hpp"

#include <stdexcept>

namespace egret::h5 {
namespace {

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

template <class T>
std::vector<T> read_1d(hid_t parent, const std::string& name, const std::string& where,
                       hid_t mem_type) {
  QuietErrors quiet;
  if (!exists(parent, name)) fail(where + ": missing dataset '" + name + "'");
  Id dset = check(H5Dopen2(parent, name.c_str(), H5P_DEFAULT),
                  where + ": cannot open dataset '" + name + "'");
  Id space = check(H5Dget_space(dset.get()), where + ": " + name + ": no dataspace");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank != 1) fail(where + ": dataset '" + name + "' is not one-dimensional");
  hsize_t dims[1] = {0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  std::vector<T> out(static_cast<std::size_t>(dims[0]));
  if (!out.empty())
    check_status(H5Dread(dset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()),
                 where + ": cannot read dataset '" + name + "' (corrupt or wrong type)");
  return out;
}

Id open_attribute(hid_t obj, const std::string& name, const std::string& where) {
  QuietErrors quiet;
  if (H5Aexists(obj, name.c_str()) <= 0) fail(where + ": missing attribute '" + name + "'");
  return check(H5Aopen(obj, name.c_str(), H5P_DEFAULT),
               where + ": cannot open attribute '" + name + "'");
}

}  // namespace

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

Id create_file(const std::string& path) {
  QuietErrors quiet;
  return check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
               path + ": cannot create HDF5 file");
}

Id open_file_read(const std::string& path) {
  QuietErrors quiet;
  const htri_t is_h5 = H5Fis_hdf5(path.c_str());
  if (is_h5 < 0) fail(path + ": cannot open (missing or unreadable)");
  if (is_h5 == 0) fail(path + ": not an HDF5 file");
  return check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT),
               path + ": cannot open HDF5 file (corrupt?)");
}

Id create_group(hid_t parent, const std::string& name) {
  return check(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
               "cannot create group " + name);
}

Id open_group(hid_t parent, const std::string& name, const std::string& file) {
  QuietErrors quiet;
  if (!exists(parent, name)) fail(file + ": missing group '" + name + "'");
  return check(H5Gopen2(parent, name.c_str(), H5P_DEFAULT),
               file + ": cannot open group '" + name + "'");
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

bool has_attribute(hid_t obj, const std::string& name) {
  QuietErrors quiet;
  return H5Aexists(obj, name.c_str()) > 0;
}

std::string read_string_attribute(hid_t obj, const std::string& name, const std::string& where) {
  Id attr = open_attribute(obj, name, where);
  Id type = check(H5Aget_type(attr.get()), where + ": " + name + ": no type");
  if (H5Tget_class(type.get()) != H5T_STRING)
    fail(where + ": attribute '" + name + "' is not a string");
  if (H5Tis_variable_str(type.get()) > 0) {
    Id mem = check(H5Tcopy(H5T_C_S1), "H5Tcopy");
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    char* s = nullptr;
    QuietErrors quiet;
    check_status(H5Aread(attr.get(), mem.get(), &s), where + ": cannot read attribute " + name);
    std::string out = s ? s : "";
    H5free_memory(s);
    return out;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::string buf(size, '\0');
  QuietErrors quiet;
  check_status(H5Aread(attr.get(), type.get(), buf.data()),
               where + ": cannot read attribute " + name);
  const auto end = buf.find('\0');
  return end == std::string::npos ? buf : buf.substr(0, end);
}

double read_double_attribute(hid_t obj, const std::string& name, const std::string& where) {
  Id attr = open_attribute(obj, name, where);
  double v = 0;
  check_status(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &v),
               where + ": cannot read attribute " + name);
  return v;
}

std::int64_t read_int_attribute(hid_t obj, const std::string& name, const std::string& where) {
  Id attr = open_attribute(obj, name, where);
  std::int64_t v = 0;
  check_status(H5Aread(attr.get(), H5T_NATIVE_INT64, &v),
               where + ": cannot read attribute " + name);
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
  return read_1d<double>(parent, name, where, H5T_NATIVE_DOUBLE);
}
std::vector<std::uint64_t> read_uint64s(hid_t parent, const std::string& name,
                                        const std::string& where) {
  return read_1d<std::uint64_t>(parent, name, where, H5T_NATIVE_UINT64);
}
std::vector<std::int64_t> read_int64s(hid_t parent, const std::string& name,
                                      const std::string& where) {
  return read_1d<std::int64_t>(parent, name, where, H5T_NATIVE_INT64);
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
