#!/usr/bin/python3
"""Step time of egret's stepwise suGRU (rhythmic gates closing about 85 % of the units, run on the
event engine without a tape: closed units' rows are skipped) against torch.nn.GRU of the same size
(one call over the sequence) and torch.nn.GRUCell stepped in a Python loop, in the same script, on
the same thread count, float64 for all (egret's Python module computes in double). D = N, a graded
input on every channel at every 1 ms tick. torch's BLAS is printed: Debian's torch uses the
reference BLAS unless libopenblas0-pthread is installed (`apt-get install libopenblas0-pthread`;
not installed by scripts/setup.sh: tests/python/test_discrete_training.py's torch run reaches its
20-epoch streak with the reference BLAS but not with OpenBLAS's rounding).

usage: PYTHONPATH=build/python /usr/bin/python3 bench/bench_sugru_vs_torch.py [--threads 1]
       [--ticks 200] [--sizes 256 1024]
"""
import argparse

import numpy as np
import torch

import egret
from torch_comparison import best_of, blas_name


def gate_bias_for(net_params, n, ticks, target_open):
    """The gate bias that opens `target_open` of the unit-ticks (the schedule ignores the input)."""
    alpha, phi = net_params["layer0.g_alpha"], net_params["layer0.g_phi"]
    omega = np.asarray(net_params["layer0.g_omega"]).reshape(-1)
    t = np.arange(1, ticks + 1)[:, None, None]
    a0 = (alpha[None] * np.sin(omega[None, None, :] * t + phi[None])).sum(-1)  # (K, N)
    return -float(np.quantile(a0, 1 - target_open))


def config(n, bias):
    return {"seed": 5, "input_channels": n, "layers": [
        {"type": "sugru", "units": n, "dt": 1,
         "gate": {"frequencies": 16, "period_min": 4, "period_max": 100, "bias": bias}}]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ticks", type=int, default=200)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 1024])
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, BLAS {blas_name()}, {args.threads} thread(s), float64, "
          f"{args.ticks} ticks, best of {args.reps}")
    print(f"{'N':>6} {'closed':>7} {'egret us/step':>14} {'torch GRU':>10} {'GRUCell loop':>13} "
          f"{'vs GRU':>7} {'vs cell':>8}")
    rng = np.random.default_rng(1)
    for n in args.sizes:
        K = args.ticks
        probe = egret.Network(config(n, 0.0))
        bias = gate_bias_for(probe.parameters(), n, K, 0.15)
        net = egret.Network(config(n, bias))
        x = rng.uniform(-1, 1, (K, n))
        times = np.repeat(np.arange(K) + 0.5, n)
        channels = np.tile(np.arange(n), K)
        values = x.reshape(-1)
        r = net.simulate(times, channels, values, end_time=float(K))
        egret_s = best_of(args.reps, lambda: net.simulate(times, channels, values,
                                                          end_time=float(K)))
        gru = torch.nn.GRU(n, n, dtype=torch.float64)
        cell = torch.nn.GRUCell(n, n, dtype=torch.float64)
        xt = torch.from_numpy(x).unsqueeze(1)

        def cell_loop():
            h = torch.zeros(1, n, dtype=torch.float64)
            for k in range(K):
                h = cell(xt[k], h)

        with torch.no_grad():
            gru_s = best_of(args.reps, lambda: gru(xt))
            cell_s = best_of(args.reps, cell_loop)
        closed = 1 - len(r["time"]) / (K * n)  # an upper bound on open: open units that changed
        print(f"{n:6d} {100 * closed:6.1f}% {1e6 * egret_s / K:14.1f} {1e6 * gru_s / K:10.1f} "
              f"{1e6 * cell_s / K:13.1f} {gru_s / egret_s:6.1f}x {cell_s / egret_s:7.1f}x")


if __name__ == "__main__":
    main()
