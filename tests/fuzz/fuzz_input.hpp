// Shared by the libFuzzer targets (docs/fuzzing.md). egret's readers take paths, so each input
// is written to one file per process (reused for every input) and the reader opens it. A
// std::exception is the expected "clear error" for a bad file; anything else (a crash, a
// sanitizer report, a hang, an allocation beyond the limit, a violated invariant) is a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace egret::fuzz {

// The folder for the per-process input file: $TMPDIR, else /dev/shm (memory), else /tmp.
inline std::string scratch_folder() {
  if (const char* t = std::getenv("TMPDIR"); t && *t) return t;
  if (access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return "/tmp";
}

// Writes the input to this process's file with the given extension (".raw", ".h5", ...) and
// returns its path. Aborts if the file cannot be written: that is the harness's fault.
inline const std::string& write_input(const std::uint8_t* data, std::size_t size,
                                      const char* extension) {
  static const std::string path =
      scratch_folder() + "/egret-fuzz-" + std::to_string(getpid()) + extension;
  static const bool cleanup_registered = [] {
    std::atexit([] { std::remove(path.c_str()); });
    return true;
  }();
  (void)cleanup_registered;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

// Runs `read`; a std::exception (the readers' clear errors) is an expected outcome.
template <class F>
void expect_result_or_clear_error(F&& read) {
  try {
    read();
  } catch (const std::exception&) {
  }
}

// A violated invariant on data a reader returned without an error: wrong data, silently.
[[noreturn]] inline void invariant_failed(const std::string& what) {
  std::fprintf(stderr, "egret fuzz: invariant violated: %s\n", what.c_str());
  std::abort();
}

}  // namespace egret::fuzz
