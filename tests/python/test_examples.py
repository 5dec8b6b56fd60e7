"""The Python examples run as a user runs them: the delay-copy example trains to 100 % bitwise
accuracy (also on fresh trials never used for stopping) and writes its files; the DVS gesture
example trains on a small synthetic set and writes its figure, checkpoint and trace."""
import os
import re
import subprocess
import sys

import h5py

import egret
from conftest import BUILD, ROOT


def run_example(name, *args, cwd):
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "python" / name), *args], cwd=cwd,
                       env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_delay_copy_example_reaches_100_percent(tmp_path):
    out = run_example("delay_copy.py", "--out", str(tmp_path / "dc"), cwd=tmp_path)
    fresh = re.search(r"fresh trials \(never used for stopping\): ([\d.]+) % of bits", out)
    assert fresh and float(fresh.group(1)) == 100.0, out[-2000:]
    assert re.search(r"held-out accuracy 100.0 % after \d+ epochs", out)
    for f in ("training_log.csv", "checkpoint.h5", "trace.h5", "delay_copy.png"):
        assert (tmp_path / "dc" / f).stat().st_size > 0, f
    net = egret.Network.load_checkpoint(str(tmp_path / "dc" / "checkpoint.h5"))
    assert net.units == [2]
    trace = egret.read_trace(str(tmp_path / "dc" / "trace.h5"))
    assert len(trace["sample_label"]) == 64


def test_dvs_gesture_example_trains_and_plots(tmp_path):
    data = tmp_path / "gestures"
    egret.write_synthetic_gesture_dataset(str(data), train_users=1, test_users=1, lightings=["led"],
                                          gesture_us=1.5e6)
    # Double, five epochs: on 11 samples in two batches a single epoch's loss is noisy (with the
    # generator of issue 37 epoch 2 is above epoch 1: 2.370 -> 2.440 -> 2.383 -> 2.336 ->
    # 2.296), so the check is that five epochs end below the first.
    out = run_example("dvs_gesture.py", "--dataset", str(data), "--epochs", "5", "--units", "16",
                      "--precision", "double", "--out", str(tmp_path / "dvs"), cwd=tmp_path)
    assert "11 training / 11 test samples" in out
    assert re.search(r"epoch +5: train loss [\d.]+", out)
    for f in ("training_log.csv", "checkpoint.h5", "trace.h5", "dvs_gesture.png"):
        assert (tmp_path / "dvs" / f).stat().st_size > 0, f
    log = (tmp_path / "dvs" / "training_log.csv").read_text().splitlines()
    assert len(log) == 6
    losses = [float(line.split(",")[1]) for line in log[1:]]
    assert losses[-1] < losses[0]  # training reduces the loss
    # The activity sparsity printed is NeuroBench's at the 5 ms bin: the trace's, which the CLI
    # (egret inspect, the main job) reports for the same samples.
    printed = re.search(r"activity sparsity ([\d.]+) \(NeuroBench, 5 ms step\)", out)
    assert printed, out[-2000:]
    with h5py.File(tmp_path / "dvs" / "trace.h5", "r") as f:
        stored = f["egret/metrics/layer0"].attrs
        assert stored["dense_step_ms"] == 5
        assert printed.group(1) == f"{stored['ActivationSparsity']:.3f}"
    # With a regulariser the training loss includes it (one epoch: the option's path runs).
    out = run_example("dvs_gesture.py", "--dataset", str(data), "--epochs", "1", "--units", "16",
                      "--precision", "double", "--activity-regularizer", "0.1,20",
                      "--out", str(tmp_path / "dvs_reg"), cwd=tmp_path)
    log = (tmp_path / "dvs_reg" / "training_log.csv").read_text().splitlines()
    assert len(log) == 2 and float(log[1].split(",")[1]) > 0
