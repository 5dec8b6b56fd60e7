"""A discrete-time EGRU trains on the delay-copy task (examples/delay_copy_discrete.json) to 100 %
bitwise accuracy, from the CLI (`egret train`) and from Python (egret.torch with a torch
optimizer); both are then scored on fresh trials never used for training or stopping."""
import copy
import json

import numpy as np
import torch

import egret
import egret.torch as et
from conftest import ROOT, run

CONFIG = ROOT / "examples" / "delay_copy_discrete.json"


def task_trials(task, trials, seed):
    return egret.delay_copy_trials(
        trials, seed, bits=task["bits"], delay_min=task["delay_min"], delay_max=task["delay_max"],
        recall_begin=task["recall_begin"], recall_end=task["recall_end"],
        quiet_window=task["quiet_window"], quiet_begin=task["quiet_begin"],
        quiet_end=task["quiet_end"])


def bitwise_accuracy(logits, samples):
    targets = np.stack([s.targets for s in samples])
    return float(((np.asarray(logits) > 0) == (targets > 0.5)).mean())


def test_egret_train_reaches_100_percent_on_fresh_trials(egret_bin, tmp_path):
    r = run([egret_bin, "train", "--config", CONFIG, "--out", tmp_path / "out"])
    assert r.returncode == 0, r.stderr
    assert "final held-out bitwise accuracy: 100.0%" in r.stdout, r.stdout[-2000:]
    net = egret.Network.load_checkpoint(str(tmp_path / "out" / "checkpoint.h5"))
    assert net.layer_types == ["discrete_egru"]
    task = json.loads(CONFIG.read_text())["task"]
    fresh = task_trials(task, 256, task["seed"] + 100)
    logits = np.stack([np.stack(res["logits"]) for res in net.simulate_batch(fresh)])
    assert bitwise_accuracy(logits, fresh) == 1.0


def test_egret_torch_reaches_100_percent_on_fresh_trials():
    """The stopping rule of `egret train` (held-out accuracy 100 % for stop_patience consecutive
    epochs), then 256 fresh trials, scored with the parameters of the streak's epoch of lowest
    held-out loss (the checkpoint a trainer with early stopping keeps) rather than of its last.

    Why: training is chaotic. The float64 readout (nn.Linear) rounds as the BLAS torch loads
    does (reference BLAS, OpenBLAS and its kernel for the CPU), and a relative change of 1e-15 in
    the readout's initial weights, or of 1e-12 in all parameters, can give another trajectory
    after ~35 epochs, whose streak ends anywhere between epochs ~115 and ~240 (of 300). Late in
    training a few fresh bits are wrong at some epochs while the 64 held-out trials are all
    right: over 31 runs, 30 of them perturbed so, the parameters of an epoch completing a
    20-epoch streak missed 100 % on the fresh trials at 0.6 % of those epochs, the streak's
    lowest-loss epoch at 0.2 %: where the streak ends, a matter of rounding, then decides the
    outcome less often. Nothing is selected on the fresh trials, and all of them must be right."""
    cfg = json.loads(CONFIG.read_text())
    task, training = cfg.pop("task"), cfg.pop("training")
    cfg.pop("output")
    train = task_trials(task, task["train_trials"], task["seed"])
    test = task_trials(task, task["test_trials"], task["seed"] + 1)
    fresh = task_trials(task, 256, task["seed"] + 100)
    torch.manual_seed(1)
    rng = np.random.default_rng(1)
    model = et.EventNetwork(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=training["learning_rate"])
    bce = torch.nn.functional.binary_cross_entropy_with_logits

    def targets(samples):
        return torch.from_numpy(np.stack([s.targets for s in samples]))

    with torch.no_grad():
        before = bitwise_accuracy(model(test), test)
    assert before < 0.9, f"held-out accuracy {before:.3f} before training: the task is trivial"
    history = []  # held-out accuracy per epoch, for the failure messages
    streak, best = 0, None  # best: (held-out loss, epoch, parameters) within the current streak
    for epoch in range(1, training["epochs"] + 1):
        order = rng.permutation(len(train))
        for start in range(0, len(order), training["batch_size"]):
            batch = [train[i] for i in order[start:start + training["batch_size"]]]
            loss = bce(model(batch), targets(batch))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), training["clip_norm"])
            opt.step()
        with torch.no_grad():
            logits = model(test)
            history.append(bitwise_accuracy(logits, test))
            if history[-1] == 1.0:
                streak += 1
                held_out_loss = float(bce(logits, targets(test)))
                if best is None or held_out_loss < best[0]:
                    best = (held_out_loss, epoch, copy.deepcopy(model.state_dict()))
            else:
                streak, best = 0, None
        if streak >= training["stop_patience"]:
            break
    trace = " ".join(f"{100 * a:.1f}" for a in history)
    assert streak >= training["stop_patience"], f"held-out accuracy per epoch (%): {trace}"
    model.load_state_dict(best[2])
    with torch.no_grad():
        assert bitwise_accuracy(model(test), test) == 1.0
        fresh_accuracy = bitwise_accuracy(model(fresh), fresh)
    assert fresh_accuracy == 1.0, (
        f"{100 * fresh_accuracy:.2f} % on fresh trials with the parameters of epoch {best[1]} "
        f"(streak ended at epoch {epoch}); held-out accuracy per epoch (%): {trace}")
