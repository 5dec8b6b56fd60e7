// A thin RAII layer over the HDF5 C API (HighFive is not packaged for Debian bookworm): owned
// identifiers that close themselves, and the few operations egret's files need. Every failure
// throws std::runtime_error naming the file, the HDF5 path and the problem.
//
// Reading untrusted files: every reader checks object types, datatype classes and sizes, and
// dataspace extents against the bytes the file actually stores before it allocates, and runs a
// validating pass in a forked child first (validate_in_child), because libhdf5 1.10 itself can
// crash or hang on malformed metadata before egret gets a chance to check anything.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <memory>
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

// The largest expansion of a chunked dataset's stored bytes egret accepts: zlib's deflate
// cannot exceed 1032:1, and shuffle and Fletcher32 do not expand. A dataset whose extent claims
// more elements than its stored bytes can hold at this ratio is refused before any allocation.
inline constexpr std::uint64_t kMaxCompressionRatio = 1032;
// The largest chunk egret reads (libhdf5 allocates a whole chunk to decompress it).
inline constexpr std::uint64_t kMaxChunkBytes = std::uint64_t{64} << 20;

// Runs `pass` (which opens `path` and reads exactly what the real reader will read) in a forked
// child process with a time limit (3 s + 1 s per 2 MB of file) and an address-space limit
// (the parent's size + 256 MB + the file size x kMaxCompressionRatio). Returns when the pass
// succeeded; rethrows the pass's error (same message; std::invalid_argument stays one, anything
// else becomes std::runtime_error); turns a crash, a timeout or exhausted memory into a
// std::runtime_error naming the file ("libhdf5 crashed while validating ..."). The child does
// only HDF5 and egret's own checks and leaves with _exit (no atexit handlers, no flushes of the
// parent's files, no TBB, no Python); its stderr goes to /dev/null.
void validate_in_child(const std::string& path, const std::function<void()>& pass);

// read() run once in a validating child, then for real.
template <class F>
auto read_untrusted(const std::string& path, F&& read) -> decltype(read()) {
  validate_in_child(path, [&] { (void)read(); });
  return read();
}

// A file being written: egret's own file driver (sec2-like, POSIX pwrite) records the first
// failed write (a full disk, a file-size limit) instead of returning it to libhdf5, whose error
// paths in 1.10 leave the file half-closed and crash at exit (H5F__close_cb). Later writes go to
// a bounded in-memory overlay, so libhdf5 stays consistent and the file closes cleanly; check()
// and commit() report the failure naming the file. Written under `path + ".tmp-egret"` and
// renamed into place by commit(); destroyed uncommitted, it removes the temporary file.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  hid_t get() const { return file_.get(); }
  const std::string& path() const { return path_; }
  // Throws if a write has failed so far.
  void check() const;
  // Flushes, closes, syncs and renames into place; throws (naming the file) on any failure, and
  // then the temporary file is gone.
  void commit();
  struct WriteStatus;

 private:
  void discard() noexcept;
  std::string path_, tmp_path_;
  std::shared_ptr<WriteStatus> status_;
  Id file_;
  bool committed_ = false;
};

Id open_file_read(const std::string& path);
// An existing file of egret's own (already validated by its reader), opened for writing: used on
// a copy that is renamed into place afterwards (io/hardware/hardware_estimate.cpp).
Id open_file_write(const std::string& path);
void remove_link(hid_t parent, const std::string& name, const std::string& file);
void flush_file(hid_t file, const std::string& path);
Id create_group(hid_t parent, const std::string& name);
Id open_group(hid_t parent, const std::string& name, const std::string& file);
// Whether the link `name` (a path relative to parent) exists. It may still be dangling: open
// objects through object_type / open_group / the readers, which say so.
bool exists(hid_t parent, const std::string& name);
// The type of the object at `name`, refusing external and user-defined links and dangling
// links with an error naming `where` (file:/path).
H5O_type_t object_type(hid_t parent, const std::string& name, const std::string& where);

