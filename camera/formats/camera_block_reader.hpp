// Internal to the camera readers: a file read in fixed-size blocks with its byte offset, the
// text header of the formats that have one, and the batching of decoded events.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "camera/formats/camera_readers.hpp"

namespace egret::detail {

class BlockReader {
 public:
  explicit BlockReader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw CameraFileError(path, 0, "cannot open event file");
    in_.seekg(0, std::ios::end);
    const std::streamoff end = in_.tellg();
    in_.seekg(0, std::ios::beg);
    if (end < 0 || !in_) throw CameraFileError(path, 0, "cannot determine the file size");
    size_ = static_cast<std::uint64_t>(end);
    buffer_.resize(1 << 20);
  }

  const std::string& path() const { return path_; }
  std::uint64_t offset() const { return offset_; }
  std::uint64_t size() const { return size_; }
  // Bytes between the current offset and the end of the file: the most any size field read
  // here can honestly claim.
  std::uint64_t remaining() const { return size_ > offset_ ? size_ - offset_ : 0; }

  // Header lines: while the next byte is `marker`, read a line (through '\n'). Returns them;
  // `starts` (if given) receives each line's byte offset. Lines are capped at kMaxHeaderLine
  // bytes and the header at kMaxHeaderBytes, so a header without newlines cannot fill memory.
  static constexpr std::size_t kMaxHeaderLine = 1 << 16;
  static constexpr std::uint64_t kMaxHeaderBytes = 1 << 24;
  // `last` (if given) ends the header after the line equal to it, so binary data that happens
  // to start with the marker is not read as text.
  std::vector<std::string> header_lines(char marker, std::vector<std::uint64_t>* starts = nullptr,
                                        const char* last = nullptr) {
    std::vector<std::string> lines;
    while (peek() == marker && !(last && !lines.empty() && lines.back() == last)) {
      const std::uint64_t start = offset_;
      if (start > kMaxHeaderBytes)
        throw CameraFileError(
            path_, start, "text header longer than " + std::to_string(kMaxHeaderBytes) + " bytes");
      std::string line;
      int c;
      while ((c = get()) >= 0 && c != '\n') {
        if (line.size() == kMaxHeaderLine)
          throw CameraFileError(
              path_, start, "header line longer than " + std::to_string(kMaxHeaderLine) + " bytes");
        line.push_back(static_cast<char>(c));
      }
      if (c < 0) throw CameraFileError(path_, offset_, "file ends inside the text header");
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
      if (starts) starts->push_back(start);
    }
    return lines;
  }

  // Reads exactly n bytes; false at a clean end of file (no bytes left); throws on a partial
  // record ("truncated"). Short enough to inline: the decoders read a word at a time, and a
  // call per 2-byte word was a fifth of decoding EVT 3.0 (docs/speed.md).
  bool read(void* out, std::size_t n, const char* what) {
    if (n <= end_ - pos_) {
      std::memcpy(out, buffer_.data() + pos_, n);
      pos_ += n;
      offset_ += n;
      return true;
    }
    return read_across_blocks(out, n, what);
  }
  // Skips n bytes (throws if the file ends first).
  void skip(std::uint64_t n, const char* what) {
    std::array<unsigned char, 4096> tmp{};
    while (n > 0) {
      const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n, tmp.size()));
      if (!read(tmp.data(), k, what))
        throw CameraFileError(path_, offset_, std::string("truncated ") + what);
      n -= k;
    }
  }
  int peek() {
    if (pos_ == end_ && !fill()) return -1;
    return buffer_[pos_];
  }
  int get() {
    if (pos_ == end_ && !fill()) return -1;
    ++offset_;
    return buffer_[pos_++];
  }

 private:
  // read() when the n bytes are not all in the buffer: refill as often as needed.
  bool read_across_blocks(void* out, std::size_t n, const char* what) {
    auto* dst = static_cast<unsigned char*>(out);
    std::size_t got = 0;
    while (got < n) {
      if (pos_ == end_ && !fill()) {
        if (got == 0) return false;
        throw CameraFileError(path_, offset_ - got,
                              std::string("truncated ") + what + " (" + std::to_string(got) +
                                  " of " + std::to_string(n) + " bytes)");
      }
      const std::size_t k = std::min(n - got, end_ - pos_);
      std::memcpy(dst + got, buffer_.data() + pos_, k);
      pos_ += k;
      got += k;
      offset_ += k;
    }
    return true;
  }

  bool fill() {
    in_.read(reinterpret_cast<char*>(buffer_.data()), static_cast<std::streamsize>(buffer_.size()));
    end_ = static_cast<std::size_t>(in_.gcount());
    pos_ = 0;
    return end_ > 0;
  }

  std::string path_;
  std::ifstream in_;
  std::vector<unsigned char> buffer_;
  std::size_t pos_ = 0, end_ = 0;
  std::uint64_t offset_ = 0;
  std::uint64_t size_ = 0;
};

