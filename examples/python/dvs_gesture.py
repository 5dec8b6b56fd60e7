#!/usr/bin/python3
"""DVS gesture classification trained from Python with egret.torch.

The same pipeline as egret's main job (`bash scripts/run.sh`), written with the Python API:
camera events of a DVS128 Gesture-style directory (the synthetic set, generated on first use,
or the real dataset with --dataset) -> the first 1.5 s of each gesture -> 128x128 pooled to
32x32 (egret.downsample) -> events coalesced per pixel, polarity and 5 ms bin (egret.to_input)
-> a 64-unit continuous-time EGRU (egret.torch.EventNetwork, exact event-based gradients) ->
torch.nn.Linear readout of the output-trace mean over the last 80 % of the sample ->
cross-entropy, torch.optim.Adam.

Writes to --out: training_log.csv, checkpoint.h5, trace.h5 (held-out samples) and
dvs_gesture.png (training curve, input and hidden event rasters, c(t) of chosen units).

usage: PYTHONPATH=build/python /usr/bin/python3 examples/python/dvs_gesture.py [--epochs N]
       [--dataset DIR] [--out DIR]
"""
import argparse
import os
import sys
import time

import numpy as np
import torch
from tqdm import tqdm

import egret
import egret.torch as et

WINDOW_US = 1_500_000
BIN_US = 5000
POOLING = 0.25


