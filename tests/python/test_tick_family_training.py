"""Each tick-schedule family of the compatibility layer trains on the delay-copy task well above
chance (50 % bitwise), from the CLI (`egret train`) and from Python (egret.torch with a torch
optimizer), with its example configuration examples/delay_copy_<family>.json; both are then
scored on fresh trials never used for training or stopping."""
import copy
import json
import re

import numpy as np
import pytest
import torch

import egret
import egret.torch as et
from conftest import ROOT, run
from test_discrete_training import bitwise_accuracy, task_trials

FAMILIES = ["lif", "bmru", "surnn", "su_snn", "sugru", "ds_gru", "spiking_gated"]
WELL_ABOVE_CHANCE = 0.9
# egret.torch epochs per family: 40, except suRNN, whose plain tanh recurrence learns the delay
# more slowly (about 60 epochs to 0.99 with its example's settings).
TORCH_EPOCHS = {"surnn": 70}
# The egret.torch run keeps the parameters of its best validation score, checked every few
# epochs, as `egret train` stops on its held-out score: a float run's last epoch can land on a
# dip (LIF on an AVX2 machine, 2026-11-27: 0.92-1.00 from epoch 10 to 35, 0.85 at epoch 40,
# 0.998 at 45), and which epoch dips depends on the CPU's vector width through the rounding.
VALIDATE_EVERY = 5


def config_of(family):
    return ROOT / "examples" / f"delay_copy_{family}.json"


@pytest.mark.parametrize("family", FAMILIES)
def test_egret_train_well_above_chance_on_fresh_trials(family, egret_bin, tmp_path):
    CONFIG = config_of(family)
    r = run([egret_bin, "train", "--config", CONFIG, "--out", tmp_path / "out"])
    assert r.returncode == 0, r.stderr
    final = re.search(r"final held-out bitwise accuracy: ([0-9.]+)%", r.stdout)
    assert final and float(final.group(1)) >= 100 * WELL_ABOVE_CHANCE, r.stdout[-2000:]
    net = egret.Network.load_checkpoint(str(tmp_path / "out" / "checkpoint.h5"))
    assert net.layer_types == [family]
    task = json.loads(CONFIG.read_text())["task"]
    fresh = task_trials(task, 256, task["seed"] + 100)
    logits = np.stack([np.stack(res["logits"]) for res in net.simulate_batch(fresh)])
    accuracy = bitwise_accuracy(logits, fresh)
    print(f"egret train, {family}: {accuracy:.3f} bitwise on 256 fresh trials")
    assert accuracy >= WELL_ABOVE_CHANCE


@pytest.mark.parametrize("family", FAMILIES)
def test_egret_torch_well_above_chance_on_fresh_trials(family):
    cfg = json.loads(config_of(family).read_text())
    task, training = cfg.pop("task"), cfg.pop("training")
    cfg.pop("output")
    train = task_trials(task, task["train_trials"], task["seed"])
    fresh = task_trials(task, 256, task["seed"] + 100)
    validation = task_trials(task, 256, task["seed"] + 200)
    torch.manual_seed(1)
    rng = np.random.default_rng(1)
    # suRNN in double: its float run (same gradients within 2.4e-6 at the start,
    # tests/python/test_precision.py) stays on the 0.77 plateau for 70 epochs where the double
    # run leaves it at epoch 55 (measured 2026-11-26).
    model = et.EventNetwork(cfg, precision="double" if family == "surnn" else None)
    opt = torch.optim.Adam(model.parameters(), lr=training["learning_rate"])
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    epochs = TORCH_EPOCHS.get(family, 40)
    best_score, best_state = -1.0, None
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(train))
        for start in range(0, len(order), training["batch_size"]):
            batch = [train[i] for i in order[start:start + training["batch_size"]]]
            targets = torch.from_numpy(np.stack([s.targets for s in batch]))
            loss = bce(model(batch), targets)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), training["clip_norm"])
            opt.step()
        if epoch % VALIDATE_EVERY == 0 or epoch == epochs:
            with torch.no_grad():
                score = bitwise_accuracy(model(validation), validation)
            if score > best_score:
                best_score, best_state = score, copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    with torch.no_grad():
        accuracy = bitwise_accuracy(model(fresh), fresh)
    print(f"egret.torch, {family}, {epochs} epochs: {accuracy:.3f} bitwise on 256 fresh trials")
    assert accuracy >= WELL_ABOVE_CHANCE
