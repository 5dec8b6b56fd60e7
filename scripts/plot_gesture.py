#!/usr/bin/python3
"""Figures of the DVS gesture main job.

dvs_gesture.png: event raster of the input and hidden layers of the first model's first seed for
the first held-out sample, and its training curve (figure_inputs.csv, trace.h5, training_log.csv).
table1.png: the EGRU paper's Table 1 analog from results.json: held-out accuracy (mean and sd over
seeds), effective operations and estimated energy per sample, accuracy against Loihi energy, and
the held-out accuracy per epoch. The values it draws are written to table1_figure.json, so a
test can check that the figure, results.json and table1.csv agree.

usage: /usr/bin/python3 scripts/plot_gesture.py [OUT_DIR]   (default out/dvs_gesture)
"""
import csv
import json
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
    fig.suptitle("DVS gestures: the first model and seed of the main job")
    fig.tight_layout()
    path = os.path.join(out, "dvs_gesture.png")
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=100)
    os.replace(tmp, path)
    print(f"wrote {path}")


def plot_table1(out):
    """table1.png and table1_figure.json from results.json."""
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    rows = res["rows"]
    names = [r["model"] for r in rows]
    acc = [100 * r["accuracy"]["mean"] for r in rows]
    acc_sd = [100 * (r["accuracy"]["sd"] or 0) for r in rows]
    ops = [r["effective_macs"]["mean"] + r["effective_acs"]["mean"] for r in rows]
    loihi = [1e6 * r["energy_j_loihi_davies2018"]["mean"] for r in rows]
    loihi_sd = [1e6 * (r["energy_j_loihi_davies2018"]["sd"] or 0) for r in rows]
    cmos = [1e6 * r["energy_j_cmos45_horowitz2014"]["mean"] for r in rows]
    colors = ["tab:blue", "tab:orange", "tab:gray", "tab:green", "tab:red"]
    fig, ax = plt.subplots(1, 4, figsize=(19, 4.6))
    x = range(len(rows))
    ax[0].bar(x, acc, yerr=acc_sd, color=colors[:len(rows)], capsize=4)
    ax[0].axhline(100 / 11, color="gray", ls=":", label="chance")
    ax[0].set_xticks(list(x), names)
    ax[0].set_ylabel("held-out accuracy [%]")
    ax[0].set_ylim(0, 100)
    ax[0].set_title(f"accuracy (mean ± sd over {len(rows[0]['seeds'])} seeds)")
    w = 0.4
    ax[1].bar([i - w / 2 for i in x], ops, w, color="0.35", label="effective MACs + ACs")
    ax[1].bar([i + w / 2 for i in x], [r["effective_macs"]["mean"] for r in rows], w,
              color="0.75", label="effective MACs")
    ax[1].set_yscale("log")
    ax[1].set_xticks(list(x), names)
    ax[1].set_title("operations per held-out sample")
    ax[1].legend(fontsize=8)
    for i, r in enumerate(rows):
        ax[2].errorbar(loihi[i], acc[i], xerr=loihi_sd[i], yerr=acc_sd[i], fmt="o",
                       color=colors[i % len(colors)], capsize=3, label=names[i])
    ax[2].set_xscale("log")
    ax[2].set_xlabel("estimated Loihi energy per sample [uJ]")
    ax[2].set_ylabel("held-out accuracy [%]")
    ax[2].set_title("accuracy against energy")
    ax[2].legend(fontsize=8)
    curves = {}
    for i, name in enumerate(names):
        per_seed = [r["test_accuracy_per_epoch"] for r in res["runs"] if r["model"] == name]
        n = min(len(c) for c in per_seed)
        mean = [100 * sum(c[e] for c in per_seed) / len(per_seed) for e in range(n)]
        curves[name] = mean
        ax[3].plot(range(1, n + 1), mean, "o-", ms=3, color=colors[i % len(colors)], label=name)
    ax[3].axhline(100 / 11, color="gray", ls=":")
    ax[3].set_xlabel("epoch")
    ax[3].set_ylabel("held-out accuracy [%] (mean over seeds)")
    ax[3].set_title("training")
    ax[3].legend(fontsize=8)
    data = "synthetic gestures (not the real DVS128 Gesture)" if res["settings"]["synthetic"] \
        else "DVS128 Gesture"
    fig.suptitle(f"{data}: {res['settings']['held_out_samples']} held-out gestures; "
                 f"{res['machine']['cpu']}, {res['machine']['cores']} cores")
    fig.tight_layout()
    path = os.path.join(out, "table1.png")
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=90)
    os.replace(tmp, path)
    drawn = {n: {"accuracy_percent": a, "accuracy_sd_percent": s, "effective_operations": o,
                 "energy_uj_loihi_davies2018": e, "energy_uj_cmos45_horowitz2014": c,
                 "held_out_accuracy_per_epoch_percent": curves[n]}
             for n, a, s, o, e, c in zip(names, acc, acc_sd, ops, loihi, cmos)}
    tmp = os.path.join(out, "table1_figure.json.tmp")
    with open(tmp, "w") as f:
        json.dump(drawn, f, indent=1)
    os.replace(tmp, os.path.join(out, "table1_figure.json"))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
    if os.path.exists(os.path.join(sys.argv[1] if len(sys.argv) > 1 else "out/dvs_gesture",
                                   "results.json")):
        plot_table1(sys.argv[1] if len(sys.argv) > 1 else "out/dvs_gesture")