def prepare(samples, desc):
    """egret.Sample per gesture: pooled, coalesced input events and one window readout."""
    out = []
    end_time = WINDOW_US * 1e-3
    for g in tqdm(samples, desc=desc, unit="sample", file=sys.stdout, leave=False):
        ev = egret.crop_time(g["events"], 0, WINDOW_US)
        ev, pooled = egret.downsample(ev, (128, 128), POOLING)
        out.append(egret.camera_sample(ev, pooled, bin_length=BIN_US, end_time=end_time,
                                       readout_windows=[(0.2 * end_time, end_time)],
                                       labels=g["label"]))
    return out, pooled


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", help="a DVS128 Gesture directory (default: the synthetic set)")
    ap.add_argument("--synthetic-dir", default="out/dvs_gesture_synthetic/python_example_v2")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--lr", type=float, default=0.005)
    ap.add_argument("--units", type=int, default=64)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--precision", choices=["float", "double"], default="float",
                    help="the scalar egret computes in (tensors are float64 in both)")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--activity-regularizer", metavar="W,HZ",
                    help="add the activity regulariser: weight and target events/unit/s")
    ap.add_argument("--state-regularizer", type=float, metavar="W",
                    help="add the state regulariser (the EGRU paper's L_act) with this weight")
    ap.add_argument("--out", default="out/python_dvs_gesture")
    ap.add_argument("--resume", metavar="STATE.pt",
                    help="continue an interrupted run from its training_state.pt (written every "
                         "epoch and on Ctrl-C), with the same options")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    t_start = time.perf_counter()

    directory = args.dataset
    if directory is None:
        directory = args.synthetic_dir
        if not os.path.exists(os.path.join(directory, "trials_to_train.txt")):
            print(f"generating the synthetic DVS gesture set in {directory} ...", flush=True)
            # A small set for a quick example: 4 training and 2 held-out users (the main job
            # uses 23 + 6, docs/datasets.md).
            s = egret.write_synthetic_gesture_dataset(directory, train_users=4, test_users=2,
                                                      gesture_us=WINDOW_US)
            print(f"  {s['trials']} recordings, {s['events']} events")
    train, pooled = prepare(egret.load_gesture_split(directory, "train"), "train samples")
    test, _ = prepare(egret.load_gesture_split(directory, "test"), "test samples")
    channels = train[0].channels
    print(f"{len(train)} training / {len(test)} test samples; {pooled[0]}x{pooled[1]} pooled "
          f"pixels x 2 polarities = {channels} channels, "
          f"{np.mean([len(s) for s in train]):.0f} input events per sample")

    config = {
        "seed": args.seed, "input_channels": channels,
        "layers": [{"type": "continuous_egru", "units": args.units, "tau_m": 20, "tau_o": 50,
                    "window_input": 20, "window_recurrent": 20, "threshold": 0.3,
                    "init": {"weight_scale": 1.0, "bias_z": -0.2, "bias_spread": 0.2}}],
        "readout_classes": 11,
        # Counts compared with a clocked layer at the input's 5 ms bin, as the main job does.
        "simulation": {"dense_step": BIN_US * 1e-3},
    }
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    regularizers = {}
    if args.activity_regularizer:
        weight, hz = (float(x) for x in args.activity_regularizer.split(","))
        regularizers["activity_regularizer"] = {"weight": weight, "target_hz": hz}
    if args.state_regularizer:
        regularizers["state_regularizer"] = {"weight": args.state_regularizer}
    model = et.EventNetwork(config, threads=args.threads, precision=args.precision, **regularizers)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    labels = {id(s): s.labels[0] for s in train + test}

    def evaluate(samples):
        with torch.no_grad():
            logits = model(samples)[:, 0, :]
            y = torch.tensor([labels[id(s)] for s in samples])
            return (torch.nn.functional.cross_entropy(logits, y).item(),
                    (logits.argmax(1) == y).double().mean().item())

    log = [("epoch", "train_loss", "train_accuracy", "test_loss", "test_accuracy", "seconds")]
    t_train = time.perf_counter()
    epoch, state_path = 0, os.path.join(args.out, "training_state.pt")
    if args.resume:
        state = et.restore_snapshot(model, opt, et.load_training_state(args.resume))
        epoch, log = state["epoch"], state["log"]
        rng.bit_generator.state = state["numpy_rng"]
        print(f"resuming from {args.resume} after epoch {epoch}")
    resume_command = " ".join([sys.executable, *sys.argv] +
                              ([] if args.resume else ["--resume", state_path]))
    # After every complete epoch: what a resumed run needs to go on bit for bit.
    last_complete = et.training_snapshot(model, opt, epoch=epoch, log=log,
                                         numpy_rng=rng.bit_generator.state)
    with et.InterruptibleTraining() as stop:
        for epoch in range(epoch + 1, args.epochs + 1):
            order = rng.permutation(len(train))
            losses, right = [], 0
            bar = tqdm(range(0, len(order), args.batch_size),
                       desc=f"epoch {epoch}/{args.epochs}", unit="batch", file=sys.stdout,
                       leave=False)
            for start in bar:
                if stop:  # Ctrl-C: keep the last complete epoch, say how to go on
                    bar.close()
                    et.save_training_state(state_path, last_complete)
                    print(f"{stop.name} during epoch {epoch}: wrote {state_path} after epoch "
                          f"{last_complete['epoch']}, the last complete one\n"
                          f"resume with: {resume_command}", flush=True)
                    sys.exit(stop.exit_status)
                batch = [train[i] for i in order[start:start + args.batch_size]]
                y = torch.tensor([labels[id(s)] for s in batch])
                logits = model(batch)[:, 0, :]
                loss = torch.nn.functional.cross_entropy(logits, y) + model.regularization
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                losses.append(loss.item() * len(batch))
                right += int((logits.argmax(1) == y).sum())
                bar.set_postfix(loss=f"{loss.item():.3f}")
            test_loss, test_acc = evaluate(test)
            log.append((epoch, sum(losses) / len(train), right / len(train), test_loss, test_acc,
                        time.perf_counter() - t_train))
            print(f"epoch {epoch:3d}: train loss {log[-1][1]:.4f}, accuracy "
                  f"{100 * log[-1][2]:.1f} %; held-out loss {test_loss:.4f}, accuracy "
                  f"{100 * test_acc:.1f} % ({log[-1][5]:.1f} s)", flush=True)
            last_complete = et.training_snapshot(model, opt, epoch=epoch, log=log,
                                                 numpy_rng=rng.bit_generator.state)
            et.save_training_state(state_path, last_complete)

    net = model.to_network()
    results = net.simulate_batch(test, threads=args.threads)
    events = sum(r["events_per_layer"][0] for r in results)
    seconds = sum(r["end_time"] for r in results) * 1e-3
    rate = events / (args.units * seconds)
    print(f"held-out accuracy {100 * log[-1][4]:.1f} % (chance {100 / 11:.1f} %); hidden activity "
          f"{rate:.1f} events/unit/s, activity sparsity {egret.activity_sparsity(results)}; "
          f"total {time.perf_counter() - t_start:.1f} s")
    log_path = os.path.join(args.out, "training_log.csv")
    with open(log_path + ".tmp", "w") as f:  # complete or absent, never half-written
        f.writelines(",".join(str(x) for x in row) + "\n" for row in log)
    os.replace(log_path + ".tmp", log_path)
    net.save_checkpoint(os.path.join(args.out, "checkpoint.h5"), epoch=args.epochs)
    net.write_trace(os.path.join(args.out, "trace.h5"), test,
                    labels=[labels[id(s)] for s in test], command_line=" ".join(sys.argv))
    plot(net, test[0], log, os.path.join(args.out, "dvs_gesture.png"))
    print(f"wrote {args.out}/training_log.csv, checkpoint.h5, trace.h5, dvs_gesture.png")
    return log[-1][4]


