#!/usr/bin/python3
"""egret's continuous-time EGRU against a dense torch.nn.GRU of the same size on real
event-camera recordings: the main job's 64-unit layer (out/dvs_gesture/checkpoint.h5, 2048 input
channels) fed each of the real recordings in ../shared/data, pooled to at most 32 x 32 pixels x 2
polarities and coalesced per 5 ms bin as the main job does, up to 1.5 s of each. No DVS128
Gesture recording is on this machine; these are other sensors' (Prophesee Gen3 and Gen4,
DVXplorer, ATIS), whose statistics (event rate, bursts, noise) are real. The checkpoint was
trained on synthetic gestures: the class it predicts here means nothing, the cost does.

Per recording, 1 thread for both, milliseconds per sample:
  forward:            egret Network.simulate_batch vs torch.nn.GRU(2048, 64) over the dense input
                      tensor stepping every 1 ms and every 5 ms (the input bin), batch 1;
  forward + backward: egret Network.loss_and_gradient (exact gradients; the sample is passed
                      twice and the time halved, so that no per-event input gradients are
                      computed, as in training) vs torch forward + cross-entropy + backward.
torch's BLAS is printed (Debian's torch uses the reference BLAS unless libopenblas0-pthread is
installed).

--unnetted also times egret with "simulation": {"net_input_windows": false} (every input and
release one by one, as before 2026-12-03; docs/adjoint.md §5) in the same process, alternating.

usage: PYTHONPATH=build/python /usr/bin/python3 bench/bench_real_recordings.py
       [--data ../shared/data] [--checkpoint out/dvs_gesture/checkpoint.h5] [--reps 3]
       [--precision float|double] [--unnetted]
(run `bash scripts/run.sh` first: it writes the checkpoint)
"""
import argparse
import math
import os

import numpy as np
import torch

import egret
from bench_continuous_vs_torch_gru import dense_input
from torch_comparison import best_of, blas_name, unnetted_copy

BIN_US, WINDOW_US, SIDE = 5000, 1500000, 32
RECORDINGS = [
    ("prophesee/evt2_sample.raw", "Prophesee Gen3 VGA, EVT 2.0"),
    ("prophesee/evt3_sample.raw", "Prophesee Gen4.1 HD, EVT 3.0"),
    ("tonic/sample.aedat4", "iniVation DVXplorer, AEDAT 4"),
    ("tonic/sample_ncars.dat", "ATIS (N-CARS), DAT"),
    ("tonic/sample_nmnist.bin", "ATIS (N-MNIST)"),
]


def recording_sample(path, channels):
    """The recording's first (up to) 1.5 s, pooled to at most SIDE x SIDE, as an egret.Sample."""
    ev, (w, h) = egret.read_events(path)
    if len(ev) == 0:
        raise SystemExit(f"{path}: no events")
    if w == 0 or h == 0:  # a format without the sensor size (DAT): the events' extent
        w, h = int(ev["x"].max()) + 1, int(ev["y"].max()) + 1
    t_start = int(ev["t"][0])
    window = min(WINDOW_US, int(ev["t"][-1]) - t_start + 1)
    window = BIN_US * math.ceil(window / BIN_US)
    ev = egret.crop_time(ev, t_start, t_start + window)
    n_raw = len(ev)
    factor = min(1.0, SIDE / max(w, h))
    pooled, size = egret.downsample(ev, (w, h), factor)
    t, ch, val, used = egret.to_input(pooled, size, BIN_US, t0=t_start)
    if used > channels:
        raise SystemExit(f"{path}: {used} input channels, the network has {channels}")
    end_ms = window * 1e-3
    sample = egret.Sample(t, ch, val, channels=channels, end_time=end_ms,
                          readout_windows=[(0.2 * end_ms, end_ms)], labels=[0])
    return sample, (t, ch, val), dict(sensor=(w, h), pooled=size, raw_events=n_raw,
                                      inputs=len(t), end_ms=end_ms)


