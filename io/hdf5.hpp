// A thin RAII layer over the HDF5 C API (HighFive is not packaged for Debian bookworm): owned
// identifiers that close themselves, and the few operations egret's files need. Every failure
// throws std::runtime_error naming the file and the object.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace egret::h5 {

// An owned HDF5 identifier (file, group, dataset, dataspace, datatype, property list, attribute).
class Id {
 public:
  Id() = default;
  explicit Id(hid_t id) : id_(id) {}
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  Id(Id&& o) noexcept : id_(o.id_) { o.id_ = H5I_INVALID_HID; }
  Id& operator=(Id&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      o.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  ~Id() { reset(); }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset();

 private:
  hid_t id_ = H5I_INVALID_HID;
};

// Silences HDF5's own error printing for the lifetime of the object (egret reports errors
// itself, with the file and object names).
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

Id create_file(const std::string& path);  // truncates
Id open_file_read(const std::string& path);
Id create_group(hid_t parent, const std::string& name);
Id open_group(hid_t parent, const std::string& name, const std::string& file);
bool exists(hid_t parent, const std::string& name);

// Attributes.
void write_attribute(hid_t obj, const std::string& name, const std::string& value);
void write_attribute(hid_t obj, const std::string& name, double value);
void write_attribute(hid_t obj, const std::string& name, std::int64_t value);
void write_attribute(hid_t obj, const std::string& name, const std::vector<std::uint32_t>& value);
bool has_attribute(hid_t obj, const std::string& name);
std::string read_string_attribute(hid_t obj, const std::string& name, const std::string& where);
double read_double_attribute(hid_t obj, const std::string& name, const std::string& where);
std::int64_t read_int_attribute(hid_t obj, const std::string& name, const std::string& where);

// Whole 1-D / 2-D datasets (compressed when large enough to be chunked).
void write_vector(hid_t parent, const std::string& name, const std::vector<double>& v);
void write_vector(hid_t parent, const std::string& name, const std::vector<std::uint64_t>& v);
void write_vector(hid_t parent, const std::string& name, const std::vector<std::int64_t>& v);
void write_matrix(hid_t parent, const std::string& name, const std::vector<double>& rows_major,
                  std::size_t rows, std::size_t cols);
std::vector<double> read_doubles(hid_t parent, const std::string& name, const std::string& where);
std::vector<std::uint64_t> read_uint64s(hid_t parent, const std::string& name,
                                        const std::string& where);
std::vector<std::int64_t> read_int64s(hid_t parent, const std::string& name,
                                      const std::string& where);

// A 1-D dataset that grows by appending blocks: chunked, shuffled and deflated.
class AppendableDataset {
 public:
  AppendableDataset() = default;
  AppendableDataset(hid_t parent, const std::string& name, hid_t mem_type, std::size_t chunk);
  void append(const void* data, std::size_t n);
  std::size_t size() const { return size_; }
  hid_t id() const { return dset_.get(); }

 private:
  Id dset_;
  hid_t mem_type_ = -1;
  std::size_t size_ = 0;
};

}  // namespace egret::h5
