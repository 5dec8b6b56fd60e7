#!/usr/bin/env python3
"""Forward and forward + backward cost per event of a continuous EGRU layer, fully connected
and 10 %-connected ("connectivity": {"input": 0.1, "recurrent": 0.1}), through the Python
module on one thread.

One layer of N units, D = 64 Poisson input channels at 50 Hz, windows 5 ms, tau_m 10 ms, 1 s
simulated, two samples (loss_and_gradient over two samples computes no per-event input
adjoints, as training does), best of --reps. Prints microseconds per engine event and the
dense layer's time over the sparse one's, in one process.

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_sparse_backward.py
"""
import argparse
import json

import numpy as np

import egret
from torch_comparison import best_of  # (no torch needed: the shared timing helper)

CHANNELS, RATE_HZ, END_MS = 64, 50.0, 1000.0


def poisson_sample(rng, label):
    times, channels = [], []
    for c in range(CHANNELS):
        t = np.cumsum(rng.exponential(1000.0 / RATE_HZ, int(3 * RATE_HZ * END_MS / 1000) + 10))
        t = t[t < END_MS]
        times.append(t)
        channels.append(np.full(len(t), c))
    t, ch = np.concatenate(times), np.concatenate(channels)
    order = np.argsort(t, kind="stable")
    return egret.Sample(t[order], ch[order], channels=CHANNELS, end_time=END_MS,
                        readout_times=[END_MS], labels=[label])


def network(units, share, precision):
    layer = {"type": "continuous_egru", "units": units, "tau_m": 10, "tau_o": 10,
             "window_input": 5, "window_recurrent": 5, "threshold": 0.3}
    if share < 1:
        layer["connectivity"] = {"input": share, "recurrent": share}
    config = {"seed": 1, "input_channels": CHANNELS, "layers": [layer], "readout_classes": 2}
    return egret.Network(json.dumps(config), precision=precision)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 1024])
    ap.add_argument("--share", type=float, default=0.1)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--precision", choices=["float", "double"], default="float")
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    samples = [poisson_sample(rng, k % 2) for k in range(2)]
    print(f"egret in {a.precision}, 1 thread; microseconds per engine event (best of {a.reps})")
    print(f"{'N':>5} {'layer':>14} {'events':>8} {'forward':>9} {'fwd+bwd':>9} {'backward':>9}")
    for n in a.sizes:
        rows = {}
        for share in (1.0, a.share):
            net = network(n, share, a.precision)
            events = sum(r["events_processed"] for r in net.simulate_batch(samples, threads=1))
            fwd = best_of(a.reps, lambda: net.simulate_batch(samples, threads=1)) / events * 1e6
            both = best_of(a.reps, lambda: net.loss_and_gradient(samples, threads=1)) / events * 1e6
            rows[share] = (fwd, both, both - fwd)
            name = "dense" if share == 1.0 else f"{share:.0%}-connected"
            print(f"{n:>5} {name:>14} {events / 2:>8.0f} {fwd:>9.2f} {both:>9.2f} {both - fwd:>9.2f}",
                  flush=True)
        d, s = rows[1.0], rows[a.share]
        print(f"{n:>5} {'dense / sparse':>14} {'':>8} {d[0] / s[0]:>8.1f}x {d[1] / s[1]:>8.1f}x "
              f"{d[2] / s[2]:>8.1f}x")


if __name__ == "__main__":
    main()
