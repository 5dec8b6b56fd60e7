#!/usr/bin/python3
"""Overhead of the Python layer: the same work through the C++ CLI and through Python.

1. Training: `egret train` on the delay-copy task (examples/delay_copy.json, 256 training and
   64 held-out trials, batch 16, held-out evaluation every epoch) for E epochs, against the same
   epochs in Python with egret.torch (EventNetwork, torch BCE, torch.optim.Adam, clipping: the
   algorithm of `egret train`). The CLI time includes its
   start-up and output files; reported per epoch after subtracting a 0-epoch CLI run.
2. One small batch (16 delay-copy trials): forward + exact backward through
   Network.loss_and_gradient (one C++ call) vs egret.torch (forward, torch loss, backward), the
   same loss and gradient; median of 300 runs. The same for a DVS-sized batch (8 samples of
   1.5 s with 24k input events on 2048 channels, 64 units; best of 5).

usage: PYTHONPATH=build/python /usr/bin/python3 bench/bench_python_overhead.py [--egret build/egret]
       [--epochs 30] [--threads 1]
"""
import argparse
import json
import pathlib
import subprocess
import tempfile
import time

import numpy as np
import torch

import egret
import egret.torch as et

ROOT = pathlib.Path(__file__).resolve().parents[1]


def cli_seconds(binary, cfg, epochs, threads, tmp):
    cfg = json.loads(json.dumps(cfg))
    cfg["training"]["epochs"] = max(epochs, 1)
    cfg["training"]["stop_at_test_accuracy"] = 0
    cfg["output"]["dir"] = str(tmp / f"cli_{epochs}")
    cfg["output"]["checkpoint_every"] = 0
    path = tmp / f"train_{epochs}.json"
    path.write_text(json.dumps(cfg))
    t = time.perf_counter()
    args = [binary, "train", "--config", str(path), "--threads", str(threads)]
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--egret", default=str(ROOT / "build" / "egret"))
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    full = json.loads((ROOT / "examples" / "delay_copy.json").read_text())
    task = full["task"]
    net_cfg = {k: v for k, v in full.items() if k not in ("task", "training", "output")}
    train = egret.delay_copy_trials(task["train_trials"], task["seed"], bits=task["bits"])
    test = egret.delay_copy_trials(task["test_trials"], task["seed"] + 1, bits=task["bits"])
    batch = full["training"]["batch_size"]
    E = args.epochs

    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        cli_1 = min(cli_seconds(args.egret, full, 1, args.threads, tmp) for _ in range(3))
        cli_e = min(cli_seconds(args.egret, full, E + 1, args.threads, tmp) for _ in range(3))
    cli_epoch = (cli_e - cli_1) / E

    rng = np.random.default_rng(1)
    # egret.torch, the same algorithm as `egret train` (Adam, clipping at 1, theta = softplus(rho))
    model = et.EventNetwork(net_cfg, threads=args.threads)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    targets = {id(s): torch.from_numpy(s.targets) for s in train + test}
    t = time.perf_counter()
    for _ in range(E):
        order = rng.permutation(len(train))
        for s in range(0, len(order), batch):
            b = [train[i] for i in order[s:s + batch]]
            loss = bce(model(b), torch.stack([targets[id(x)] for x in b]))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        with torch.no_grad():
            bce(model(test), torch.stack([targets[id(x)] for x in test]))
    torch_epoch = (time.perf_counter() - t) / E

    # One small batch, the initial network: the same loss and gradient both ways.
    net = egret.Network(net_cfg)
    model = et.EventNetwork(net_cfg, threads=args.threads)
    b = train[:batch]
    tg = torch.stack([targets[id(x)] for x in b])
    cpp, step_t = [], []
    for _ in range(300):
        t0 = time.perf_counter()
        net.loss_and_gradient(b, loss="binary_cross_entropy", threads=args.threads)
        cpp.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        loss = bce(model(b), tg)
        model.zero_grad()
        loss.backward()
        step_t.append(time.perf_counter() - t0)
    cpp_ms, torch_ms = 1e3 * np.median(cpp), 1e3 * np.median(step_t)
    events = sum(len(x) for x in b)

    # A DVS-sized batch: 8 samples of 1.5 s, 2048 channels, ~24k input events, 64 units.
    big_cfg = {"seed": 3, "input_channels": 2048, "readout_classes": 11,
               "layers": [{"type": "continuous_egru", "units": 64, "tau_m": 20, "tau_o": 50,
                           "window_input": 20, "window_recurrent": 20, "threshold": 0.3,
                           "init": {"weight_scale": 1.0, "bias_z": 0.3, "bias_spread": 0.2}}]}
    gen = np.random.default_rng(0)
    big = []
    for k in range(8):
        n = 24000
        tt = np.sort(gen.uniform(0, 1500, n))
        big.append(egret.Sample(tt, gen.integers(0, 2048, n), gen.integers(1, 4, n).astype(float),
                                channels=2048, end_time=1500.0, readout_windows=[(300.0, 1500.0)],
                                labels=k % 11))
    big_net = egret.Network(big_cfg)
    big_model = et.EventNetwork(big_cfg, threads=args.threads)
    y = torch.tensor([x.labels[0] for x in big])
    big_cpp, big_torch = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        big_net.loss_and_gradient(big, threads=args.threads)
        big_cpp.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        loss = torch.nn.functional.cross_entropy(big_model(big)[:, 0, :], y)
        big_model.zero_grad()
        loss.backward()
        big_torch.append(time.perf_counter() - t0)
    big_cpp_ms, big_torch_ms = 1e3 * min(big_cpp), 1e3 * min(big_torch)

    print(f"delay-copy training, {E} epochs of 256 trials (batch {batch}) + 64 held-out, "
          f"{args.threads} thread(s):")
    print(f"  C++ CLI (egret train):            {1e3 * cli_epoch:7.2f} ms/epoch "
          f"(start-up and files: {1e3 * (cli_1 - cli_epoch):.0f} ms per run)")
    print(f"  Python, egret.torch + torch Adam: {1e3 * torch_epoch:7.2f} ms/epoch "
          f"({torch_epoch / cli_epoch:.2f}x the CLI)")
    print(f"one batch of {batch} trials ({events} input events): C++ forward+backward "
          f"{cpp_ms:.3f} ms (Network.loss_and_gradient, one pybind11 call); through egret.torch "
          f"(forward, torch loss, backward) {torch_ms:.3f} ms: {torch_ms / cpp_ms:.2f}x, "
          f"{torch_ms - cpp_ms:.3f} ms of Python/torch per batch")
    print(f"one DVS-sized batch (8 x 1.5 s, 2048 channels, 24k input events each, 64 units): "
          f"C++ {big_cpp_ms:.1f} ms, egret.torch {big_torch_ms:.1f} ms "
          f"({big_torch_ms / big_cpp_ms:.3f}x)")


if __name__ == "__main__":
    main()
