#!/usr/bin/python3
"""Figures of the DVS gesture main job: event raster of the input and hidden layers for the first
held-out sample, and the training curve.

Reads figure_inputs.csv, trace.h5 (h5py) and training_log.csv that `egret` (the main job) writes.
usage: /usr/bin/python3 scripts/plot_gesture.py [OUT_DIR]   (default out/dvs_gesture)
"""
import csv
import os
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CLASSES = ["hand_clapping", "right_hand_wave", "left_hand_wave", "right_arm_clockwise",
           "right_arm_counter_clockwise", "left_arm_clockwise", "left_arm_counter_clockwise",
           "arm_roll", "air_drums", "air_guitar", "other_gestures"]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "out/dvs_gesture"
    for f in ("figure_inputs.csv", "trace.h5", "training_log.csv"):
        if not os.path.exists(os.path.join(out, f)):
            sys.exit(f"plot_gesture: {os.path.join(out, f)} is missing; run the main job first")
    with open(os.path.join(out, "figure_inputs.csv")) as f:
        rows = list(csv.DictReader(f))
    t_in = [float(r["t_ms"]) for r in rows]
    ch_in = [int(r["channel"]) for r in rows]
    with h5py.File(os.path.join(out, "trace.h5"), "r") as f:
        off = f["egret/samples/offsets/layer0"][()]
        start = f["egret/samples/start_time"][0]
        label = int(f["egret/samples/label"][0])
        ts = f["spikes/layer0/timestamps"][off[0]:off[1]] - start
        ids = f["spikes/layer0/node_ids"][off[0]:off[1]]
        units = int(f["egret/metrics/layer0"].attrs["units"])
    with open(os.path.join(out, "training_log.csv")) as f:
        log = list(csv.DictReader(f))

    fig, ax = plt.subplots(1, 3, figsize=(16, 4.8), gridspec_kw={"width_ratios": [1.2, 1.2, 1]})
    ax[0].scatter(t_in, ch_in, s=0.3, c="k", marker=".", linewidths=0)
    ax[0].set_title(f"input events (first held-out sample: {CLASSES[label]})")
    ax[0].set_xlabel("time [ms]")
    ax[0].set_ylabel("channel (polarity x 32 x 32 pooled pixels)")
    ax[1].scatter(ts, ids, s=2, c="tab:blue", marker="|")
    ax[1].set_ylim(-0.5, units - 0.5)
    ax[1].set_title(f"hidden layer events ({len(ts)} events, {units} units)")
    ax[1].set_xlabel("time [ms]")
    ax[1].set_ylabel("unit")
    ep = [int(r["epoch"]) for r in log]
    ax[2].plot(ep, [100 * float(r["train_accuracy"]) for r in log], label="training")
    ax[2].plot(ep, [100 * float(r["test_accuracy"]) for r in log], label="held-out")
    ax[2].axhline(100 / 11, color="gray", ls=":", label="chance")
    ax[2].set_xlabel("epoch")
    ax[2].set_ylabel("accuracy [%]")
    ax[2].set_ylim(0, 102)
    ax[2].legend()
    ax[2].set_title("training curve")
    fig.suptitle("DVS gestures: continuous-time EGRU trained with exact event-based gradients")
    fig.tight_layout()
    path = os.path.join(out, "dvs_gesture.png")
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=100)
    os.replace(tmp, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
