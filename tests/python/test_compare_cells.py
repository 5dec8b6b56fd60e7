"""bench/compare_cells.py end to end on a few samples: it trains, writes a trace per cell, runs
the hardware estimates and writes results, table and figure, with counts that agree with the
traces it wrote."""
import json
import os
import subprocess
import sys

import egret
from conftest import BUILD, ROOT


def test_compare_cells_runs_and_reports_what_the_traces_hold(tmp_path):
    out = tmp_path / "cmp"
    r = subprocess.run(
        [sys.executable, ROOT / "bench" / "compare_cells.py", "--tasks", "fmnist",
         "--cells", "lif,dense_gru", "--fmnist-train", "64", "--fmnist-test", "32",
         "--epochs-fmnist", "1", "--units", "8", "--out", out],
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, PYTHONPATH=str(BUILD / "python")))
    assert r.returncode == 0, r.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert [x["cell"] for x in results] == ["lif", "dense_gru"]
    for x in results:
        layer = egret.read_trace(str(out / f"fmnist_{x['cell']}.h5"))["layers"][0]
        assert x["Effective_MACs"] == layer["metrics"]["Effective_MACs"]
        assert x["energy_j_loihi_davies2018"] > 0 and x["energy_j_cmos45_horowitz2014"] > 0
        assert 0 <= x["accuracy"] <= 1
    lif, gru = results
    assert lif["Effective_ACs"] > 0  # spikes are binary: accumulates downstream
    assert gru["ActivationSparsity"] < lif["ActivationSparsity"]
    assert (out / "comparison.png").stat().st_size > 10_000
    assert "| fmnist | lif |" in (out / "table.md").read_text()
