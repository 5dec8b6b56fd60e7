#!/usr/bin/python3
"""egret's exact continuous-time EGRU against a dense torch.nn.GRU of the same size, on the main
job's own data: the 64-unit layer trained by `egret` (out/dvs_gesture/checkpoint.h5) on the
held-out synthetic DVS gestures (32x32x2 = 2048 pooled input channels, events coalesced per
5 ms bin, 1.5 s per sample). Same script, same thread count for both.

  forward:            egret Network.simulate_batch (no tape) vs torch.nn.GRU(2048, 64) over the
                      sample's dense input tensor, stepping every 1 ms and every 5 ms (the input
                      bin); batch 1 per sample (a streaming, sample-by-sample use) and all samples
                      in one batch.
  forward + backward: egret Network.loss_and_gradient (exact gradients, softmax cross-entropy)
                      vs torch forward + cross-entropy on the last step + backward.

Reported: milliseconds per sample, real-time factor (simulated time / wall time) and events per
second (input events and internal events the engine processed). --precision float (the default)
runs egret in float and torch in float32; double runs both in float64. torch's BLAS is printed:
Debian's torch uses the reference BLAS unless libopenblas0-pthread is installed.

--unnetted also times egret with "simulation": {"net_input_windows": false} (every input and
release one by one, as before 2026-12-03; docs/adjoint.md §5), in the same loop.

usage: PYTHONPATH=build/python /usr/bin/python3 bench/bench_continuous_vs_torch_gru.py
       [--threads 1 2] [--samples 44] [--checkpoint out/dvs_gesture/checkpoint.h5]
       [--precision float|double] [--steps 1 5] [--unnetted]
(run `bash scripts/run.sh` first: it writes the data set and the checkpoint)
"""
import argparse

import numpy as np
import torch

import egret
from torch_comparison import best_of, blas_name, unnetted_copy

BIN_US, WINDOW_US, POOLING = 5000, 1500000, 0.25
# The main job's default synthetic set (run `build/egret` once to make it).
GESTURES = "out/dvs_gesture_synthetic/v2_users23+6_lightings2_seed1"


def held_out_samples(n):
    out = []
    for g in egret.load_gesture_split(GESTURES, "test")[:n]:
        ev = egret.crop_time(g["events"], 0, WINDOW_US)
        ev, size = egret.downsample(ev, (128, 128), POOLING)
        t, ch, val, channels = egret.to_input(ev, size, BIN_US)
        end = WINDOW_US * 1e-3
        out.append((egret.Sample(t, ch, val, channels=channels, end_time=end,
                                 readout_windows=[(0.2 * end, end)], labels=[g["label"]]),
                    t, ch, val, g["label"]))
    return out


def dense_input(t, ch, val, step_ms, end_ms, channels, dtype):
    steps = int(np.ceil(end_ms / step_ms))
    x = torch.zeros(steps, channels, dtype=dtype)
    k = np.minimum((np.asarray(t) / step_ms).astype(np.int64), steps - 1)
    x.index_put_((torch.from_numpy(k), torch.from_numpy(np.asarray(ch, dtype=np.int64))),
                 torch.from_numpy(np.asarray(val, dtype=np.float64)).to(dtype), accumulate=True)
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--samples", type=int, default=44)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--checkpoint", default="out/dvs_gesture/checkpoint.h5")
    ap.add_argument("--precision", choices=["float", "double"], default="float")
    ap.add_argument("--steps", type=float, nargs="+", default=[1.0, 5.0],
                    help="torch's step(s) in ms (5: the input bin)")
    ap.add_argument("--unnetted", action="store_true",
                    help="also time egret without netting inputs with releases")
    a = ap.parse_args()
    net = egret.Network.load_checkpoint(a.checkpoint, precision=a.precision)
    unnetted = unnetted_copy(net) if a.unnetted else None
    dtype = torch.float32 if a.precision == "float" else torch.float64
    data = held_out_samples(a.samples)
    samples = [d[0] for d in data]
    end_ms = WINDOW_US * 1e-3
    res = net.simulate_batch(samples, threads=1)
    correct = sum(int(np.argmax(r["logits"][0]) == d[4]) for r, d in zip(res, data))
    events = sum(r["events_processed"] for r in res)
    inputs = sum(len(d[1]) for d in data)
    print(f"torch {torch.__version__}, BLAS {blas_name()}; egret in {net.precision}, torch in "
          f"{str(dtype).replace('torch.', '')}")
    print(f"{len(samples)} held-out samples, {end_ms:.0f} ms each, {inputs / len(samples):.0f} "
          f"input events and {events / len(samples):.0f} engine events per sample; "
          f"accuracy of the checkpoint {correct}/{len(samples)}")
    gru = torch.nn.GRU(2048, 64, dtype=dtype)
    head = torch.nn.Linear(64, 11, dtype=dtype)
    labels = torch.tensor([d[4] for d in data])
    xs = {s: [dense_input(d[1], d[2], d[3], s, end_ms, 2048, dtype) for d in data]
          for s in a.steps}
    rows = []
    for threads in a.threads:
        torch.set_num_threads(threads)
        sec = {}
        sec["egret forward"] = best_of(a.reps, lambda: net.simulate_batch(samples, threads=threads))
        sec["egret forward+backward"] = best_of(
            a.reps, lambda: net.loss_and_gradient(samples, threads=threads))
        if unnetted is not None:
            sec["egret forward, un-netted"] = best_of(
                a.reps, lambda: unnetted.simulate_batch(samples, threads=threads))
            sec["egret forward+backward, un-netted"] = best_of(
                a.reps, lambda: unnetted.loss_and_gradient(samples, threads=threads))
        for s in a.steps:
            batch = torch.stack(xs[s], dim=1)  # (steps, samples, 2048)

            def fwd1():
                with torch.no_grad():
                    for x in xs[s]:
                        gru(x[:, None, :])

            def fwdb():
                with torch.no_grad():
                    gru(batch)

            def fb1():
                for i, x in enumerate(xs[s]):
                    y, _ = gru(x[:, None, :])
                    torch.nn.functional.cross_entropy(head(y[-1]), labels[i:i + 1]).backward()

            def fbb():
                y, _ = gru(batch)
                torch.nn.functional.cross_entropy(head(y[-1]), labels).backward()

            sec[f"torch GRU {s:g} ms forward, batch 1"] = best_of(a.reps, fwd1)
            sec[f"torch GRU {s:g} ms forward, batch {len(samples)}"] = best_of(a.reps, fwdb)
            sec[f"torch GRU {s:g} ms forward+backward, batch 1"] = best_of(a.reps, fb1)
            sec[f"torch GRU {s:g} ms forward+backward, batch {len(samples)}"] = best_of(a.reps, fbb)
        for name, t in sec.items():
            per = t / len(samples)
            base = sec["egret forward+backward" if "backward" in name else "egret forward"]
            rows.append((threads, name, 1e3 * per, end_ms / (1e3 * per), events / t, t / base))
    print(f"{'threads':>7}  {'what':<44} {'ms/sample':>10} {'real-time x':>11} "
          f"{'engine ev/s':>12} {'time vs egret':>13}")
    for r in rows:
        print(f"{r[0]:>7}  {r[1]:<44} {r[2]:>10.2f} {r[3]:>11.1f} {r[4]:>12.3g} {r[5]:>13.2f}")


if __name__ == "__main__":
    main()
