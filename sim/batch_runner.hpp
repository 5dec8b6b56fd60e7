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

// Calls body(i, local) for every i in [0, n) on TBB workers, `local` being a worker-local clone
// of `net` (shared parameters, private state). threads <= 0: TBB's default (all cores). The body
// must store its result at index i; then nothing depends on the thread count.
template <class Scalar, class Body>
void for_each_sample(const Network<Scalar>& net, std::size_t n, int threads, const Body& body) {
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n),
                      [&](const tbb::blocked_range<std::size_t>& range) {
                        Network<Scalar> local = net.clone();
                        for (std::size_t i = range.begin(); i != range.end(); ++i) body(i, local);
                      });
  });
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
