#!/usr/bin/python3
"""Delay-copy task (EGRU paper, Sec. 4.1) trained from Python with egret.torch.

A 2-bit pattern arrives at the start, a 30-40 ms delay follows, then a recall cue; the readout of
the output traces must reproduce the pattern in a window after the cue and stay at zero in a
window before it. The network (examples/delay_copy.json: 2 continuous-time EGRU units) runs in
egret's event-driven C++ core; its gradients are egret's exact adjoint; the readout is a
torch.nn.Linear, the loss torch's BCE-with-logits and the optimizer torch.optim.Adam.

Training stops when the held-out bitwise accuracy has been 100 % for --patience epochs; a fresh
set of trials never used for stopping is then scored. Writes to --out: training_log.csv,
checkpoint.h5 (egret.Network.load_checkpoint reads it), trace.h5 (held-out trials) and
delay_copy.png (training curve, input/event raster, c(t) of both units, output traces).

usage: PYTHONPATH=build/python /usr/bin/python3 examples/python/delay_copy.py [--epochs N] [--out DIR]
"""
import argparse
import json
import os
import pathlib
import sys
import time

import numpy as np
import torch
from tqdm import tqdm

import egret
import egret.torch as et

ROOT = pathlib.Path(__file__).resolve().parents[2]


def accuracy(logits: torch.Tensor, targets: torch.Tensor):
    """Bits right over all readouts (quiet and recall windows), and over the recall window only."""
    right = (logits > 0) == (targets > 0.5)
    return right.double().mean().item(), right[:, -1].double().mean().item()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--patience", type=int, default=20,
                    help="stop after this many consecutive epochs at 100%% held-out accuracy")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--threads", type=int, default=0, help="TBB threads per batch (0: all cores)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="out/python_delay_copy")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--resume", metavar="STATE.pt",
                    help="continue an interrupted run from its training_state.pt (written every "
                         "epoch and on Ctrl-C), with the same options")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    cfg = json.loads((ROOT / "examples" / "delay_copy.json").read_text())
    task = cfg.pop("task")
    for section in ("training", "output"):
        cfg.pop(section)
    settings = dict(bits=task["bits"], delay_min=task["delay_min"], delay_max=task["delay_max"],
                    recall_begin=task["recall_begin"], recall_end=task["recall_end"],
                    quiet_window=task["quiet_window"], quiet_begin=task["quiet_begin"],
                    quiet_end=task["quiet_end"])
    train = egret.delay_copy_trials(task["train_trials"], task["seed"], **settings)
    test = egret.delay_copy_trials(task["test_trials"], task["seed"] + 1, **settings)
    fresh = egret.delay_copy_trials(256, task["seed"] + 100, **settings)
    targets = {id(s): torch.from_numpy(s.targets) for s in train + test + fresh}

    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = et.EventNetwork(cfg, threads=args.threads)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    bce = torch.nn.functional.binary_cross_entropy_with_logits

    def evaluate(samples):
        with torch.no_grad():
            logits = model(samples)
            tg = torch.stack([targets[id(s)] for s in samples])
            return bce(logits, tg).item(), *accuracy(logits, tg)

    log = [("epoch", "train_loss", "test_loss", "test_accuracy", "test_recall_accuracy", "seconds")]
    _, acc0, _ = evaluate(test)
    print(f"delay-copy: {len(train)} training / {len(test)} held-out trials, "
          f"{sum(p.numel() for p in model.parameters())} trainable parameters; "
          f"held-out accuracy before training {100 * acc0:.1f} %")
    t_start = time.perf_counter()
    streak, epoch = 0, 0
    state_path = os.path.join(args.out, "training_state.pt")

    def snapshot():  # after a complete epoch: what a resumed run needs to go on bit for bit
        return et.training_snapshot(model, opt, epoch=epoch, streak=streak, log=log,
                                    numpy_rng=rng.bit_generator.state)

    if args.resume:
        state = et.restore_snapshot(model, opt, et.load_training_state(args.resume))
        epoch, streak, log = state["epoch"], state["streak"], state["log"]
        rng.bit_generator.state = state["numpy_rng"]
        print(f"resuming from {args.resume} after epoch {epoch}")
    resume_command = " ".join([sys.executable, *sys.argv] +
                              ([] if args.resume else ["--resume", state_path]))
    last_complete = snapshot()
    first = epoch + 1 if streak < args.patience else args.epochs + 1  # a finished run: none
    bar = tqdm(range(first, args.epochs + 1), desc="delay-copy", unit="epoch",
               file=sys.stdout)
    with et.InterruptibleTraining() as stop:
        for epoch in bar:
            order = rng.permutation(len(train))
            losses = []
            for start in range(0, len(order), args.batch_size):
                if stop:  # Ctrl-C: keep the last complete epoch, say how to go on
                    bar.close()
                    et.save_training_state(state_path, last_complete)
                    print(f"{stop.name} during epoch {epoch}: wrote {state_path} after epoch "
                          f"{last_complete['epoch']}, the last complete one\n"
                          f"resume with: {resume_command}", flush=True)
                    sys.exit(stop.exit_status)
                batch = [train[i] for i in order[start:start + args.batch_size]]
                tg = torch.stack([targets[id(s)] for s in batch])
                loss = bce(model(batch), tg)
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                losses.append(loss.item())
            test_loss, test_acc, recall_acc = evaluate(test)
            log.append((epoch, float(np.mean(losses)), test_loss, test_acc, recall_acc,
                        time.perf_counter() - t_start))
            bar.set_postfix(loss=f"{np.mean(losses):.4f}", held_out=f"{100 * test_acc:.1f}%")
            streak = streak + 1 if test_acc == 1.0 else 0
            last_complete = snapshot()
            et.save_training_state(state_path, last_complete)
            if streak >= args.patience:
                break
    bar.close()
    seconds = time.perf_counter() - t_start
    _, fresh_acc, fresh_recall = evaluate(fresh)
    first_100 = next((r[0] for r in log[1:] if r[3] == 1.0), None)
    print(f"held-out accuracy {100 * log[-1][3]:.1f} % after {epoch} epochs ({seconds:.1f} s); "
          f"first at 100 %: epoch {first_100}")
    print(f"fresh trials (never used for stopping): {100 * fresh_acc:.1f} % of bits "
          f"({100 * fresh_recall:.1f} % in the recall window)")

    log_path = os.path.join(args.out, "training_log.csv")
    with open(log_path + ".tmp", "w") as f:  # complete or absent, never half-written
        f.writelines(",".join(str(x) for x in row) + "\n" for row in log)
    os.replace(log_path + ".tmp", log_path)
    net = model.to_network()
    net.save_checkpoint(os.path.join(args.out, "checkpoint.h5"), epoch=epoch)
    labels = [int(s.targets[-1] @ [1, 2]) for s in test]  # the pattern as a number
    net.write_trace(os.path.join(args.out, "trace.h5"), test, labels=labels,
                    command_line=" ".join(sys.argv))
    if not args.no_plot:
        plot(net, test, log, os.path.join(args.out, "delay_copy.png"))
    print(f"wrote {args.out}/training_log.csv, checkpoint.h5, trace.h5"
          + ("" if args.no_plot else ", delay_copy.png"))
    return fresh_acc


