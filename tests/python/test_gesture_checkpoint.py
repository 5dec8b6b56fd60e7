"""The main job (the EGRU paper's Table 1 analog) on a small synthetic set:
- every model's checkpoint loads in Python (egret.Network.load_checkpoint rebuilds it from the
  configuration the job stores), and the held-out samples prepared from the checkpoint's task
  section as the job prepares them (the first 1.5 s, 10 ms denoise, 128x128 pooled to 32x32,
  events summed per 5 ms bin or marked per 25 ms frame) give the accuracy the job recorded;
- results.json's rows are the mean and sample sd of its runs, table1.csv holds the same numbers,
  and the figure (scripts/plot_gesture.py) draws those numbers."""
import csv
import json
import statistics
import sys

import numpy as np

import egret
from conftest import run

MODELS = ["egret", "paper", "dense_gru"]


def held_out_samples(root, task):
    samples, labels = [], []
    for g in egret.load_gesture_split(str(root / task["dataset"]), "test"):
        ev = egret.crop_time(g["events"], 0, task["window_us"])
        if task["denoise_us"] > 0:
            ev = egret.denoise(ev, (128, 128), task["denoise_us"])
        ev, size = egret.downsample(ev, (128, 128), task["pooling"])
        t, ch, val, channels = egret.to_input(ev, size, task["bin_us"], coalesce=task["coalesce"])
        end = task["window_us"] * 1e-3
        samples.append(egret.Sample(t, ch, val, channels=channels, end_time=end,
                                    readout_windows=[(task["readout_from"] * end, end)]))
        labels.append(g["label"])
    return samples, labels


def test_main_job_table_checkpoints_and_figure_agree(egret_bin, root, tmp_path):
    out = tmp_path / "g"
    r = run([egret_bin, "gesture", "--users", "3,1", "--lightings-per-user", "1", "--seeds", "3,4",
             "--epochs", "1", "--units", "16", "--frame-units", "16", "--out", out], cwd=root)
    assert r.returncode == 0, r.stderr
    assert "Table 1, analog" in r.stdout and "not the real DVS128 Gesture" in r.stdout
    assert "act.sp. (step)" in r.stdout and "(act.sp.: NeuroBench's ActivationSparsity" in r.stdout
    res = json.loads((out / "results.json").read_text())
    assert [row["model"] for row in res["rows"]] == MODELS
    assert len(res["runs"]) == 6 and res["settings"]["held_out_samples"] == 11

    for run_ in res["runs"]:
        ckpt = out / run_["model"] / f"seed{run_['seed']}" / "checkpoint.h5"
        net = egret.Network.load_checkpoint(str(ckpt))
        config = json.loads(net.config)
        task = config["task"]
        assert task["name"] == "dvs_gesture" and task["model"] == run_["model"]
        assert config["precision"] == "float" and config["seed"] == run_["seed"]
        assert (task["bin_us"], task["coalesce"]) == ((5000, "sum") if run_["model"] == "egret"
                                                      else (25000, "binary"))
        samples, labels = held_out_samples(root, task)
        assert len(samples) == run_["total"] == 11
        res_ = net.simulate_batch(samples, threads=2)
        # The activity sparsity the job reports is egret.activity_sparsity's (what the Python
        # example prints), at the model's step: the 5 ms bin or the 25 ms frame.
        sparsity = egret.activity_sparsity(res_)
        assert sparsity.value == run_["activity_sparsity"]
        assert sparsity.step_ms == run_["activity_step_ms"] == task["bin_us"] / 1000
        hits = sum(int(np.argmax(x["logits"][0]) == y) for x, y in zip(res_, labels))
        assert hits == run_["correct"], run_["model"]
    # The headline network is the first model's first seed.
    assert (out / "checkpoint.h5").read_bytes() == (out / "egret" / "seed3" /
                                                    "checkpoint.h5").read_bytes()

    table = {row["model"]: row for row in csv.DictReader(open(out / "table1.csv"))}
    for row in res["rows"]:
        accs = [x["accuracy"] for x in res["runs"] if x["model"] == row["model"]]
        assert row["accuracy"]["mean"] == statistics.mean(accs)
        assert abs(row["accuracy"]["sd"] - statistics.stdev(accs)) < 1e-15
        c = table[row["model"]]
        assert float(c["accuracy_mean"]) == row["accuracy"]["mean"]
        assert float(c["accuracy_sd"]) == row["accuracy"]["sd"]
        assert float(c["effective_macs"]) == row["effective_macs"]["mean"]
        assert float(c["energy_j_loihi_davies2018_mean"]) == \
            row["energy_j_loihi_davies2018"]["mean"]
        assert int(c["parameters"]) == row["parameters"] > 0
    # The dense GRU updates (nearly) every unit every tick (its open gate is sigmoid(10), and a
    # unit whose output does not change sends nothing); the EGRU layers do not.
    assert res["rows"][2]["activity_sparsity"]["mean"] < 1e-3
    assert [row["activity_step_ms"] for row in res["rows"]] == [5, 25, 25]
    assert res["rows"][1]["backward_sparsity"]["mean"] is not None
    assert res["rows"][0]["backward_sparsity"]["mean"] is None  # exact adjoint: not defined

    p = run([sys.executable, root / "scripts" / "plot_gesture.py", out], cwd=root)
    assert p.returncode == 0, p.stderr
    assert (out / "table1.png").stat().st_size > 10000
    drawn = json.loads((out / "table1_figure.json").read_text())
    for row in res["rows"]:
        d = drawn[row["model"]]
        assert d["accuracy_percent"] == 100 * row["accuracy"]["mean"]
        assert d["energy_uj_loihi_davies2018"] == 1e6 * row["energy_j_loihi_davies2018"]["mean"]
        assert d["effective_operations"] == \
            row["effective_macs"]["mean"] + row["effective_acs"]["mean"]
