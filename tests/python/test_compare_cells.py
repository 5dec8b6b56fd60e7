"""bench/compare_cells.py end to end on a few samples: it trains every cell per seed, writes a
trace and a checkpoint per run, runs the hardware estimates and writes results, table, figure and
a page's results section, with counts that agree with the traces and checkpoints it wrote."""
import json
import os
import subprocess
import sys

import numpy as np

import egret
from conftest import BUILD, ROOT


def test_compare_cells_runs_and_reports_what_the_traces_hold(tmp_path):
    out = tmp_path / "cmp"
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n<!-- compare_cells:begin -->\nold\n<!-- compare_cells:end -->\n"
                    "after\n")
    r = subprocess.run(
        [sys.executable, ROOT / "bench" / "compare_cells.py", "--tasks", "fmnist",
         "--cells", "lif,dense_gru", "--seeds", "3,4", "--fmnist-train", "64",
         "--fmnist-test", "32", "--epochs-fmnist", "1", "--units", "8", "--out", out,
         "--doc", page],
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, PYTHONPATH=str(BUILD / "python")))
    assert r.returncode == 0, r.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert [(x["cell"], x["seed"]) for x in results] == [("lif", 3), ("lif", 4),
                                                         ("dense_gru", 3), ("dense_gru", 4)]
    test = None
    for x in results:
        name = f"fmnist_{x['cell']}_seed{x['seed']}"
        layer = egret.read_trace(str(out / f"{name}.h5"))["layers"][0]
        assert x["Effective_MACs"] == layer["metrics"]["Effective_MACs"]
        assert x["energy_j_loihi_davies2018"] > 0 and x["energy_j_cmos45_horowitz2014"] > 0
        assert 0 <= x["accuracy"] <= 1
        # on for spikes, off for a family that sends changes (compare_cells.REGULARIZED)
        expected = {"weight": 0.01, "target_hz": 100.0} if x["cell"] == "lif" else None
        assert x["activity_regularizer"] == expected
        assert len(x["epoch_seconds"]) == 1
        # the checkpoint is the trained network: its median events per test sample
        net = egret.Network.load_checkpoint(str(out / f"{name}.h5ckpt"))
        if test is None:
            sys.path.insert(0, str(ROOT / "bench"))
            import compare_cells
            test, _, _ = compare_cells.fmnist_samples("test", 32, 4)
        events = [s["events_per_layer"][0] for s in net.simulate_batch(test)]
        assert x["events_median_sample"] == float(np.median(events))
        assert 1 <= x["classes_predicted"] <= 10 and x["events_without_input"] >= 0
    lif, gru = results[0], results[2]
    assert lif["Effective_ACs"] > 0  # spikes are binary: accumulates downstream
    assert gru["ActivationSparsity"] < lif["ActivationSparsity"]
    assert (out / "comparison.png").stat().st_size > 10_000
    table = (out / "table.md").read_text()
    assert "| lif | 2 |" in table and "| dense_gru | 2 |" in table
    text = page.read_text()
    assert text.startswith("# Page\n\n<!-- compare_cells:begin -->\n### Sequential Fashion-MNIST")
    assert "old" not in text and text.endswith("<!-- compare_cells:end -->\nafter\n")
