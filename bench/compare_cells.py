#!/usr/bin/python3
"""One comparison across cells: accuracy, activity, NeuroBench counts and estimated energy and
latency of every egret cell family on the same two tasks, in the same engine, with the same
counters (docs/cell_comparison.md has the table and figure of a full run).

Cells: continuous EGRU (exact gradients), discrete EGRU, suGRU, LIF, spiking-gated, BMRU, DS-GRU,
and a dense GRU (the suGRU with its rhythmic gate held open: every unit updates every tick, so its
counts are those of a GRU; only zero inputs are skipped, as NeuroBench's effective counts do).
Every network: one hidden layer of --units units and a linear readout (not counted, the same for
all) of the output trace's mean over the second half of each sample; Adam, cross-entropy, trained
with egret.torch (the C++ forward and egret's backward passes).

Tasks:
  fmnist  sequential Fashion-MNIST from Debian's dataset-fashion-mnist package: 28 rows of 28
          pixels as 28 ticks of 1 ms, pixels / 255 as graded input events (zeros send nothing).
  dvs     the synthetic DVS128 Gesture set (as the main job): 1.5 s per gesture, 32x32 pooled
          pixels x 2 polarities, events counted per pixel and 5 ms bin; tick families step every
          5 ms, the continuous EGRU's dense comparison is at the same 5 ms.

For each (task, cell) it writes the held-out trace, runs egret.estimate on the Loihi
(loihi_davies2018) and CMOS (cmos45_horowitz2014) profiles, and appends to results.json; then
draws comparison.png (accuracy against estimated Loihi energy) and table.md.

usage: PYTHONPATH=build/python /usr/bin/python3 bench/compare_cells.py [--tasks fmnist,dvs]
       [--cells all|continuous_egru,...] [--epochs-fmnist 6] [--epochs-dvs 12] [--out DIR]
"""
import argparse
import gzip
import json
import os
import sys
import time

import numpy as np
import torch

import egret
import egret.torch as et

CELLS = ["continuous_egru", "discrete_egru", "sugru", "lif", "spiking_gated", "bmru", "ds_gru",
         "dense_gru"]
PROFILES = ["loihi_davies2018", "cmos45_horowitz2014"]
# Fewer epochs where a cell's cost grows with training: the continuous EGRU on Fashion-MNIST rows
# (no activity regularizer in egret.torch) fires more as it learns, and its epochs slow from
# 20 s to 6 minutes by the eighth.
EPOCHS = {("fmnist", "continuous_egru"): 5}
FMNIST_DIR = "/usr/share/datasets/fashion-mnist"


def layer(cell, units, dt, task):
    """The hidden layer of each cell, with the settings used for both tasks."""
    if cell == "continuous_egru":
        if task == "dvs":  # the main job's layer before its silent start (bias_z -0.2 now)
            return {"type": cell, "units": units, "tau_m": 20, "tau_o": 50, "window_input": 20,
                    "window_recurrent": 20, "threshold": 0.3,
                    "init": {"weight_scale": 1.0, "bias_z": 0.3, "bias_spread": 0.2}}
        return {"type": cell, "units": units, "tau_m": 2, "tau_o": 10, "window_input": 1,
                "window_recurrent": 4, "threshold": 0.3,
                "init": {"weight_scale": 1.0, "bias_z": 0.5, "bias_spread": 0.2}}
    base = {"type": "sugru" if cell == "dense_gru" else cell, "units": units, "dt": dt}
    if cell == "discrete_egru":
        base.update({"tau_o": 10 * dt, "threshold": 0.2})
    if cell == "sugru":
        base["gate"] = {"bias": 0.0, "period_min": 2 * dt, "period_max": 20 * dt}
    if cell == "dense_gru":  # the rhythmic gate held open: a GRU
        base["gate"] = {"bias": 10.0, "amplitude": 0.0}
    if cell == "lif":
        base.update({"tau_mem": 10 * dt, "tau_o": 10 * dt, "threshold": 1.0})
    return base


