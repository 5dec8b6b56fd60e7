// A validated, time-sorted stream of external input events (time, channel, value).
#pragma once

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "events/event.hpp"

namespace egret {

template <class Scalar>
struct InputEvent {
  Scalar time = 0;
  Index channel = 0;
  Scalar value = 1;
};

// Input events are checked once, on entry: times finite and >= 0, channels in [0, channels),
// values finite. Anything else is an error naming the offending event; nothing is dropped or
// clamped. Events are then sorted by (time, channel), stably, so that equal events keep their
// given order.
template <class Scalar>
class InputStream {
 public:
  InputStream() = default;
  InputStream(std::vector<InputEvent<Scalar>> events, Index channels)
      : events_(std::move(events)), channels_(channels) {
    if (channels <= 0) {
      throw std::invalid_argument("input stream: number of channels must be positive, got " +
                                  std::to_string(channels));
    }
    for (std::size_t i = 0; i < events_.size(); ++i) {
      const auto& e = events_[i];
      auto fail = [&](const std::string& what) {
        std::ostringstream os;
        os << "input stream: event " << i << " (t=" << e.time << ", channel=" << e.channel
           << ", value=" << e.value << "): " << what;
        throw std::invalid_argument(os.str());
      };
      if (!std::isfinite(e.time)) fail("time is not finite");
      if (e.time < 0) fail("time is negative");
      if (e.channel < 0 || e.channel >= channels) {
        fail("channel out of range [0, " + std::to_string(channels) + ")");
      }
      if (!std::isfinite(e.value)) fail("value is not finite");
    }
    std::stable_sort(events_.begin(), events_.end(), [](const auto& a, const auto& b) {
      if (a.time != b.time) return a.time < b.time;
      return a.channel < b.channel;
    });
  }

  Index channels() const { return channels_; }
  std::size_t size() const { return events_.size(); }
  bool empty() const { return events_.empty(); }
  const InputEvent<Scalar>& operator[](std::size_t i) const { return events_[i]; }
  const std::vector<InputEvent<Scalar>>& events() const { return events_; }
  Scalar last_time() const { return events_.empty() ? Scalar(0) : events_.back().time; }

 private:
  std::vector<InputEvent<Scalar>> events_;
  Index channels_ = 0;
};

}  // namespace egret
