"""What the benchmarks against torch share: the BLAS torch will load (Debian's torch uses the
reference BLAS unless libopenblas0-pthread is installed), the best of repeated timings, and the
un-netted copy of a network."""
import json
import os
import time
import warnings


def blas_name():
    """The BLAS library torch loads. On the reference BLAS a warning (shown once by the warnings module): a
    fresh Debian machine has it, and there torch's dense GRU is several times slower than with
    OpenBLAS, which would make every ratio against torch look better than it is."""
    for lib in ("libblas.so.3", "libopenblas.so.0"):
        path = f"/usr/lib/x86_64-linux-gnu/{lib}"
        if os.path.exists(path):
            real = os.path.realpath(path)
            if "openblas" not in real:
                warnings.warn(f"torch uses the reference BLAS ({real}); the ratios against "
                              "torch will flatter egret. Install libopenblas0-pthread "
                              "(apt-get install libopenblas0-pthread) for the figures in docs/speed.md.")
            return real
    return "unknown"


def best_of(reps, f):
    """The shortest wall time of `reps` calls of f, in seconds."""
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def unnetted_copy(net):
    """The same network with "simulation": {"net_input_windows": false}: every input and release
    one by one, as before 2026-12-03 (docs/adjoint.md §5, "Netted input windows")."""
    import egret
    cfg = json.loads(net.config)
    cfg.setdefault("simulation", {})["net_input_windows"] = False
    copy = egret.Network(cfg, precision=net.precision)
    copy.set_parameters(net.parameters())
    return copy
