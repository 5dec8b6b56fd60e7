// The validating child of io/hdf5/hdf5.hpp (validate_in_child): a forked process with time and
// memory limits runs the reader first, so that libhdf5's own crashes and hangs on a hostile
// file end a child, not egret.
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

// Provided by the sanitizer runtimes when egret is built with them (weak: absent otherwise).
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace egret::h5 {

using detail::fail;
using detail::file_size_of;

namespace {

std::uint64_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// The child: limits, the pass, one reply ('O' ok, 'I' invalid_argument, 'E' error, 'M' out of
// memory, then the message), _exit.
// A crash in the child must end the child by its signal and nothing else: handlers inherited
// from the parent (a sanitizer's or a fuzzer's report-and-save-the-input hooks) would treat the
// crash the parent is guarding against as a finding of their own.
void restore_default_crash_handling() {
  if (&__sanitizer_set_death_callback) __sanitizer_set_death_callback(nullptr);
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGALRM}) ::signal(sig, SIG_DFL);
}

[[noreturn]] void run_validating_child(int reply_fd, std::uint64_t file_size, double timeout_s,
                                       const std::function<void()>& pass) {
  restore_default_crash_handling();
  const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (devnull >= 0) ::dup2(devnull, STDERR_FILENO);
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  const rlim_t cpu = static_cast<rlim_t>(timeout_s) + 2;
  const rlimit cpu_limit{cpu, cpu + 1};
  ::setrlimit(RLIMIT_CPU, &cpu_limit);
  std::uint64_t budget = 0, limit = 0;
  if (__builtin_mul_overflow(file_size, kMaxCompressionRatio, &budget) ||
      __builtin_add_overflow(address_space_bytes(), budget + (std::uint64_t{256} << 20), &limit))
    limit = RLIM_INFINITY;
  const rlimit as_limit{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
  ::setrlimit(RLIMIT_AS, &as_limit);
  std::string reply;
  try {
    QuietErrors quiet;
    pass();
    reply = "O";
  } catch (const std::invalid_argument& e) {
    reply = std::string("I") + e.what();
  } catch (const std::bad_alloc&) {
    reply = "M";
  } catch (const std::exception& e) {
    reply = std::string("E") + e.what();
  } catch (...) {
    reply = "Eunknown error";
  }
  write_all(reply_fd, reply.substr(0, 60000));
  ::_exit(0);
}

}  // namespace

// Why a child process: libhdf5 1.10 parses object headers, attribute messages and B-trees with
// too few checks (a heap overflow under H5Aexists, a memcpy overlap and a hang reading
// variable-length attributes were found by fuzzing), and egret cannot validate those structures
// without libhdf5 itself. The child opens the file and runs the very reader the parent will run,
// so every libhdf5 code path the parent takes on this file has already been survived, within a
// time and memory limit. The cost is reading the file twice. The file could change between the
// two reads; egret reads files from others, not files an attacker rewrites while egret runs.
void validate_in_child(const std::string& path, const std::function<void()>& pass) {
  const std::uint64_t file_size = file_size_of(path);
  const double timeout_s = 3.0 + static_cast<double>(file_size) / 2e6;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    fail(path + ": cannot start the validating process: " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    fail(path + ": cannot start the validating process: " + std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_validating_child(fds[1], file_size, timeout_s, pass);
  }
  ::close(fds[1]);
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  std::string reply;
  bool timed_out = false;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child closed the pipe (it exited)
    if (reply.size() < 65536) reply.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const bool clean_exit = WIFEXITED(status) && WEXITSTATUS(status) == 0 && !reply.empty();
  if (timed_out)
    fail(path + ": libhdf5 did not finish validating the file within " +
         std::to_string(static_cast<int>(timeout_s)) +
         " s (malformed HDF5 metadata can make it loop); the file was not read");
  if (!clean_exit) {
    std::string how = WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status)) + ", " +
                                                strsignal(WTERMSIG(status))
                                          : "exit status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) how += ", CPU time limit";
    fail(path + ": libhdf5 crashed while validating the file (" + how +
         "); the file is malformed and was not read");
  }
  const std::string message = reply.substr(1);
  switch (reply[0]) {
    case 'O':
      return;
    case 'I':
      throw std::invalid_argument(message);
    case 'M':
      fail(path +
           ": reading the file needs more memory than its size can justify (limit: 256 MB "
           "+ " +
           std::to_string(kMaxCompressionRatio) + " x the file size); the file was not read");
    default:
      fail(message);
  }
}

}  // namespace egret::h5
