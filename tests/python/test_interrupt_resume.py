"""Interrupt-safe training: Ctrl-C (SIGINT) or SIGTERM at a random epoch of `egret train` and of
the main job writes a resumable checkpoint of the last complete epoch, says how to resume, exits
with 128 + the signal; resuming as told gives bit for bit the parameters, optimizer state, log
and (main job) results of a run that was never interrupted, in float and in double. A resume of
the other kind of checkpoint, or with changed options, says what to run instead."""
import csv
import json
import random
import re
import signal
import subprocess

import h5py
import numpy as np
import pytest

from conftest import run

# A run that is not interrupted is compared with one interrupted at a random epoch; the epoch is
# drawn from a generator whose seed is printed in every failure message.
SEED = random.randrange(1 << 30)
RESUME = re.compile(r"^resume with: (\S+) (.*)$", re.M)  # the program as invoked, its arguments


def resume_arguments(out, egret_bin):
    m = RESUME.search(out)
    assert m and m.group(1) == str(egret_bin), out
    return m.group(2).split()


def interrupt_after(argv, lines, pattern, signal_number=signal.SIGINT, cwd=None):
    """Runs argv and sends the signal once `lines` lines of its output matched `pattern`."""
    p = subprocess.Popen([str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, bufsize=1, cwd=cwd)
    seen, out = 0, []
    for line in p.stdout:
        out.append(line)
        if re.search(pattern, line):
            seen += 1
            if seen == lines:
                p.send_signal(signal_number)
    err = p.stderr.read()
    return p.wait(), "".join(out), err


def training_state(path):
    with h5py.File(path, "r") as f:
        state = {k: f["training"][k][()] for k in ("values", "adam_m", "adam_v")}
        state["epoch"] = int(f.attrs["epoch"])
        state["optimizer_steps"] = int(f.attrs["optimizer_steps"])
        state["rng_state"] = f.attrs["rng_state"]
        state["training_loop"] = f.attrs["training_loop"]
    return state


def log_rows(path):
    """The log without its wall-clock columns."""
    rows = list(csv.DictReader(open(path)))
    for r in rows:
        del r["events_per_s"], r["seconds"]
    return rows


def assert_same_training(a, b, context):
    sa, sb = training_state(a / "checkpoint.h5"), training_state(b / "checkpoint.h5")
    for key in sa:
        same = np.array_equal(sa[key], sb[key]) if isinstance(sa[key], np.ndarray) \
            else sa[key] == sb[key]
        assert same, (context, key)
    assert log_rows(a / "training_log.csv") == log_rows(b / "training_log.csv"), context


@pytest.mark.parametrize("precision", ["float", "double"])
def test_train_interrupted_at_a_random_epoch_resumes_bit_for_bit(egret_bin, root, tmp_path,
                                                                 precision):
    # delay_copy reaches 100 % held-out accuracy near epoch 23; a patience of 100 epochs makes
    # the early-stopping streak part of the state an interrupt must keep.
    config = json.loads((root / "examples" / "delay_copy.json").read_text())
    config["training"]["stop_patience"] = 100
    cfg = tmp_path / "train.json"
    cfg.write_text(json.dumps(config))
    common = ["train", "--config", cfg, "--epochs", "150", "--precision", precision]
    whole = run([egret_bin, *common, "--out", tmp_path / "whole"])
    assert whole.returncode == 0, whole.stderr

    epoch = random.Random(SEED).randint(1, 60)
    context = f"seed {SEED}: SIGINT after epoch {epoch}, {precision}"
    rc, out, err = interrupt_after([egret_bin, *common, "--out", tmp_path / "cut"], epoch + 1,
                                   r"^epoch +\d+ ")
    assert rc == 130, (context, out, err)
    m = re.search(r"SIGINT during epoch (\d+): wrote (\S+) at epoch (\d+), the last complete one",
                  out)
    assert m, (context, out)
    saved = int(m.group(3))
    assert epoch <= saved < 150 and m.group(2) == str(tmp_path / "cut" / "checkpoint.h5")
    cut = training_state(tmp_path / "cut" / "checkpoint.h5")
    assert cut["epoch"] == saved
    rows = log_rows(tmp_path / "cut" / "training_log.csv")
    assert [int(r["epoch"]) for r in rows] == list(range(1, saved + 1)), context

    resume = resume_arguments(out, egret_bin)
    assert resume == ["train", "--resume", str(tmp_path / "cut" / "checkpoint.h5"), "--epochs",
                      "150", "--precision", precision]
    r = run([egret_bin, *resume])
    assert r.returncode == 0, (context, r.stderr)
    assert f"epoch {saved:4d}  held-out" in r.stdout
    stop = re.compile(r"stopping early at epoch \d+ of 150: .*\(stop_patience\)")
    assert stop.findall(r.stdout) == stop.findall(whole.stdout), context
    assert_same_training(tmp_path / "whole", tmp_path / "cut", context)


def test_train_sigterm_and_a_second_resume(egret_bin, root, tmp_path):
    """SIGTERM exits 143 with the same saved state; resuming a finished run trains nothing."""
    common = ["train", "--config", root / "examples" / "delay_copy_discrete.json", "--epochs",
              "40", "--out", tmp_path / "cut"]
    rc, out, _ = interrupt_after([egret_bin, *common], 3, r"^epoch +\d+ ", signal.SIGTERM)
    assert rc == 143 and "SIGTERM during epoch" in out
    resume = resume_arguments(out, egret_bin)
    assert run([egret_bin, *resume]).returncode == 0
    again = run([egret_bin, *resume])
    assert again.returncode == 0 and "nothing to train" in again.stdout
    whole = run([egret_bin, *common[:-1], tmp_path / "whole"])
    assert whole.returncode == 0
    assert_same_training(tmp_path / "whole", tmp_path / "cut", "SIGTERM")


JOB = ["--users", "3,1", "--lightings-per-user", "1", "--seeds", "3,4", "--models",
       "egret,paper", "--epochs", "3", "--units", "8", "--frame-units", "8"]


def results_without_time(path):
    res = json.loads(path.read_text())
    for part in ("runs", "rows"):
        for r in res[part]:
            del r["train_seconds"]
    return res["runs"], res["rows"]


@pytest.mark.parametrize("precision", ["float", "double"])
def test_main_job_interrupted_at_a_random_epoch_resumes_bit_for_bit(egret_bin, root, tmp_path,
                                                                    precision):
    # Same settings (and the synthetic set, in the repository's out/) as test_gesture_checkpoint.
    whole = run([egret_bin, *JOB, "--precision", precision, "--out", tmp_path / "whole"], cwd=root)
    assert whole.returncode == 0, whole.stderr
    # 4 runs of epochs 1-3: interrupt after one of the 12 epoch lines, but the last.
    line = random.Random(SEED + 1).randint(1, 11)
    context = f"seed {SEED}: SIGINT after training epoch line {line}, {precision}"
    rc, out, err = interrupt_after([egret_bin, *JOB, "--precision", precision, "--out",
                                    tmp_path / "cut"], line, r"^epoch +[1-9]\d* ", cwd=root)
    assert rc == 130, (context, out, err)
    resume = resume_arguments(out, egret_bin)
    assert resume == ["--resume", str(tmp_path / "cut")]
    r = run([egret_bin, *resume], cwd=root)
    assert r.returncode == 0, (context, r.stderr)
    finished = line // 3  # runs whose 3 epochs were all printed before the signal
    assert r.stdout.count("finished before the interruption") >= finished, context
    assert results_without_time(tmp_path / "whole" / "results.json") == \
        results_without_time(tmp_path / "cut" / "results.json"), context
    for model in ("egret", "paper"):
        for seed in (3, 4):
            run_dir = f"{model}/seed{seed}"
            assert_same_training(tmp_path / "whole" / run_dir, tmp_path / "cut" / run_dir,
                                 (context, run_dir))


def test_resume_of_the_other_kind_says_what_to_run(egret_bin, root, tmp_path):
    job = tmp_path / "job"
    r = run([egret_bin, *JOB[:6], "--epochs", "1", "--models", "paper", "--units", "8",
             "--frame-units", "8", "--out", job], cwd=root)
    assert r.returncode == 0, r.stderr
    # A main-job checkpoint given to egret train: the job's resume command.
    r = run([egret_bin, "train", "--resume", job / "paper" / "seed3" / "checkpoint.h5"], cwd=root)
    assert r.returncode == 1
    assert "a checkpoint of the DVS gesture main job (model paper, seed 3), not of egret train" \
        in r.stderr and "egret --resume" in r.stderr and "job" in r.stderr.split("--resume")[-1]
    # An egret train checkpoint given to the main job: egret train's.
    t = tmp_path / "train"
    assert run([egret_bin, "train", "--config", root / "examples" / "delay_copy.json", "--epochs",
                "2", "--out", t]).returncode == 0
    r = run([egret_bin, "--resume", t / "checkpoint.h5"], cwd=root)
    assert r.returncode == 1 and "no job.json" in r.stderr
    assert f"egret train --resume {t / 'checkpoint.h5'}" in r.stderr
    # The job's options come from job.json: others are refused, --threads is allowed.
    r = run([egret_bin, "--resume", job, "--epochs", "5"], cwd=root)
    assert r.returncode == 1 and "--epochs cannot change them" in r.stderr
    r = run([egret_bin, "--resume", job, "--threads", "1"], cwd=root)
    assert r.returncode == 0 and "finished before the interruption" in r.stdout


def interrupt_example_and_resume(example, epoch, tmp_path, env, context):
    """Runs a Python example into tmp_path/cut, SIGINT once its training_state.pt holds `epoch`
    (or later), checks the message and resumes as told."""
    import time

    import torch
    state = tmp_path / "cut" / "training_state.pt"
    p = subprocess.Popen([str(a) for a in example] + ["--out", str(tmp_path / "cut")], env=env,
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while p.poll() is None:  # the state file is replaced after every epoch
        if state.exists() and torch.load(state)["epoch"] >= epoch:
            p.send_signal(signal.SIGINT)
            break
        time.sleep(0.005)
    out, err = p.communicate()
    assert p.returncode == 130, (context, out[-2000:], err[-2000:])
    m = re.search(r"SIGINT during epoch (\d+): wrote (\S+) after epoch (\d+), the last complete",
                  out)
    assert m and int(m.group(3)) >= epoch and m.group(2) == str(state), (context, out[-2000:])
    assert not (tmp_path / "cut" / "checkpoint.h5").exists()
    resume = re.search(r"^resume with: (.*)$", out, re.M).group(1).split()
    assert resume == [str(a) for a in example] + ["--out", str(tmp_path / "cut"), "--resume",
                                                  str(state)], context
    r = run(resume, env=env, cwd=tmp_path)
    assert r.returncode == 0, (context, r.stderr[-2000:])
    assert f"resuming from {state} after epoch {m.group(3)}" in r.stdout


def test_python_example_interrupted_at_a_random_epoch_resumes_bit_for_bit(root, tmp_path):
    """examples/python/delay_copy.py (egret.torch + torch.optim.Adam): the same contract with
    egret.torch.InterruptibleTraining and training_state.pt."""
    import os
    import sys

    import torch

    from conftest import BUILD
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
    example = [sys.executable, root / "examples" / "python" / "delay_copy.py", "--no-plot",
               "--epochs", "40"]
    whole = run([*example, "--out", tmp_path / "whole"], env=env, cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr[-2000:]

    epoch = random.Random(SEED + 2).randint(1, 25)
    context = f"seed {SEED}: SIGINT after epoch {epoch}"
    interrupt_example_and_resume(example, epoch, tmp_path, env, context)

    def values(d):
        with h5py.File(d / "checkpoint.h5", "r") as f:
            return f["training"]["values"][()]
    assert np.array_equal(values(tmp_path / "whole"), values(tmp_path / "cut")), context
    logs = [[row.split(",")[:-1] for row in (d / "training_log.csv").read_text().splitlines()]
            for d in (tmp_path / "whole", tmp_path / "cut")]
    assert logs[0] == logs[1], context  # all but the wall-clock seconds
    a, b = (torch.load(d / "training_state.pt")["optimizer"]["state"]
            for d in (tmp_path / "whole", tmp_path / "cut"))
    assert a.keys() == b.keys() and all(torch.equal(a[k]["exp_avg_sq"], b[k]["exp_avg_sq"])
                                        for k in a), context


def test_python_gesture_example_interrupted_resumes_bit_for_bit(root, tmp_path):
    """examples/python/dvs_gesture.py likewise (its log and final parameters), on a one-user
    set."""
    import os
    import sys

    import egret
    from conftest import BUILD
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
    data = tmp_path / "gestures"
    egret.write_synthetic_gesture_dataset(str(data), train_users=1, test_users=1,
                                          lightings=["led"], gesture_us=1.5e6)
    example = [sys.executable, root / "examples" / "python" / "dvs_gesture.py", "--dataset",
               data, "--epochs", "3", "--units", "16", "--batch-size", "4"]
    whole = run([*example, "--out", tmp_path / "whole"], env=env, cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr[-2000:]
    epoch = random.Random(SEED + 3).randint(1, 2)
    interrupt_example_and_resume(example, epoch, tmp_path, env, f"seed {SEED}: epoch {epoch}")
    with h5py.File(tmp_path / "whole" / "checkpoint.h5", "r") as a, \
            h5py.File(tmp_path / "cut" / "checkpoint.h5", "r") as b:
        assert np.array_equal(a["training"]["values"][()], b["training"]["values"][()])
    logs = [[row.split(",")[:-1] for row in (d / "training_log.csv").read_text().splitlines()]
            for d in (tmp_path / "whole", tmp_path / "cut")]
    assert logs[0] == logs[1] and len(logs[0]) == 4
