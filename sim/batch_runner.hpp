// Runs one network over a batch of samples in parallel with TBB. Each sample is simulated from
// the network's initial state by a worker-local clone (shared parameters, private state) and its
// result is stored at the sample's index, so results do not depend on the number of threads or
// on scheduling.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <vector>

#include "sim/engine.hpp"

namespace egret {

namespace detail {
// ThreadSanitizer annotations (no-ops in other builds). libtbb is not built with TSan, so the
// synchronization inside it (a task starts after what its spawner wrote; parallel_for returns
// after every task ended) is invisible to TSan, which would report every result read after the
// join as a race. for_each_sample states exactly these two edges with separate sync objects and
// none between the tasks themselves, so races among the tasks are still reported.
#if defined(__SANITIZE_THREAD__)
#define EGRET_TSAN_ANNOTATE 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define EGRET_TSAN_ANNOTATE 1
#endif
#endif
#ifdef EGRET_TSAN_ANNOTATE
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
inline void happens_before(void* sync) {
  __tsan_release(sync);
}
inline void happens_after(void* sync) {
  __tsan_acquire(sync);
}
#else
inline void happens_before(void*) {}
inline void happens_after(void*) {}
#endif
}  // namespace detail

// Calls body(i, local) for every i in [0, n) on TBB workers, `local` being a worker-local clone
// of `net` (shared parameters, private state). threads <= 0: TBB's default (all cores). The body
// must store its result at index i; then nothing depends on the thread count.
template <class Scalar, class Body>
void for_each_sample(const Network<Scalar>& net, std::size_t n, int threads, const Body& body) {
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  char fork = 0, join = 0;  // ThreadSanitizer sync objects (detail::happens_before)
  detail::happens_before(&fork);
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n),
                      [&](const tbb::blocked_range<std::size_t>& range) {
                        detail::happens_after(&fork);
                        Network<Scalar> local = net.clone();
                        for (std::size_t i = range.begin(); i != range.end(); ++i) body(i, local);
                        detail::happens_before(&join);
                      });
  });
  detail::happens_after(&join);
}

template <class Scalar>
std::vector<SimResult<Scalar>> simulate_batch(const Network<Scalar>& net,
                                              const std::vector<InputStream<Scalar>>& samples,
                                              const SimOptions<Scalar>& options, int threads = 0) {
  std::vector<SimResult<Scalar>> results(samples.size());
  for_each_sample(net, samples.size(), threads, [&](std::size_t i, Network<Scalar>& local) {
    results[i] = simulate(local, samples[i], options);
  });
  return results;
}

}  // namespace egret
