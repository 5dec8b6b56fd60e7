// Output files of io/hdf5/hdf5.hpp (OutputFile): written under a temporary name through a POSIX
// file driver that keeps libhdf5 consistent when writes fail, then renamed into place.
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>

#include "io/hdf5/hdf5.hpp"
#include "io/hdf5/hdf5_detail.hpp"

namespace egret::h5 {

using detail::check;
using detail::check_status;
using detail::fail;

struct OutputFile::WriteStatus {
  std::string error;       // the first failed write, empty while every write succeeded
  std::string open_error;  // why the last open failed (libhdf5 first probes without O_CREAT)
};

namespace {

struct DriverInfo {
  OutputFile::WriteStatus* status;
};

struct OverlayWrite {
  haddr_t addr;
  std::vector<unsigned char> bytes;
};

struct DriverState {
  int fd = -1;
  haddr_t eoa = 0, eof = 0;
  OutputFile::WriteStatus* status = nullptr;
  std::vector<OverlayWrite> overlay;  // writes after the first failure
  std::size_t overlay_bytes = 0;
};

struct DriverFile {
  H5FD_t pub;  // first: libhdf5 sees only this part
  DriverState* state;
};

constexpr std::size_t kMaxOverlayBytes = std::size_t{512} << 20;

DriverState& state_of(const H5FD_t* f) {
  return *reinterpret_cast<const DriverFile*>(f)->state;
}

void record_failure(DriverState& s, const std::string& what) {
  if (s.status && s.status->error.empty()) s.status->error = what;
}

void* driver_fapl_copy(const void* info) {
  return new DriverInfo(*static_cast<const DriverInfo*>(info));
}
herr_t driver_fapl_free(void* info) {
  delete static_cast<DriverInfo*>(info);
  return 0;
}
void* driver_fapl_get(H5FD_t* f) {
  return new DriverInfo{state_of(f).status};
}

H5FD_t* driver_open(const char* name, unsigned flags, hid_t fapl, haddr_t maxaddr) {
  if (!name || maxaddr == 0 || maxaddr == HADDR_UNDEF) return nullptr;
  const auto* info = static_cast<const DriverInfo*>(H5Pget_driver_info(fapl));
  int oflags = (flags & H5F_ACC_RDWR) ? O_RDWR : O_RDONLY;
  if (flags & H5F_ACC_TRUNC) oflags |= O_TRUNC;
  if (flags & H5F_ACC_CREAT) oflags |= O_CREAT;
  if (flags & H5F_ACC_EXCL) oflags |= O_EXCL;
  const int fd = ::open(name, oflags | O_CLOEXEC, 0666);
  if (fd < 0) {
    if (info && info->status) info->status->open_error = std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  ::fstat(fd, &st);
  auto* file = new DriverFile{};
  file->state = new DriverState;
  file->state->fd = fd;
  file->state->eof = static_cast<haddr_t>(st.st_size);
  file->state->status = info ? info->status : nullptr;
  return &file->pub;
}

herr_t driver_close(H5FD_t* f) {
  auto* file = reinterpret_cast<DriverFile*>(f);
  DriverState& s = *file->state;
  if (::fsync(s.fd) != 0) record_failure(s, std::string("fsync: ") + std::strerror(errno));
  if (::close(s.fd) != 0) record_failure(s, std::string("close: ") + std::strerror(errno));
  delete file->state;
  delete file;
  return 0;
}

int driver_cmp(const H5FD_t* a, const H5FD_t* b) {
  const int fa = state_of(a).fd, fb = state_of(b).fd;
  return fa < fb ? -1 : fa > fb ? 1 : 0;
}

herr_t driver_query(const H5FD_t*, unsigned long* flags) {
  if (flags)
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA;
  return 0;
}

haddr_t driver_get_eoa(const H5FD_t* f, H5FD_mem_t) {
  return state_of(f).eoa;
}
herr_t driver_set_eoa(H5FD_t* f, H5FD_mem_t, haddr_t addr) {
  state_of(f).eoa = addr;
  return 0;
}
haddr_t driver_get_eof(const H5FD_t* f, H5FD_mem_t) {
  return state_of(f).eof;
}
herr_t driver_get_handle(H5FD_t* f, hid_t, void** handle) {
  *handle = &state_of(f).fd;
  return 0;
}

herr_t driver_read(H5FD_t* f, H5FD_mem_t, hid_t, haddr_t addr, size_t size, void* buffer) {
  DriverState& s = state_of(f);
  auto* out = static_cast<unsigned char*>(buffer);
  haddr_t end = 0;
  if (__builtin_add_overflow(addr, static_cast<haddr_t>(size), &end)) return -1;
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(s.fd, out + done, size - done, static_cast<off_t>(addr + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;  // past the end of the file: zeros, as libhdf5's own drivers give
    done += static_cast<std::size_t>(n);
  }
  std::memset(out + done, 0, size - done);
  for (const OverlayWrite& w : s.overlay) {  // later writes win
    const haddr_t lo = std::max(addr, w.addr), hi = std::min(end, w.addr + w.bytes.size());
    if (lo < hi) std::memcpy(out + (lo - addr), w.bytes.data() + (lo - w.addr), hi - lo);
  }
  return 0;
}

herr_t driver_write(H5FD_t* f, H5FD_mem_t, hid_t, haddr_t addr, size_t size, const void* buffer) {
  DriverState& s = state_of(f);
  const auto* in = static_cast<const unsigned char*>(buffer);
  haddr_t end = 0;
  if (__builtin_add_overflow(addr, static_cast<haddr_t>(size), &end)) return -1;
  std::size_t done = 0;
  while (s.status && s.status->error.empty() && done < size) {
    const ssize_t n = ::pwrite(s.fd, in + done, size - done, static_cast<off_t>(addr + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      record_failure(s, n < 0 ? std::strerror(errno) : "no progress writing");
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (done < size && s.overlay_bytes + (size - done) <= kMaxOverlayBytes) {
    s.overlay.push_back({addr + done, std::vector<unsigned char>(in + done, in + size)});
    s.overlay_bytes += size - done;
  }
  s.eof = std::max(s.eof, end);
  return 0;
}

herr_t driver_truncate(H5FD_t* f, hid_t, hbool_t) {
  DriverState& s = state_of(f);
  if (s.eoa == s.eof) return 0;
  if (s.status && s.status->error.empty() && ::ftruncate(s.fd, static_cast<off_t>(s.eoa)) != 0)
    record_failure(s, std::string("ftruncate: ") + std::strerror(errno));
  s.eof = s.eoa;
  return 0;
}

H5FD_class_t make_driver_class() {
  H5FD_class_t c{};
  c.name = "egret_output";
  c.maxaddr = static_cast<haddr_t>(INT64_MAX);
  c.fc_degree = H5F_CLOSE_STRONG;
  c.fapl_size = sizeof(DriverInfo);
  c.fapl_get = driver_fapl_get;
  c.fapl_copy = driver_fapl_copy;
  c.fapl_free = driver_fapl_free;
  c.open = driver_open;
  c.close = driver_close;
  c.cmp = driver_cmp;
  c.query = driver_query;
  c.get_eoa = driver_get_eoa;
  c.set_eoa = driver_set_eoa;
  c.get_eof = driver_get_eof;
  c.get_handle = driver_get_handle;
  c.read = driver_read;
  c.write = driver_write;
  c.truncate = driver_truncate;
  for (auto& m : c.fl_map) m = H5FD_MEM_DEFAULT;  // one free list for every kind of data
  return c;
}

hid_t output_driver() {
  static const H5FD_class_t cls = make_driver_class();
  static std::once_flag once;
  static hid_t id = H5I_INVALID_HID;
  std::call_once(once, [] { id = H5FDregister(&cls); });
  if (id < 0) fail("cannot register egret's HDF5 output driver");
  return id;
}

}  // namespace

OutputFile::OutputFile(const std::string& path)
    : path_(path), tmp_path_(path + ".tmp-egret"), status_(std::make_shared<WriteStatus>()) {
  QuietErrors quiet;
  Id fapl = egret::h5::check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
  const DriverInfo info{status_.get()};
  check_status(H5Pset_driver(fapl.get(), output_driver(), &info), "H5Pset_driver");
  check_status(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "H5Pset_fclose_degree");
  // The 1.8 file format: checksums on every metadata structure (object headers, heaps,
  // B-trees), so a damaged header is an error, not a different file; readable by HDF5 >= 1.8.
  check_status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18),
               "H5Pset_libver_bounds");
  file_ = Id(H5Fcreate(tmp_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
  if (!file_.valid()) {
    const std::string why = status_->open_error.empty() ? "" : ": " + status_->open_error;
    std::remove(tmp_path_.c_str());
    fail(path_ + ": cannot create the HDF5 file (as " + tmp_path_ + ")" + why);
  }
}

OutputFile::~OutputFile() {
  if (!committed_) discard();
}

void OutputFile::discard() noexcept {
  QuietErrors quiet;
  if (file_.valid()) H5Fclose(file_.get());
  file_ = Id();
  std::remove(tmp_path_.c_str());
}

void OutputFile::check() const {
  if (!status_->error.empty())
    fail(path_ + ": cannot write the file (" + tmp_path_ + "): " + status_->error);
}

void OutputFile::commit() {
  check();
  QuietErrors quiet;
  const hid_t f = file_.get();
  const bool flushed = H5Fflush(f, H5F_SCOPE_LOCAL) >= 0;
  const bool closed = H5Fclose(f) >= 0;  // also closes what is still open in it (STRONG)
  file_ = Id();
  try {
    check();
    if (!flushed || !closed)
      fail(path_ + ": libhdf5 could not finish the file (" + tmp_path_ + ")");
    if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0)
      fail(path_ + ": cannot rename " + tmp_path_ + " into place: " + std::strerror(errno));
  } catch (...) {
    std::remove(tmp_path_.c_str());
    throw;
  }
  committed_ = true;
}

}  // namespace egret::h5