// The kind of a numeric datatype, checked: integers of 1 to 8 bytes ('i' signed, 'u' unsigned),
// floats of 4 or 8 bytes ('f'). Anything else throws naming `where`.
char numeric_kind(hid_t type, const std::string& where);
// The dimensions of a dataset, checked against the bytes the file stores for it (contiguous:
// inside the file; chunked: only deflate / shuffle / Fletcher32 filters, chunks of at most
// kMaxChunkBytes, at most kMaxCompressionRatio expansion of the stored bytes; compact: inside
// its header) and against `mem_element_size` bytes per element in memory (no overflow).
std::vector<hsize_t> checked_extent(hid_t dset, std::size_t mem_element_size,
                                    const std::string& where);
// A dataset transfer property list under which a conversion that would clamp, truncate or
// meet a NaN / infinity fails instead (libhdf5 clamps silently by default).
Id strict_transfer_plist();

// Attributes.
void write_attribute(hid_t obj, const std::string& name, const std::string& value);
void write_attribute(hid_t obj, const std::string& name, double value);
void write_attribute(hid_t obj, const std::string& name, std::int64_t value);
void write_attribute(hid_t obj, const std::string& name, const std::vector<std::uint32_t>& value);
// A fixed-length (not variable-length) string attribute, for values egret reads back from
// untrusted files: a fixed-size read needs no pointer chasing into the global heap.
void write_fixed_string_attribute(hid_t obj, const std::string& name, const std::string& value);
bool has_attribute(hid_t obj, const std::string& name);
std::string read_string_attribute(hid_t obj, const std::string& name, const std::string& where);
double read_double_attribute(hid_t obj, const std::string& name, const std::string& where);
std::int64_t read_int_attribute(hid_t obj, const std::string& name, const std::string& where);

// Whole 1-D / 2-D datasets (compressed when large enough to be chunked).
// Chunked datasets carry HDF5's Fletcher32 checksum.
void write_vector(hid_t parent, const std::string& name, const std::vector<double>& v);
void write_vector(hid_t parent, const std::string& name, const std::vector<std::uint64_t>& v);
void write_vector(hid_t parent, const std::string& name, const std::vector<std::int64_t>& v);
void write_matrix(hid_t parent, const std::string& name, const std::vector<double>& rows_major,
                  std::size_t rows, std::size_t cols);
std::vector<double> read_doubles(hid_t parent, const std::string& name, const std::string& where);
// A 1-D or 2-D dataset of floats, row-major.
std::vector<double> read_double_array(hid_t parent, const std::string& name,
                                      const std::string& where);
std::vector<std::uint64_t> read_uint64s(hid_t parent, const std::string& name,
                                        const std::string& where);
std::vector<std::int64_t> read_int64s(hid_t parent, const std::string& name,
                                      const std::string& where);

// Datasets of any rank (0 to 8), for formats that store n-dimensional arrays (NIR graphs,
// io/nir/). Numeric: integers or floats read as doubles, row-major; an integer a double cannot
// hold exactly is an error. Strings: fixed or variable length, each at most `max_length` bytes.
struct NumericArray {
  std::vector<hsize_t> dims;  // empty: a scalar
  std::vector<double> values;
  char kind = 'f';  // numeric_kind of the file's type
};
NumericArray read_numeric_array(hid_t parent, const std::string& name, const std::string& where);
struct StringArray {
  std::vector<hsize_t> dims;
  std::vector<std::string> values;
};
StringArray read_string_array(hid_t parent, const std::string& name, const std::string& where,
                              std::size_t max_length);
// The names of a group's links, in name order; more than `max_members` is an error.
std::vector<std::string> group_members(hid_t group, const std::string& where,
                                       std::size_t max_members);
// Writers of the same: float64 or int64 (contiguous), and UTF-8 variable-length strings (the
// form h5py writes), a scalar or a row-major table.
void write_array(hid_t parent, const std::string& name, const std::vector<hsize_t>& dims,
                 const std::vector<double>& values);
void write_int_array(hid_t parent, const std::string& name, const std::vector<hsize_t>& dims,
                     const std::vector<std::int64_t>& values);
void write_string(hid_t parent, const std::string& name, const std::string& value);
void write_string_table(hid_t parent, const std::string& name, const std::vector<hsize_t>& dims,
                        const std::vector<std::string>& values);

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
