// Runs one network over a batch of samples in parallel with TBB. Each sample is simulated from
// the network's initial state by a worker-local clone (shared parameters, private state) and its
// result is stored at the sample's index, so results do not depend on the number of threads or
// on scheduling.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "sim/engine.hpp"

namespace egret {

// The workers a batch runs on with threads <= 0 (all cores).
inline int worker_count() {
#ifdef EGRET_TSAN_BUILD
  return static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
#else
  return tbb::this_task_arena::max_concurrency();
#endif
}

#ifdef EGRET_TSAN_BUILD
// The ThreadSanitizer build runs the loops below on std::threads instead of TBB. Debian's libtbb
// is not built with TSan, so TSan cannot see the synchronization inside it and reports TBB's own
// task recycling as races (a new run of suppressions for every TBB version). std::thread and
// std::atomic are fully visible to TSan, so every race it reports here is in egret's code: the
// loop bodies, the clones and the shared network. The partition (an atomic next-index counter,
// one local per worker) is the TBB build's: results land at their index whatever the order.
template <class MakeLocal, class Body>
void for_each_in_index_order(std::size_t n, int threads, const MakeLocal& make_local,
                             const Body& body) {
  const unsigned cores = std::max(2u, std::thread::hardware_concurrency());
  const std::size_t workers = std::min<std::size_t>(threads > 0 ? threads : cores, n);
  std::atomic<std::size_t> next{0};
  std::mutex error_mutex;
  std::exception_ptr first_error;
  auto work = [&] {
    try {
      auto local = make_local();
      for (std::size_t i; (i = next.fetch_add(1)) < n;) body(i, local);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!first_error) first_error = std::current_exception();
      next.store(n);  // the other workers stop at their next sample
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t k = 1; k < workers; ++k) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (first_error) std::rethrow_exception(first_error);
}

// body(i) for every i in [0, n); the body stores its result at index i.
template <class Body>
void for_each_index(std::size_t n, int threads, const Body& body) {
  for_each_in_index_order(
      n, threads, [] { return 0; }, [&](std::size_t i, int) { body(i); });
}
#else
// body(i, local) for every i in [0, n) on TBB workers (threads <= 0: all cores), `local` being
// make_local()'s value, made once per worker. The workers take the indices in order, one at a
// time, so that they finish in nearly that order (a batch's gradients are summed in order as
// they finish, train/ordered_gradient_sum.hpp). The body must store its result at index i; then
// nothing depends on the thread count.
template <class MakeLocal, class Body>
void for_each_in_index_order(std::size_t n, int threads, const MakeLocal& make_local,
                             const Body& body) {
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  const auto workers = std::min<std::size_t>(static_cast<std::size_t>(arena.max_concurrency()), n);
  std::atomic<std::size_t> next{0};
  arena.execute([&] {
    tbb::parallel_for(std::size_t(0), workers, [&](std::size_t) {
      auto local = make_local();
      for (std::size_t i; (i = next.fetch_add(1)) < n;) body(i, local);
    });
  });
}

// body(i) for every i in [0, n) on TBB workers (threads <= 0: all cores); the body stores its
// result at index i.
template <class Body>
void for_each_index(std::size_t n, int threads, const Body& body) {
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n),
                      [&](const tbb::blocked_range<std::size_t>& range) {
                        for (std::size_t i = range.begin(); i != range.end(); ++i) body(i);
                      });
  });
}
#endif

// Calls body(i, local) for every i in [0, n), `local` being a worker-local clone of `net`
// (shared parameters, private state), made once per worker; in index order as above.
template <class Scalar, class Body>
void for_each_sample(const Network<Scalar>& net, std::size_t n, int threads, const Body& body) {
  for_each_in_index_order(
      n, threads, [&] { return net.clone(); }, body);
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
