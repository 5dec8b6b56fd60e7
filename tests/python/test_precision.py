"""The precision of a run: float by default, double on request, visible in the configuration,
the CLI and Python. Float runs track the double ones (verified elsewhere against finite
differences and autograd) within float's rounding, for every family with a backward pass."""
import json
import re

import numpy as np
import pytest

import egret
from conftest import ROOT, run
from test_discrete_training import task_trials

FAMILIES = ["lif", "bmru", "surnn", "su_snn", "sugru", "ds_gru", "spiking_gated"]


def delay_copy_config(family):
    name = "delay_copy.json" if family == "continuous_egru" else f"delay_copy_{family}.json"
    cfg = json.loads((ROOT / "examples" / name).read_text())
    task = cfg.pop("task")
    cfg.pop("training")
    cfg.pop("output")
    return cfg, task


@pytest.mark.parametrize("family", FAMILIES + ["continuous_egru"])
def test_float_loss_and_gradient_follow_double(family):
    cfg, task = delay_copy_config(family)
    trials = task_trials(task, 16, task["seed"])
    nets = {p: egret.Network(cfg, precision=p) for p in ("float", "double")}
    assert nets["float"].precision == "float" and nets["double"].precision == "double"
    ld, gd, _ = nets["double"].loss_and_gradient(trials, loss="binary_cross_entropy")
    lf, gf, _ = nets["float"].loss_and_gradient(trials, loss="binary_cross_entropy")
    assert gf.keys() == gd.keys()
    worst = max(np.linalg.norm(np.ravel(gf[k] - gd[k])) / np.linalg.norm(np.ravel(gd[k]))
                for k in gd if np.linalg.norm(np.ravel(gd[k])) > 0)
    print(f"{family}: loss {abs(lf - ld) / abs(ld):.1e} relative, worst gradient "
          f"{worst:.1e} (norm-relative)")
    assert abs(lf - ld) < 1e-5 * abs(ld)
    assert worst < 1e-4  # measured at most 1.7e-5 (ds_gru); float's epsilon is 6e-8
    # arrays are float64 in both (scalar parameters are Python floats)
    assert all(np.asarray(gf[k]).dtype == np.float64 for k in gf)


def test_precision_is_float_by_default_and_chosen_by_configuration_or_argument(tmp_path):
    cfg, _ = delay_copy_config("continuous_egru")
    assert egret.Network(cfg).precision == "float"
    assert egret.Network(dict(cfg, precision="double")).precision == "double"
    assert egret.Network(dict(cfg, precision="double"), precision="float").precision == "float"
    with pytest.raises(ValueError, match='precision: expected "float" or "double", got "half"'):
        egret.Network(cfg, precision="half")
    with pytest.raises(ValueError, match='precision: expected "float" or "double"'):
        egret.Network(dict(cfg, precision=32))
    # A value float cannot hold is refused by a float network, accepted by a double one.
    big = {"layer0.b_u": np.full(2, 1e39)}
    with pytest.raises(ValueError, match=r"layer0.b_u entry 0: 1e\+39 is beyond the range of float"):
        egret.Network(cfg).set_parameters(big)
    # A checkpoint reloads in its configuration's precision unless asked otherwise.
    net = egret.Network(dict(cfg, precision="double"))
    net.save_checkpoint(str(tmp_path / "c.h5"))
    assert egret.Network.load_checkpoint(str(tmp_path / "c.h5")).precision == "double"
    back = egret.Network.load_checkpoint(str(tmp_path / "c.h5"), precision="float")
    assert back.precision == "float"
    for k, v in net.parameters().items():
        np.testing.assert_allclose(back.parameters()[k], v, rtol=2e-7, err_msg=k)


def test_cli_names_the_precision_and_its_runs_agree(tmp_path, egret_bin):
    cfg, _ = delay_copy_config("continuous_egru")
    cfg["simulation"] = {"end_time": 60}
    (tmp_path / "net.json").write_text(json.dumps(cfg))
    rng = np.random.default_rng(3)
    t = np.sort(rng.uniform(0, 50, 40))
    ch = rng.integers(0, cfg["input_channels"], 40)
    (tmp_path / "in.csv").write_text("".join(f"{a!r},{c}\n" for a, c in zip(t, ch)))
    traces = {}
    for p in ("float", "double"):
        r = run([egret_bin, "simulate", "--config", tmp_path / "net.json", "--input",
                 tmp_path / "in.csv", "--precision", p, "--trace", tmp_path / f"{p}.csv"])
        assert r.returncode == 0, r.stderr
        assert f"precision: {p}" in r.stdout
        traces[p] = np.loadtxt(tmp_path / f"{p}.csv", delimiter=",", ndmin=2, skiprows=1)
    assert traces["double"].shape[0] > 5
    assert traces["float"].shape == traces["double"].shape
    np.testing.assert_array_equal(traces["float"][:, 1:3], traces["double"][:, 1:3])
    np.testing.assert_allclose(traces["float"][:, 0], traces["double"][:, 0], rtol=1e-5)
    r = run([egret_bin, "simulate", "--config", tmp_path / "net.json", "--input",
             tmp_path / "in.csv", "--precision", "half"])
    assert r.returncode == 1 and 'precision: expected "float" or "double", got "half"' in r.stderr
