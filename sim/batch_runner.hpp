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

// threads <= 0: TBB's default (all cores).
template <class Scalar>
std::vector<SimResult<Scalar>> simulate_batch(const Network<Scalar>& net,
                                              const std::vector<InputStream<Scalar>>& samples,
                                              const SimOptions<Scalar>& options, int threads = 0) {
  std::vector<SimResult<Scalar>> results(samples.size());
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, samples.size()),
                      [&](const tbb::blocked_range<std::size_t>& range) {
                        Network<Scalar> local = net.clone();
                        for (std::size_t i = range.begin(); i != range.end(); ++i)
                          results[i] = simulate(local, samples[i], options);
                      });
  });
  return results;
}

}  // namespace egret