def plot(net, sample, log, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = np.linspace(0, sample.end_time, 3000)
    r = net.simulate(sample.t, sample.channel, sample.value, end_time=sample.end_time,
                     snapshot_times=grid)
    c = r["snapshots"]["layers"][0]["c"]
    theta = net.parameters()["layer0.theta"]
    counts = np.bincount(r["unit"], minlength=len(theta))
    active = np.flatnonzero(counts)  # three active units: quartiles of the event count
    order = active[np.argsort(counts[active])]
    chosen = [order[int(q * (len(order) - 1))] for q in (0.25, 0.5, 0.75)] if len(order) else []
    fig, axes = plt.subplots(2, 2, figsize=(13, 8))
    ax = axes[0, 0]
    ax.scatter(sample.t, sample.channel, s=0.2, c="k")
    ax.set_title(f"input events ({egret.GESTURE_CLASSES[sample.labels[0]]})")
    ax.set_xlabel("time [ms]")
    ax.set_ylabel("channel (polarity, y, x)")
    ax = axes[0, 1]
    ax.scatter(r["time"], r["unit"], s=2, c="C3")
    ax.set_title(f"hidden events ({len(r['time'])})")
    ax.set_xlabel("time [ms]")
    ax.set_ylabel("unit")
    ax = axes[1, 0]
    for k, u in enumerate(chosen):
        ax.plot(grid, c[:, u], color=f"C{k}", lw=0.8, label=f"c unit {u}")
        ax.axhline(theta[u], color=f"C{k}", ls=":")
    shown = grid <= 200
    ax.set_xlim(0, min(200, sample.end_time))
    if len(chosen):
        visible = c[shown][:, chosen]
        ax.set_ylim(min(visible.min(), 0) - 0.02, max(visible.max(), theta[chosen].max()) + 0.02)
    ax.set_title("c(t) of three active units (event-count quartiles), thresholds dotted")
    ax.set_xlabel("time [ms]")
    ax.legend(fontsize=8)
    rows = np.array(log[1:], dtype=float)
    ax = axes[1, 1]
    ax.plot(rows[:, 0], 100 * rows[:, 2], "o-", label="train")
    ax.plot(rows[:, 0], 100 * rows[:, 4], "o-", label="held-out")
    ax.set_xlabel("epoch")
    ax.set_ylabel("accuracy [%]")
    ax.set_ylim(0, 100)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path + ".tmp.png", dpi=90)
    os.replace(path + ".tmp.png", path)
    plt.close(fig)


if __name__ == "__main__":
    main()
