"""A discrete-time EGRU trains on the delay-copy task (examples/delay_copy_discrete.json) to 100 %
bitwise accuracy, from the CLI (`egret train`) and from Python (egret.torch with a torch
optimizer); both are then scored on fresh trials never used for training or stopping."""
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

    streak = 0
    for _ in range(training["epochs"]):
        order = rng.permutation(len(train))
        for start in range(0, len(order), training["batch_size"]):
            batch = [train[i] for i in order[start:start + training["batch_size"]]]
            loss = bce(model(batch), targets(batch))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), training["clip_norm"])
            opt.step()
        with torch.no_grad():
            streak = streak + 1 if bitwise_accuracy(model(test), test) == 1.0 else 0
        if streak >= training["stop_patience"]:
            break
    assert streak >= training["stop_patience"]
    with torch.no_grad():
        assert bitwise_accuracy(model(fresh), fresh) == 1.0
