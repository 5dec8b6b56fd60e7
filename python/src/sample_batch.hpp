// A batch of egret.Sample objects as the C++ side sees it, and the checked thread count of a
// batch call.
#pragma once

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "python/src/sample.hpp"

namespace egret::python {

// Pointers for the C++ side and the Python objects that own them, held for the whole call (a
// generator's samples, or a list another thread empties while the GIL is released, would
// otherwise be freed under us).
struct SampleBatch {
  py::list owners;
  std::vector<const PySample*> samples;
  std::size_t size() const { return samples.size(); }
  const PySample* operator[](std::size_t i) const { return samples[i]; }
  const PySample* front() const { return samples.front(); }
};

// One egret.Sample or an iterable of them, at least one, each with `channels` input channels.
inline SampleBatch as_samples(const py::handle& obj, Index channels) {
  const char* expected = "expected an egret.Sample or a sequence of egret.Sample";
  SampleBatch b;
  if (py::isinstance<PySample>(obj)) {
    b.owners.append(obj);
  } else {
    if (!py::isinstance<py::iterable>(obj)) throw std::invalid_argument(expected);
    for (const auto& item : obj) b.owners.append(item);
  }
  for (const auto& item : b.owners) {
    if (!py::isinstance<PySample>(item)) throw std::invalid_argument(expected);
    b.samples.push_back(&item.cast<const PySample&>());
  }
  if (b.samples.empty()) throw std::invalid_argument("empty batch: no samples");
  for (std::size_t i = 0; i < b.size(); ++i)
    if (b[i]->s.input.channels() != channels)
      throw std::invalid_argument("sample " + std::to_string(i) + " has " +
                                  std::to_string(b[i]->s.input.channels()) +
                                  " channels, the network " + std::to_string(channels));
  return b;
}

// Threads for a batch: 0 = all cores; more than a few thousand is refused (TBB's arena cannot
// create them).
inline int checked_threads(int threads) {
  if (threads < 0 || threads > 4096)
    throw std::invalid_argument("threads must be in [0, 4096] (0: all cores), got " +
                                std::to_string(threads));
  return threads;
}

}  // namespace egret::python
