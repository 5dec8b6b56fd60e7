"""One definition of activity sparsity (issue 38): egret.activity_sparsity, which the Python
examples print, is NeuroBench's ActivationSparsity at the layers' step, the figure the CLI prints
(egret inspect, simulate) and stores in traces, and it names its definition and step."""
import math

import h5py
import numpy as np

from conftest import run

import egret  # noqa: E402  (path set by conftest)


def config(dense_step, second_dt=None):
    layers = [{"type": "continuous_egru", "units": 8, "tau_m": 5, "threshold": 0.3,
               "init": {"weight_scale": 1.5, "bias_z": 0.8, "bias_spread": 0.3}}]
    if second_dt is not None:
        layers.append({"type": "discrete_egru", "units": 4, "dt": second_dt, "threshold": 0.3})
    return {"precision": "double", "seed": 3, "input_channels": 4, "layers": layers,
            "simulation": {"dense_step": dense_step}}


def samples():
    out = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        t = np.sort(rng.uniform(0, 60, 150))
        out.append(egret.Sample(t, rng.integers(0, 4, 150), rng.uniform(0.5, 1.5, 150),
                                channels=4, end_time=60.0))
    return out


def test_the_python_figure_is_the_one_the_cli_prints_and_stores(egret_bin, tmp_path):
    net = egret.Network(config(dense_step=5))
    figure = egret.activity_sparsity(net.simulate_batch(samples()))
    assert figure.step_ms == 5 and 0.05 < figure.value < 0.95
    assert str(figure) == f"{figure.value:.3f} (NeuroBench, 5 ms step)"

    trace = tmp_path / "trace.h5"
    net.write_trace(str(trace), samples())
    with h5py.File(trace, "r") as f:
        (layer,) = f["egret/metrics"].keys()
        stored = f[f"egret/metrics/{layer}"].attrs
        assert stored["ActivationSparsity"] == figure.value
        assert stored["dense_step_ms"] == 5

    r = run([egret_bin, "inspect", trace])
    assert r.returncode == 0, r.stderr
    row = next(line.split() for line in r.stdout.splitlines() if line.startswith("0 "))
    assert row[1] == "continuous_egru" and float(row[3]) == round(figure.value, 4)
    assert "activ.sparse: NeuroBench's ActivationSparsity, 1 - active / all (unit, step) pairs" \
        in r.stdout


def test_pooled_over_layers_and_samples_with_each_layer_step(tmp_path):
    results = egret.Network(config(dense_step=5, second_dt=5)).simulate_batch(samples())
    counts = [c for r in results for c in r["layer_counts"]]
    active = sum(c["active_unit_steps"] for c in counts)
    pairs = sum(c["steps"] * c["units"] for c in counts)
    assert pairs == 3 * (12 * 8 + 12 * 4)  # 60 ms in 5 ms steps, 8 + 4 units, 3 samples
    assert egret.activity_sparsity(results) == (1 - active / pairs, 5.0)
    only_first = egret.activity_sparsity(results, layers=[0])
    assert only_first.value == 1 - sum(r["layer_counts"][0]["active_unit_steps"]
                                       for r in results) / (3 * 12 * 8)

    mixed = egret.activity_sparsity(
        egret.Network(config(dense_step=1, second_dt=5)).simulate_batch(samples()))
    assert math.isnan(mixed.step_ms)
    assert str(mixed).endswith("(NeuroBench, each layer's step)")
