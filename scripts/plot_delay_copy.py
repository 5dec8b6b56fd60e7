#!/usr/bin/python3
"""Figure of the trained delay-copy network (like Fig. 1C-D of the EGRU paper).

Reads the CSV files `egret train` writes for the delay_copy task (figure_states.csv,
figure_events.csv, figure_inputs.csv, figure_trials.csv, figure_parameters.csv, training_log.csv) and draws, for four
held-out trials (one per pattern): the input events, the internal states c(t) of both units with
their thresholds and events, and the output traces o(t) with the quiet and recall windows; plus
the training curve.

usage: /usr/bin/python3 scripts/plot_delay_copy.py [OUT_DIR]   (default out/delay_copy)
"""
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_csv(path):
    if not os.path.exists(path):
        sys.exit(f"plot_delay_copy: {path} is missing; run `egret train --config "
                 f"examples/delay_copy.json` first")
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "out/delay_copy"
    states = read_csv(os.path.join(out, "figure_states.csv"))
    events = read_csv(os.path.join(out, "figure_events.csv"))
    inputs = read_csv(os.path.join(out, "figure_inputs.csv"))
    trials = read_csv(os.path.join(out, "figure_trials.csv"))
    log = read_csv(os.path.join(out, "training_log.csv"))
    thresholds = {int(r["unit"]): float(r["value"])
                  for r in read_csv(os.path.join(out, "figure_parameters.csv"))
                  if r["name"] == "theta"}

    state_name = list(states[0].keys())[3]  # the family's main state: c (EGRU), v (LIF)
    series = defaultdict(lambda: defaultdict(lambda: ([], [], [])))
    for r in states:
        t, c, o = series[int(r["trial"])][int(r["unit"])]
        t.append(float(r["t_ms"]))
        c.append(float(r[state_name]))
        o.append(float(r["o"]))
    ev = defaultdict(list)
    for r in events:
        ev[int(r["trial"])].append((float(r["t_ms"]), int(r["unit"])))
    inp = defaultdict(list)
    for r in inputs:
        inp[int(r["trial"])].append((float(r["t_ms"]), int(r["channel"])))

    colors = ["tab:blue", "tab:orange"]
    n = len(trials)
    fig, axes = plt.subplots(3, n + 1, figsize=(4 * (n + 1), 7.5),
                             gridspec_kw={"height_ratios": [1, 2.2, 2.2]})
    for k, tr in enumerate(trials):
        trial = int(tr["trial"])
        cue = float(tr["cue_ms"])
        end = float(tr["end_ms"])
        ax_in, ax_c, ax_o = axes[0][k], axes[1][k], axes[2][k]
        names = ["bit 0", "bit 1", "cue"]
        for t, ch in inp[trial]:
            ax_in.vlines(t, ch - 0.4, ch + 0.4, color="k", lw=2)
        ax_in.set_yticks(range(3))
        ax_in.set_yticklabels(names)
        ax_in.set_ylim(-0.6, 2.6)
        ax_in.set_xlim(0, end)
        ax_in.set_title(f"pattern {tr['pattern']} (bit 0 first)")
        for u in sorted(series[trial]):
            t, c, o = series[trial][u]
            ax_c.plot(t, c, color=colors[u % 2], lw=1.2, label=f"unit {u}")
            ax_o.plot(t, o, color=colors[u % 2], lw=1.2, label=f"unit {u}")
            if u in thresholds:
                ax_c.axhline(thresholds[u], color=colors[u % 2], ls="--", lw=0.8)
        for t, u in ev[trial]:
            if u in thresholds:
                ax_c.plot([t], [thresholds[u]], marker="|", ms=12, color=colors[u % 2])
        for ax in (ax_in, ax_c, ax_o):
            ax.axvline(cue, color="gray", lw=0.8, ls=":")
        ax_o.axvspan(float(tr["quiet_begin_ms"]), float(tr["quiet_end_ms"]), color="0.85",
                     label="quiet window (target 0)")
        ax_o.axvspan(float(tr["recall_begin_ms"]), float(tr["recall_end_ms"]), color="#cfe8cf",
                     label="recall window (target = pattern)")
        ax_c.set_xlim(0, end)
        ax_o.set_xlim(0, end)
        ax_c.set_ylabel(f"{state_name}(t)")
        ax_o.set_ylabel("output trace o(t)")
        ax_o.set_xlabel("time [ms]")
        ax_o.set_title(f"recall logits {tr['readout']}", fontsize=8)
        if k == 0:
            if len(series[trial]) <= 4:  # a legend per unit only while it stays readable
                ax_c.legend(fontsize=8, loc="lower right")
            ax_o.legend(fontsize=7, loc="upper left")
    # Training curve.
    ep = [int(r["epoch"]) for r in log]
    axes[0][n].axis("off")
    axes[1][n].plot(ep, [float(r["train_loss"]) for r in log], label="training")
    axes[1][n].plot(ep, [float(r["test_loss"]) for r in log], label="held-out")
    axes[1][n].set_ylabel("binary cross-entropy")
    axes[1][n].legend()
    axes[2][n].plot(ep, [100 * float(r["test_accuracy"]) for r in log], color="tab:green")
    axes[2][n].set_ylabel("held-out bitwise accuracy [%]")
    axes[2][n].set_xlabel("epoch")
    axes[2][n].set_ylim(0, 102)
    family = next((r["value"] for r in read_csv(os.path.join(out, "figure_parameters.csv"))
                   if r["name"] == "type"), "")
    units = len(series[int(trials[0]["trial"])])
    fig.suptitle(f"{family or 'egret'} network ({units} units) on the delay-copy task")
    fig.tight_layout()
    path = os.path.join(out, "delay_copy.png")
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
