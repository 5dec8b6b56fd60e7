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


def test_float_gradient_follows_double_with_saturated_units():
    """A busy input with large input weights drives a fifth of the units' a_u below -70 (u below
    1e-30): their decays and adjoints approach the subnormal range, which the float pass skips
    (BoxEgruCell::decays; adjoints below 2^-100 set to 0, docs/adjoint.md). The float gradient
    still follows the double one within float's rounding."""
    rng = np.random.default_rng(4)
    channels, units = 48, 12
    cfg = {"seed": 5, "input_channels": channels, "readout_classes": 3,
           "layers": [{"type": "continuous_egru", "units": units, "tau_m": 10, "tau_o": 20,
                       "window_input": 20, "window_recurrent": 10, "threshold": 0.3,
                       "init": {"weight_scale": 1.0}}]}
    nets = {p: egret.Network(cfg, precision=p) for p in ("float", "double")}
    values = nets["double"].parameters()
    for gate in ("U_u", "U_r", "U_z"):
        values["layer0." + gate] = np.asarray(values["layer0." + gate]) * 40
    for net in nets.values():
        net.set_parameters(values)
    samples = []
    for s in range(3):
        t, ch, val = [], [], []
        for b in range(1, 41):  # 20 of the 48 channels in every 5 ms bin
            for c in rng.choice(channels, size=20, replace=False):
                t.append(5.0 * b), ch.append(int(c)), val.append(float(rng.integers(1, 4)))
        samples.append(egret.Sample(np.array(t), np.array(ch), np.array(val), channels=channels,
                                    end_time=200.0, readout_windows=[(40.0, 200.0)],
                                    labels=[s % 3]))
    s = samples[0]
    r = nets["double"].simulate(s.t, s.channel, s.value, end_time=200.0,
                                snapshot_times=np.arange(5, 200, 5.0))
    a_u = np.asarray(r["snapshots"]["layers"][0]["a_u"])
    assert np.mean(a_u < -70) > 0.15, "the scenario must saturate units"
    assert len(r["time"]) > 50
    ld, gd, _ = nets["double"].loss_and_gradient(samples, threads=1)
    lf, gf, _ = nets["float"].loss_and_gradient(samples, threads=1)
    assert abs(lf - ld) < 1e-5 * abs(ld)
    for k in gd:
        norm = np.linalg.norm(np.ravel(gd[k]))
        if norm > 0:  # measured at most 1.4e-4 (U_r)
            assert np.linalg.norm(np.ravel(gf[k] - gd[k])) < 1e-3 * norm, k
