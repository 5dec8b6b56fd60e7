"""What the benchmarks against torch share: the BLAS torch will load (Debian's torch uses the
reference BLAS unless libopenblas0-pthread is installed) and the best of repeated timings."""
import os
import time


def blas_name():
    for lib in ("libblas.so.3", "libopenblas.so.0"):
        path = f"/usr/lib/x86_64-linux-gnu/{lib}"
        if os.path.exists(path):
            return os.path.realpath(path)
    return "unknown"


def best_of(reps, f):
    """The shortest wall time of `reps` calls of f, in seconds."""
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best