def read_idx(path, kind):
    """An IDX file of the Fashion-MNIST package (gzip), checked against its header."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[:4], "big")
    dims = magic & 0xFF
    if magic >> 8 != 0x08 or dims not in (1, 3):
        raise ValueError(f"{path}: not an IDX file of unsigned bytes (magic {magic:#x})")
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    body = data[4 + 4 * dims:]
    if len(body) != int(np.prod(shape)):
        raise ValueError(f"{path}: {len(body)} bytes of data for shape {shape}")
    return np.frombuffer(body, dtype=np.uint8).reshape(shape)


def fmnist_samples(split, count, seed):
    prefix = "train" if split == "train" else "t10k"
    images = read_idx(f"{FMNIST_DIR}/{prefix}-images-idx3-ubyte.gz", "images")
    labels = read_idx(f"{FMNIST_DIR}/{prefix}-labels-idx1-ubyte.gz", "labels")
    pick = np.random.default_rng(seed).choice(len(images), count, replace=False)
    out = []
    for i in pick:
        img = images[i].astype(np.float64) / 255.0
        row, col = np.nonzero(img)
        out.append(egret.Sample(row + 0.5, col, img[row, col], channels=28, end_time=28.0,
                                readout_windows=[(14.0, 28.0)], labels=int(labels[i])))
    return out, 10, 1.0


def dvs_samples(split, directory):
    window_us, bin_us = 1_500_000, 5000
    end = window_us * 1e-3
    out = []
    for g in egret.load_gesture_split(directory, split):
        ev = egret.crop_time(g["events"], 0, window_us)
        ev, pooled = egret.downsample(ev, (128, 128), 0.25)
        out.append(egret.camera_sample(ev, pooled, bin_length=bin_us, end_time=end,
                                       readout_windows=[(0.5 * end, end)], labels=g["label"]))
    return out, 11, 5.0


def train_cell(cell, task, train, test, classes, dt, args):
    epochs = EPOCHS.get((task, cell), args.epochs_fmnist if task == "fmnist" else args.epochs_dvs)
    batch = 32 if task == "fmnist" else 8
    config = {"seed": args.seed, "input_channels": train[0].channels,
              "layers": [layer(cell, args.units, dt, task)], "readout_classes": classes,
              "simulation": {"dense_step": dt}}
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = et.EventNetwork(config, threads=args.threads)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    labels = {id(s): s.labels[0] for s in train + test}
    t0 = time.perf_counter()
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(train))
        total, right = 0.0, 0
        for start in range(0, len(order), batch):
            b = [train[i] for i in order[start:start + batch]]
            y = torch.tensor([labels[id(s)] for s in b])
            logits = model(b)[:, 0, :]
            loss = torch.nn.functional.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            total += loss.item() * len(b)
            right += int((logits.argmax(1) == y).sum())
        print(f"  {task} {cell} epoch {epoch}/{epochs}: loss {total / len(train):.3f}, "
              f"training accuracy {100 * right / len(train):.1f} % "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    with torch.no_grad():
        logits = model(test)[:, 0, :]
    y = torch.tensor([labels[id(s)] for s in test])
    accuracy = float((logits.argmax(1) == y).double().mean())
    return model.to_network(), accuracy, time.perf_counter() - t0, epochs, batch


def measure(net, test, task, cell, dt, out_dir):
    trace = os.path.join(out_dir, f"{task}_{cell}.h5")
    net.write_trace(trace, test, labels=[s.labels[0] for s in test], dense_step=dt)
    m = egret.read_trace(trace)["layers"][0]["metrics"]
    row = {k: m[k] for k in ("Effective_MACs", "Effective_ACs", "Dense", "ActivationSparsity",
                             "MembraneUpdates", "events_per_unit_per_s", "dense_step_ms")}
    for p in PROFILES:
        e = egret.estimate(trace, p)
        row[f"energy_j_{p}"] = e["energy_j_per_sample"]
        row[f"latency_s_{p}"] = e["latency_s_per_sample"]
    return row


def table(results):
    lines = ["| task | cell | accuracy | ActivationSparsity | Effective_MACs | Effective_ACs | "
             "Dense | Loihi energy | Loihi latency | CMOS energy | training |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lat = r["latency_s_loihi_davies2018"]
        lines.append(
            f"| {r['task']} | {r['cell']} | {100 * r['accuracy']:.1f} % | "
            f"{r['ActivationSparsity']:.3f} | {r['Effective_MACs']:.3g} | "
            f"{r['Effective_ACs']:.3g} | {r['Dense']:.3g} | "
            f"{r['energy_j_loihi_davies2018'] * 1e6:.3g} uJ | "
            f"{(lat or float('nan')) * 1e6:.3g} us | "
            f"{r['energy_j_cmos45_horowitz2014'] * 1e6:.3g} uJ | "
            f"{r['epochs']} epochs, {r['seconds']:.0f} s |")
    return "\n".join(lines) + "\n"


def figure(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = sorted({r["task"] for r in results}, reverse=True)  # fmnist, dvs
    color = {c: f"C{k}" for k, c in enumerate(CELLS)}
    fig, axes = plt.subplots(1, len(tasks), figsize=(6.5 * len(tasks), 5.2), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for r in (r for r in results if r["task"] == task):
            xs = [r[f"energy_j_{p}"] * 1e6 for p in PROFILES]
            ax.plot(xs, [100 * r["accuracy"]] * 2, color=color[r["cell"]], lw=0.8, alpha=0.5)
            for x, marker in zip(xs, ("o", "s")):
                ax.scatter(x, 100 * r["accuracy"], marker=marker, color=color[r["cell"]], s=36)
        ax.set_xscale("log")
        ax.set_xlabel("estimated energy per held-out sample [uJ]")
        ax.set_ylabel("held-out accuracy [%]")
        ax.set_title({"fmnist": "sequential Fashion-MNIST (28 rows, 64 units)",
                      "dvs": "synthetic DVS gestures (64 units)"}.get(task, task))
        ax.grid(alpha=0.3, which="both")
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], color=color[c], marker="o", ls="", label=c) for c in CELLS]
    handles += [Line2D([], [], color="k", marker="o", ls="", label="Loihi (Davies 2018)"),
                Line2D([], [], color="k", marker="s", ls="", label="CMOS 45 nm (Horowitz 2014)")]
    fig.legend(handles=handles, loc="lower center", ncol=5, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path + ".tmp.png", dpi=120)
    os.replace(path + ".tmp.png", path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default="fmnist,dvs")
    ap.add_argument("--cells", default="all")
    ap.add_argument("--units", type=int, default=64)
    ap.add_argument("--fmnist-train", type=int, default=4000)
    ap.add_argument("--fmnist-test", type=int, default=1000)
    ap.add_argument("--epochs-fmnist", type=int, default=6)
    ap.add_argument("--epochs-dvs", type=int, default=12)
    ap.add_argument("--lr", type=float, default=0.005)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--synthetic-dir", default="out/dvs_gesture_synthetic")
    ap.add_argument("--out", default="out/compare_cells")
    ap.add_argument("--plot-only", action="store_true",
                    help="redraw table.md and comparison.png from results.json")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    cells = CELLS if args.cells == "all" else args.cells.split(",")
    results_path = os.path.join(args.out, "results.json")
    results = json.load(open(results_path)) if os.path.exists(results_path) else []
    for task in [] if args.plot_only else args.tasks.split(","):
        if task == "fmnist":
            train, classes, dt = fmnist_samples("train", args.fmnist_train, args.seed)
            test, _, _ = fmnist_samples("test", args.fmnist_test, args.seed + 1)
        elif task == "dvs":
            if not os.path.exists(os.path.join(args.synthetic_dir, "trials_to_train.txt")):
                print(f"generating the synthetic DVS gesture set in {args.synthetic_dir} ...")
                egret.write_synthetic_gesture_dataset(args.synthetic_dir, gesture_us=1_500_000)
            train, classes, dt = dvs_samples("train", args.synthetic_dir)
            test, _, _ = dvs_samples("test", args.synthetic_dir)
        else:
            sys.exit(f"unknown task {task} (fmnist, dvs)")
        print(f"{task}: {len(train)} training and {len(test)} test samples, "
              f"{train[0].channels} channels", flush=True)
        for cell in cells:
            net, acc, seconds, epochs, batch = train_cell(cell, task, train, test, classes, dt,
                                                          args)
            row = {"task": task, "cell": cell, "accuracy": acc, "seconds": seconds,
                   "epochs": epochs, "batch": batch, "units": args.units, "lr": args.lr,
                   "train_samples": len(train), "test_samples": len(test)}
            row.update(measure(net, test, task, cell, dt, args.out))
            print(f"{task} {cell}: held-out accuracy {100 * acc:.1f} %, ActivationSparsity "
                  f"{row['ActivationSparsity']:.3f}, Loihi "
                  f"{row['energy_j_loihi_davies2018'] * 1e6:.3g} uJ per sample", flush=True)
            results = [r for r in results if (r["task"], r["cell"]) != (task, cell)] + [row]
            with open(results_path + ".tmp", "w") as f:
                json.dump(results, f, indent=1)
            os.replace(results_path + ".tmp", results_path)
    order = {c: i for i, c in enumerate(CELLS)}
    results.sort(key=lambda r: (r["task"], order.get(r["cell"], 99)))
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(table(results))
    figure(results, os.path.join(args.out, "comparison.png"))
    print(table(results))
    print(f"wrote {args.out}/results.json, table.md, comparison.png")


if __name__ == "__main__":
    main()