// Collects decoded events and hands them to the sink in batches.
class EventBatcher {
 public:
  EventBatcher(const CameraEventSink& sink, CameraFileInfo& info) : sink_(sink), info_(info) {
    batch_.reserve(kBatch);
  }
  ~EventBatcher() = default;
  void push(const CameraEvent& e) {
    batch_.push_back(e);
    if (batch_.size() == kBatch) flush();
  }
  void flush() {
    if (!batch_.empty()) sink_(batch_.data(), batch_.size());
    info_.events += batch_.size();
    batch_.clear();
  }

 private:
  static constexpr std::size_t kBatch = 8192;
  const CameraEventSink& sink_;
  CameraFileInfo& info_;
  std::vector<CameraEvent> batch_;
};

inline std::uint32_t le32(const unsigned char* b) {
  return static_cast<std::uint32_t>(b[0]) | (static_cast<std::uint32_t>(b[1]) << 8) |
         (static_cast<std::uint32_t>(b[2]) << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
}
inline std::uint32_t be32(const unsigned char* b) {
  return (static_cast<std::uint32_t>(b[0]) << 24) | (static_cast<std::uint32_t>(b[1]) << 16) |
         (static_cast<std::uint32_t>(b[2]) << 8) | static_cast<std::uint32_t>(b[3]);
}
inline std::uint16_t le16(const unsigned char* b) {
  return static_cast<std::uint16_t>(b[0] | (b[1] << 8));
}

// The errors of the two checks below, out of line so that the checks inline into the decoders'
// per-event loops.
[[noreturn]] inline __attribute__((noinline, cold)) void outside_sensor(const BlockReader& r,
                                                                        const SensorSize& s,
                                                                        const CameraEvent& e,
                                                                        std::uint64_t offset) {
  throw CameraFileError(r.path(), offset,
                        "event at (" + std::to_string(e.x) + ", " + std::to_string(e.y) +
                            ") outside the " + std::to_string(s.width) + "x" +
                            std::to_string(s.height) + " sensor");
}
[[noreturn]] inline __attribute__((noinline, cold)) void outside_camera_time(const BlockReader& r,
                                                                             std::int64_t t,
                                                                             std::uint64_t offset) {
  throw CameraFileError(r.path(), offset,
                        "timestamp " + std::to_string(t) + " us outside [0, 2^53] us");
}

// Checks an event against the sensor size (when known) before it is delivered.
inline void check_in_sensor(const BlockReader& r, const SensorSize& s, const CameraEvent& e,
                            std::uint64_t offset) {
  if ((s.width > 0 && e.x >= s.width) || (s.height > 0 && e.y >= s.height))
    outside_sensor(r, s, e, offset);
}

// Checks a decoded time against the range every camera event must lie in (is_camera_time).
inline void check_time(const BlockReader& r, std::int64_t t, std::uint64_t offset) {
  if (!is_camera_time(t)) outside_camera_time(r, t, offset);
}

}  // namespace egret::detail
