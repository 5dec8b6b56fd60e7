#!/usr/bin/python3
"""The exp gate kernel (c integrated by Odeint, crossings by root finding) against the box
kernel (closed form), in the same process on the same input: one continuous EGRU layer of N
units driven by Poisson input events, simulated forward, and forward + backward (the exact
gradient of a readout loss, 1 thread). Reports the wall time per event (emissions, inputs and
releases processed) and per simulated second, and the ratios exp / box.

The two kernels are different models, so their event counts differ; both are reported. The
exp layer's biases are those of the box layer, so both fire at comparable rates.

usage: PYTHONPATH=build/python /usr/bin/python3 bench/bench_exp_kernel.py
       [--units 64 256] [--seconds 1.0] [--rate 2000] [--tau-s 5] [--reps 3]
       [--precision double|float] [--ode-tolerance 1e-12]
"""
import argparse
import json
import time

import numpy as np

import egret


def network(units, kernel, args):
    layer = {"type": "continuous_egru", "units": units, "gate_kernel": kernel, "tau_m": 10,
             "tau_o": 10, "threshold": 0.3, "window_input": 5, "window_recurrent": 5,
             "init": {"weight_scale": 1.0, "bias_z": 0.5, "bias_spread": 0.2}}
    if kernel == "exp":
        layer.update(tau_s=args.tau_s, ode_tolerance=args.ode_tolerance)
    return egret.Network(json.dumps({"precision": args.precision, "seed": 1,
                                     "input_channels": 64, "readout_classes": 2,
                                     "layers": [layer]}))


def timed(net, t, ch, v, end, reps):
    best, result = float("inf"), None
    for _ in range(reps):
        start = time.perf_counter()
        result = net.simulate(t, ch, v, end_time=end)
        best = min(best, time.perf_counter() - start)
    return best, result


def timed_gradient(net, sample, reps):
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        net.loss_and_gradient(sample, threads=1)
        best = min(best, time.perf_counter() - start)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--units", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--seconds", type=float, default=1.0, help="simulated time [s]")
    ap.add_argument("--rate", type=float, default=2000.0, help="input events per second")
    ap.add_argument("--tau-s", type=float, default=5.0)
    ap.add_argument("--ode-tolerance", type=float, default=1e-12)
    ap.add_argument("--precision", default="double")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    end = 1000.0 * args.seconds
    rng = np.random.default_rng(0)
    count = rng.poisson(args.rate * args.seconds)
    t = np.sort(rng.uniform(0, end, count))
    ch = rng.integers(0, 64, count)
    v = rng.uniform(0.5, 1.5, count)
    print(f"{args.seconds} s simulated, {count} input events, precision {args.precision}, "
          f"tau_s {args.tau_s} ms, ode_tolerance {args.ode_tolerance}; best of {args.reps}")
    sample = egret.Sample(t, ch, v, channels=64, end_time=end, readout_times=[end], labels=[0])
    print("| N | kernel | emissions | events processed | forward: ms per simulated s | "
          "us per event | exp / box per event | forward + backward: ms per simulated s | "
          "us per event | exp / box per event |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for units in args.units:
        rows = {}
        for kernel in ("box", "exp"):
            net = network(units, kernel, args)
            seconds, r = timed(net, t, ch, v, end, args.reps)
            both = timed_gradient(net, sample, args.reps)
            rows[kernel] = (seconds, len(r["time"]), r["events_processed"], both)
        box_fwd = rows["box"][0] / rows["box"][2]
        box_both = rows["box"][3] / rows["box"][2]
        for kernel in ("box", "exp"):
            seconds, emitted, processed, both = rows[kernel]
            print(f"| {units} | {kernel} | {emitted} | {processed} | "
                  f"{1e3 * seconds / args.seconds:.1f} | {1e6 * seconds / processed:.2f} | "
                  f"{seconds / processed / box_fwd:.1f}x | {1e3 * both / args.seconds:.1f} | "
                  f"{1e6 * both / processed:.2f} | {both / processed / box_both:.1f}x |")


if __name__ == "__main__":
    main()