def torch_times(gru, head, x, dtype, reps):
    label = torch.tensor([0])

    def forward():
        with torch.no_grad():
            gru(x[:, None, :])

    def forward_backward():
        y, _ = gru(x[:, None, :])
        torch.nn.functional.cross_entropy(head(y[-1]), label).backward()

    return best_of(reps, forward), best_of(reps, forward_backward)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--checkpoint", default="out/dvs_gesture/checkpoint.h5")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--precision", choices=["float", "double"], default="float")
    ap.add_argument("--unnetted", action="store_true",
                    help="also time egret without netting inputs with releases")
    a = ap.parse_args()
    torch.set_num_threads(1)
    net = egret.Network.load_checkpoint(a.checkpoint, precision=a.precision)
    unnetted = unnetted_copy(net) if a.unnetted else None
    channels, units = net.input_channels, net.units[0]
    dtype = torch.float32 if a.precision == "float" else torch.float64
    gru = torch.nn.GRU(channels, units, dtype=dtype)
    head = torch.nn.Linear(units, net.readout_classes, dtype=dtype)
    print(f"torch {torch.__version__}, BLAS {blas_name()}; egret in {net.precision}; 1 thread; "
          f"milliseconds per sample (torch's time over egret's in brackets)")
    print(f"{'recording':<32} {'sensor':>10} {'ms':>6} {'raw ev':>8} {'inputs':>7} "
          f"{'engine ev':>9} | {'egret':>6} {'GRU 1ms':>14} {'GRU 5ms':>14} | "
          f"{'egret f+b':>9} {'GRU 1ms f+b':>14} {'GRU 5ms f+b':>14}")
    for rel, name in RECORDINGS:
        path = os.path.join(a.data, rel)
        if not os.path.exists(path):
            raise SystemExit(f"{path}: not found (--data names the folder of the real recordings)")
        sample, (t, ch, val), info = recording_sample(path, channels)
        end_ms = info["end_ms"]
        engine = net.simulate_batch([sample], threads=1)[0]["events_processed"]
        fwd = best_of(a.reps, lambda: net.simulate_batch([sample], threads=1))
        fb = best_of(a.reps, lambda: net.loss_and_gradient([sample, sample], threads=1)) / 2
        if unnetted is not None:
            fwd_u = best_of(a.reps, lambda: unnetted.simulate_batch([sample], threads=1))
            fb_u = best_of(a.reps,
                           lambda: unnetted.loss_and_gradient([sample, sample], threads=1)) / 2
            fwd = min(fwd, best_of(a.reps, lambda: net.simulate_batch([sample], threads=1)))
            fb = min(fb, best_of(a.reps,
                                 lambda: net.loss_and_gradient([sample, sample], threads=1)) / 2)
        cells = []
        for step in (1.0, 5.0):
            x = dense_input(t, ch, val, step, end_ms, channels, dtype)
            cells.append(torch_times(gru, head, x, dtype, a.reps))
        w, h = info["sensor"]
        print(f"{name:<32} {f'{w}x{h}':>10} {end_ms:>6.0f} {info['raw_events']:>8} "
              f"{info['inputs']:>7} {engine:>9} | {1e3 * fwd:>6.1f} "
              f"{1e3 * cells[0][0]:>7.1f} ({cells[0][0] / fwd:>4.1f}x) "
              f"{1e3 * cells[1][0]:>7.1f} ({cells[1][0] / fwd:>4.1f}x) | {1e3 * fb:>9.1f} "
              f"{1e3 * cells[0][1]:>7.1f} ({cells[0][1] / fb:>4.1f}x) "
              f"{1e3 * cells[1][1]:>7.1f} ({cells[1][1] / fb:>4.1f}x)")
        if unnetted is not None:
            print(f"{'  un-netted (before 2026-12-03)':<32} {'':>10} {'':>6} {'':>8} {'':>7} "
                  f"{'':>9} | {1e3 * fwd_u:>6.1f} {'':>14} "
                  f"{1e3 * cells[1][0]:>7.1f} ({cells[1][0] / fwd_u:>4.1f}x) | "
                  f"{1e3 * fb_u:>9.1f} {'':>14} "
                  f"{1e3 * cells[1][1]:>7.1f} ({cells[1][1] / fb_u:>4.1f}x)")


if __name__ == "__main__":
    main()
