"""Faults while writing: a full disk (simulated with a file-size limit) during an HDF5 trace or
checkpoint is one clear error naming the file and a clean exit, leaving no file behind; output
locations that cannot be written are refused before any work; `egret train` killed mid-run and
resumed from its checkpoint gives the same log (every epoch once) and the same parameters as a
run that was never interrupted."""
import json
import resource
import signal
import subprocess

import h5py
import numpy as np

from conftest import run


def file_size_limit(nbytes):
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() then fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return apply


def events_csv(path, n=20000):
    rng = np.random.default_rng(1)
    t = np.cumsum(rng.random(n) * 0.01)
    path.write_text("".join(f"{a:.5f},{c}\n" for a, c in zip(t, rng.integers(0, 8, n))))


def test_full_disk_during_an_hdf5_trace_is_one_clear_error(egret_bin, root, tmp_path):
    events_csv(tmp_path / "ev.csv")
    out = tmp_path / "trace.h5"
    r = subprocess.run([str(egret_bin), "simulate", "--config", str(root / "examples" / "two_layer.json"),
                        "--input", str(tmp_path / "ev.csv"), "--trace", str(out)],
                       capture_output=True, text=True, preexec_fn=file_size_limit(40000))
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert r.stderr == f"egret: error: {out}: cannot write the file ({out}.tmp-egret): File too large\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ev.csv"]


def test_full_disk_during_a_checkpoint_is_one_clear_error(egret_bin, root, tmp_path):
    out = tmp_path / "run"  # the log (< 1 KB) fits in 16 KB, the checkpoint (~50 KB) does not
    r = subprocess.run([str(egret_bin), "train", "--config", str(root / "examples" / "delay_copy.json"),
                        "--out", str(out), "--epochs", "1"], capture_output=True, text=True,
                       preexec_fn=file_size_limit(16384))
    assert r.returncode == 1, (r.returncode, r.stderr)
    ckpt = out / "checkpoint.h5"
    assert r.stderr == f"egret: error: {ckpt}: cannot write the file ({ckpt}.tmp-egret): File too large\n"
    assert not ckpt.exists() and not (out / "checkpoint.h5.tmp-egret").exists()


def test_unwritable_outputs_are_refused_before_any_work(egret_bin, root, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = run([egret_bin, "simulate", "--config", root / "examples" / "two_layer.json",
             "--input", root / "examples" / "events.csv", "--trace", blocker / "t.h5"])
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == f"egret: error: --trace {blocker / 't.h5'}: {blocker} is not a folder\n"
    r = run([egret_bin, "train", "--config", root / "examples" / "delay_copy.json", "--out", blocker / "d"])
    assert r.returncode == 1 and r.stdout == ""
    assert f"--out {blocker}/d: cannot create the directory" in r.stderr
    r = run([egret_bin, "emulate", "--frames", tmp_path / "none.txt", "--out", tmp_path])
    assert r.returncode == 1 and r.stderr == f"egret: error: --out {tmp_path}: is a directory\n"
    r = run([egret_bin, "gesture", "--out", blocker / "g"])
    assert r.returncode == 1 and r.stdout == "" and "--out " in r.stderr


def read_log(path):
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    return [dict(zip(header, line.split(","))) for line in lines[1:]]


def test_train_killed_and_resumed_equals_an_uninterrupted_run(egret_bin, root, tmp_path):
    cfg = json.loads((root / "examples" / "delay_copy.json").read_text())
    cfg["output"]["checkpoint_every"] = 1
    (tmp_path / "cfg.json").write_text(json.dumps(cfg))
    full, cut = tmp_path / "full", tmp_path / "cut"
    r = run([egret_bin, "train", "--config", tmp_path / "cfg.json", "--out", full, "--epochs", "40"])
    assert r.returncode == 0, r.stderr
    p = subprocess.Popen([str(egret_bin), "train", "--config", str(tmp_path / "cfg.json"), "--out", str(cut),
                          "--epochs", "40"], stdout=subprocess.PIPE, text=True)
    for line in p.stdout:
        if line.startswith("epoch   10 "):
            p.kill()  # SIGKILL: no cleanup of any kind
            break
    p.wait()
    assert p.returncode == -signal.SIGKILL
    with h5py.File(cut / "checkpoint.h5", "r") as f:
        killed_at = int(f.attrs["epoch"])
    assert 1 <= killed_at < 40
    rows = read_log(cut / "training_log.csv")
    assert len(rows) >= killed_at  # the log is written before each epoch's checkpoint
    r = run([egret_bin, "train", "--resume", cut / "checkpoint.h5", "--out", cut, "--epochs", "40"])
    assert r.returncode == 0, r.stderr
    a, b = read_log(full / "training_log.csv"), read_log(cut / "training_log.csv")
    assert [row["epoch"] for row in b] == [str(e) for e in range(1, 41)]
    for key in ("train_loss", "train_accuracy", "test_loss", "test_accuracy", "grad_norm"):
        assert [row[key] for row in a] == [row[key] for row in b], key
    with h5py.File(full / "checkpoint.h5", "r") as f, h5py.File(cut / "checkpoint.h5", "r") as g:
        for name in ("training/values", "training/adam_m", "training/adam_v"):
            assert np.array_equal(f[name][()], g[name][()]), name
        assert f.attrs["rng_state"] == g.attrs["rng_state"]
