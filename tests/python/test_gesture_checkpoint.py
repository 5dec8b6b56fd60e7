"""The main job's checkpoint loads in Python: egret.Network.load_checkpoint rebuilds the trained
network from the configuration the job stores, and the held-out samples prepared as the job
prepares them (the first 1.5 s, 128x128 pooled to 32x32, events summed per 5 ms bin) give the
accuracy the job printed."""
import json
import re

import numpy as np

import egret
from conftest import run


def test_gesture_checkpoint_reloads_with_the_printed_accuracy(egret_bin, root, tmp_path):
    out = tmp_path / "g"
    r = run([egret_bin, "gesture", "--epochs", "1", "--out", out], cwd=root)
    assert r.returncode == 0, r.stderr
    m = re.search(r"held-out accuracy: [0-9.]+% \((\d+) of (\d+) test samples", r.stdout)
    assert m, r.stdout
    correct, total = int(m.group(1)), int(m.group(2))

    net = egret.Network.load_checkpoint(str(out / "checkpoint.h5"))
    assert net.units == [64] and net.input_channels == 2048 and net.readout_classes == 11
    task = json.loads(net.config)["task"]
    assert task["name"] == "dvs_gesture" and task["bin_us"] == 5000
    samples, labels = [], []
    for g in egret.load_gesture_split(str(root / task["dataset"]), "test"):
        ev = egret.crop_time(g["events"], 0, task["window_us"])
        ev, size = egret.downsample(ev, (128, 128), task["pooling"])
        t, ch, val, channels = egret.to_input(ev, size, task["bin_us"])
        end = task["window_us"] * 1e-3
        samples.append(egret.Sample(t, ch, val, channels=channels, end_time=end,
                                    readout_windows=[(0.2 * end, end)]))
        labels.append(g["label"])
    assert len(samples) == total
    res = net.simulate_batch(samples, threads=2)
    hits = sum(int(np.argmax(x["logits"][0]) == y) for x, y in zip(res, labels))
    assert hits == correct