def plot(net, test, log, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # One held-out trial per pattern.
    chosen = {}
    for s in test:
        chosen.setdefault(tuple(s.targets[-1]), s)
    trials = [chosen[k] for k in sorted(chosen)]
    theta = net.parameters()["layer0.theta"]
    fig, axes = plt.subplots(3, len(trials) + 1, figsize=(4 * (len(trials) + 1), 8),
                             gridspec_kw={"height_ratios": [1, 3, 2]})
    for col, s in enumerate(trials):
        grid = np.linspace(0, s.end_time, 1500)
        r = net.simulate(s.t, s.channel, s.value, end_time=s.end_time, snapshot_times=grid)
        snap = r["snapshots"]
        ax = axes[0, col]
        ax.eventplot([s.t[s.channel == k] for k in range(s.channels)], colors="k")
        ax.set_yticks(range(s.channels), [f"bit {k}" for k in range(s.channels - 1)] + ["cue"])
        ax.set_title(f"pattern {tuple(int(b) for b in s.targets[-1])}")
        ax = axes[1, col]
        for u in range(2):
            ax.plot(snap["time"], snap["layers"][0]["c"][:, u], label=f"c unit {u}")
            ax.axhline(theta[u], ls=":", color=f"C{u}")
            ev = r["time"][r["unit"] == u]
            ax.plot(ev, np.full(len(ev), theta[u]), "|", color=f"C{u}", ms=12)
        ax.set_ylabel("c(t), threshold, events")
        ax = axes[2, col]
        for u in range(2):
            ax.plot(snap["time"], snap["layers"][0]["o"][:, u], label=f"o unit {u}")
        for (a, b), name in zip(s.readout_windows, ("quiet", "recall")):
            ax.axvspan(a, b, color="0.85" if name == "quiet" else "0.7", alpha=0.6)
        ax.set_xlabel("time [ms]")
        ax.set_ylabel("o(t); readout windows")
    axes[1, 0].legend(fontsize=8)
    axes[2, 0].legend(fontsize=8)
    rows = np.array(log[1:], dtype=float)
    ax = axes[0, -1]
    ax.axis("off")
    ax = axes[1, -1]
    ax.plot(rows[:, 0], rows[:, 1], label="train loss")
    ax.plot(rows[:, 0], rows[:, 2], label="held-out loss")
    ax.set_yscale("log")
    ax.legend()
    ax = axes[2, -1]
    ax.plot(rows[:, 0], 100 * rows[:, 3], label="held-out bits")
    ax.plot(rows[:, 0], 100 * rows[:, 4], label="recall window")
    ax.set_xlabel("epoch")
    ax.set_ylabel("accuracy [%]")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path + ".tmp.png", dpi=90)
    os.replace(path + ".tmp.png", path)
    plt.close(fig)


if __name__ == "__main__":
    main()
