"""The Python module egret._egret: the same simulation as the CLI, exact gradients against
finite differences taken from Python, numpy parameter round trips, and C++ errors as Python
exceptions with the same messages."""
import json

import numpy as np
import pytest

from conftest import run

import egret  # noqa: E402  (path set by conftest)


def config(seed=3):
    return {
        "seed": seed, "input_channels": 4,
        "layers": [
            {"type": "continuous_egru", "units": 6, "tau_m": 5, "tau_o": 6, "window_input": 3,
             "window_recurrent": 2, "threshold": 0.3,
             "init": {"weight_scale": 1.5, "bias_z": 0.8, "bias_spread": 0.3}},
            {"type": "continuous_egru", "units": 3, "tau_m": 4, "tau_o": 5, "window_input": 4,
             "threshold": 0.3, "init": {"weight_scale": 1.5, "bias_z": 0.8}}],
        "readout_classes": 3,
        "simulation": {"end_time": 40},
    }


def events(n=120, seed=0):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, 40, n))
    return t, rng.integers(0, 4, n), rng.uniform(0.5, 1.5, n)


def test_simulate_matches_the_cli(egret_bin, tmp_path):
    cfg = config()
    (tmp_path / "net.json").write_text(json.dumps(cfg))
    t, ch, v = events()
    with open(tmp_path / "in.csv", "w") as f:
        for a, b, c in zip(t, ch, v):
            f.write(f"{a!r},{b},{c!r}\n")
    r = run([egret_bin, "simulate", "--config", tmp_path / "net.json", "--input", tmp_path / "in.csv",
             "--trace", tmp_path / "trace.csv"])
    assert r.returncode == 0, r.stderr
    cli = np.loadtxt(tmp_path / "trace.csv", delimiter=",", skiprows=1)
    py = egret.Network(json.dumps(cfg)).simulate(t, ch, v, end_time=40.0)
    assert len(py["time"]) == cli.shape[0] > 20
    assert np.array_equal(py["time"], cli[:, 0])
    assert np.array_equal(py["layer"], cli[:, 1].astype(int))
    assert np.array_equal(py["unit"], cli[:, 2].astype(int))
    assert np.array_equal(py["value"], cli[:, 3])


def test_gradients_equal_finite_differences():
    cfg = json.dumps(config())
    t, ch, v = events()
    kw = dict(end_time=40.0, readout_windows=[(10.0, 25.0), (20.0, 39.0)], loss="softmax_cross_entropy",
              targets=[1, 2])
    net = egret.Network(cfg)
    loss, grad = net.loss_and_gradient(t, ch, v, **kw)
    base = net.parameters()
    ref_units = net.simulate(t, ch, v, end_time=40.0)["unit"]
    rng = np.random.default_rng(1)
    checked, worst = 0, 0.0
    for name, value in base.items():
        if np.isscalar(value):
            entries = [None]
        else:
            entries = [tuple(rng.integers(0, s) for s in np.shape(value)) for _ in range(3)]
        for idx in entries:
            fd = []
            for h in (1e-5, -1e-5, 5e-6, -5e-6):
                p = {k: (np.array(x, copy=True) if not np.isscalar(x) else x) for k, x in base.items()}
                if idx is None:
                    p[name] = value + h
                else:
                    p[name][idx] += h
                q = egret.Network(cfg)
                q.set_parameters(p)
                if not np.array_equal(q.simulate(t, ch, v, end_time=40.0)["unit"], ref_units):
                    fd = None
                    break
                fd.append(q.loss_and_gradient(t, ch, v, **kw)[0])
            if fd is None:
                continue
            d1, d2 = (fd[0] - fd[1]) / 2e-5, (fd[2] - fd[3]) / 1e-5
            est = (4 * d2 - d1) / 3
            g = grad[name] if idx is None else grad[name][idx]
            err = abs(g - est) / max(abs(g), abs(est), 1e-4)
            worst = max(worst, err)
            checked += 1
            assert err < 1e-5, f"{name}{idx}: {g} vs {est}"
    assert checked > 40
    print(f"{checked} gradient entries from Python, worst relative error {worst:.2e}")


def test_parameters_round_trip_and_checks():
    net = egret.Network(json.dumps(config()))
    p = net.parameters()
    net.set_parameters(p)
    q = net.parameters()
    assert all(np.array_equal(p[k], q[k]) for k in p)
    theta = p["layer0.theta"].copy()
    theta[2] = 0.45
    net.set_parameters({"layer0.theta": theta})
    assert net.parameters()["layer0.theta"][2] == 0.45
    with pytest.raises(ValueError, match=r"layer0.U_u: expected shape \(6, 4\)"):
        net.set_parameters({"layer0.U_u": np.zeros((4, 6))})
    with pytest.raises(ValueError, match="NaN or infinite"):
        net.set_parameters({"layer1.b_z": np.array([0.0, np.nan, 0.0])})
    bad = theta.copy()
    bad[0] = -1.0
    with pytest.raises(ValueError, match=r"theta\[0\] must be > 0"):
        net.set_parameters({"layer0.theta": bad})
    with pytest.raises(ValueError, match="unknown parameter 'layer0.W'"):
        net.set_parameters({"layer0.W": np.zeros(3)})


def test_errors_from_cpp_arrive_with_their_messages():
    net = egret.Network(json.dumps(config()))
    t, ch, v = events(10)
    with pytest.raises(ValueError, match="equal length"):
        net.simulate(t, ch[:5], end_time=40.0)
    t_bad = t.copy()
    t_bad[3] = np.nan
    with pytest.raises(ValueError, match=r"event 3 .*time is not finite"):
        net.simulate(t_bad, ch, end_time=40.0)
    with pytest.raises(ValueError, match=r"channel out of range \[0, 4\)"):
        net.simulate(t, ch + 10, end_time=40.0)
    with pytest.raises(ValueError, match="readout window"):
        net.simulate(t, ch, end_time=40.0, readout_windows=[(30.0, 20.0)])
    with pytest.raises(ValueError, match="unknown key 'tau_mm'"):
        c = config()
        c["layers"][0]["tau_mm"] = 1
        egret.Network(json.dumps(c))
    with pytest.raises(ValueError, match="unknown loss"):
        net.loss_and_gradient(t, ch, end_time=40.0, readout_windows=[(1.0, 2.0)], loss="hinge", targets=[0])
