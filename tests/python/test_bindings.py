"""The Python module egret._egret: the same simulation as the CLI, exact gradients against
finite differences taken from Python, numpy parameter round trips, batches (TBB) equal to
single runs, checkpoints and traces from Python, and C++ errors as Python exceptions with the
same messages."""
import json
import re

import h5py
import numpy as np
import pytest

from conftest import run

import egret  # noqa: E402  (path set by conftest)


def config(seed=3):
    return {
        "precision": "double", "seed": seed, "input_channels": 4,
        "layers": [
            {"type": "continuous_egru", "units": 6, "tau_m": 5, "tau_o": 6, "window_input": 3,
             "window_recurrent": 2, "threshold": 0.3,
             "init": {"weight_scale": 1.5, "bias_z": 0.8, "bias_spread": 0.3}},
            {"type": "continuous_egru", "units": 3, "tau_m": 4, "tau_o": 5, "window_input": 4,
             "threshold": 0.3, "init": {"weight_scale": 1.5, "bias_z": 0.8},
             "self_recurrence": True}],
        "readout_classes": 3,
        "simulation": {"end_time": 40},
    }


def events(n=120, seed=0):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, 40, n))
    return t, rng.integers(0, 4, n), rng.uniform(0.5, 1.5, n)


def sample(seed=0, labels=(1, 2), n=120):
    t, ch, v = events(n, seed)
    return egret.Sample(t, ch, v, channels=4, end_time=40.0,
                        readout_windows=[(10.0, 25.0), (20.0, 39.0)], labels=list(labels))


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
    py = egret.Network(cfg).simulate(t, ch, v, end_time=40.0)
    assert len(py["time"]) == cli.shape[0] > 20
    assert np.array_equal(py["time"], cli[:, 0])
    assert np.array_equal(py["layer"], cli[:, 1].astype(int))
    assert np.array_equal(py["unit"], cli[:, 2].astype(int))
    assert np.array_equal(py["value"], cli[:, 3])
    assert py["events_per_layer"] == [int((cli[:, 1] == 0).sum()), int((cli[:, 1] == 1).sum())]


def test_gradients_equal_finite_differences():
    cfg = json.dumps(config())
    s = sample()
    net = egret.Network(cfg)
    loss, grad, stats = net.loss_and_gradient(s)
    assert stats["total"] == 2
    base = net.parameters()
    ref_units = net.simulate(s.t, s.channel, s.value, end_time=40.0)["unit"]
    rng = np.random.default_rng(1)
    checked, worst = 0, 0.0
    for name, value in base.items():
        if np.isscalar(value):
            entries = [None]
        else:
            entries = [tuple(rng.integers(0, n) for n in np.shape(value)) for _ in range(3)]
            if name.endswith(("V_u", "V_z")):
                entries.append((1, 1))  # a diagonal entry: no parameter in layer 0, one in 1
        for idx in entries:
            if name.startswith("layer0.V") and idx[0] == idx[1]:
                # Layer 0 is without self-recurrence (the default; layer 1 has it): the diagonal
                # of its V is no parameter, its gradient is 0 and a value for it is refused.
                assert grad[name][idx] == 0.0
                p = {k: (np.array(x, copy=True) if not np.isscalar(x) else x) for k, x in base.items()}
                p[name][idx] += 1e-5
                with pytest.raises(ValueError, match="self-recurrence"):
                    egret.Network(cfg).set_parameters(p)
                continue
            fd = []
            for h in (1e-5, -1e-5, 5e-6, -5e-6):
                p = {k: (np.array(x, copy=True) if not np.isscalar(x) else x) for k, x in base.items()}
                if idx is None:
                    p[name] = value + h
                else:
                    p[name][idx] += h
                q = egret.Network(cfg)
                q.set_parameters(p)
                if not np.array_equal(q.simulate(s.t, s.channel, s.value, end_time=40.0)["unit"],
                                      ref_units):
                    fd = None
                    break
                fd.append(q.loss_and_gradient(s)[0])
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


def test_batch_equals_mean_of_single_samples_for_any_thread_count():
    net = egret.Network(config())
    samples = [sample(seed=k, labels=(k % 3, (k + 1) % 3)) for k in range(7)]
    singles = [net.loss_and_gradient(s) for s in samples]
    for threads in (1, 2):
        loss, grad, stats = net.loss_and_gradient(samples, threads=threads)
        assert loss == pytest.approx(np.mean([x[0] for x in singles]), rel=1e-14)
        assert stats["total"] == 14
        assert stats["correct"] == sum(x[2]["correct"] for x in singles)
        for name in grad:
            mean = sum(np.asarray(x[1][name]) for x in singles) / len(samples)
            np.testing.assert_allclose(grad[name], mean, rtol=1e-12, atol=1e-15)
    one = net.loss_and_gradient(samples, threads=1)
    two = net.loss_and_gradient(samples, threads=2)
    assert one[0] == two[0] and all(np.array_equal(one[1][k], two[1][k]) for k in one[1])
    sims = net.simulate_batch(samples, threads=2)
    for s, r in zip(samples, sims):
        ref = net.simulate(s.t, s.channel, s.value, end_time=40.0,
                           readout_windows=s.readout_windows)
        assert np.array_equal(r["time"], ref["time"]) and np.array_equal(r["unit"], ref["unit"])
        assert np.array_equal(r["logits"][1], ref["logits"][1])


def d_mean_cross_entropy(z, samples):
    """dL/dlogits of the mean softmax cross-entropy over samples and readouts, by hand."""
    p = np.exp(z - z.max(axis=2, keepdims=True))
    p /= p.sum(axis=2, keepdims=True)
    y = np.zeros_like(p)
    for i, s in enumerate(samples):
        for j, label in enumerate(s.labels):
            y[i, j, label] = 1
    return (p - y) / (z.shape[0] * z.shape[1])


def test_forward_backward_equals_loss_and_gradient():
    net = egret.Network(config())
    samples = [sample(seed=k, labels=(k % 3, 2)) for k in range(4)]
    fb = net.forward(samples)
    assert fb.traces.shape == (4, 2, 3) and fb.logits.shape == (4, 2, 3)
    grad = fb.backward(d_logits=d_mean_cross_entropy(fb.logits, samples))
    _, ref, _ = net.loss_and_gradient(samples)
    for name in ref:
        np.testing.assert_allclose(grad[name], ref[name], rtol=1e-12, atol=1e-15, err_msg=name)
    with pytest.raises(ValueError, match=r"d_logits: expected shape \(4, 2, 3\)"):
        net.forward(samples).backward(d_logits=np.zeros((4, 3)))
    with pytest.raises(ValueError, match="exactly one of d_traces and d_logits"):
        net.forward(samples).backward()


def binned_sample(seed, labels):
    """A binned stream as egret.to_input makes one: whole-ms times, at most one event per channel
    and bin, small whole values (so that some inputs meet a release of the same value)."""
    rng = np.random.default_rng(seed)
    cells = np.sort(rng.choice(40 * 4, 90, replace=False))
    return egret.Sample((cells // 4).astype(float), (cells % 4).astype(np.int64),
                        rng.integers(1, 4, 90).astype(float), channels=4, end_time=40.0,
                        readout_windows=[(10.0, 25.0), (20.0, 39.0)], labels=list(labels))


def test_forward_backward_on_binned_input_equals_the_event_by_event_gradient():
    """ForwardBatch.backward returns no per-event input gradients, so forward() records a bin's
    simultaneous inputs as one tape step and nets inputs with the releases they meet (the input
    window, 3 ms, is a whole number of bins), as loss_and_gradient does for a batch. Its gradient
    equals loss_and_gradient's on the batch, and the mean of the single-sample gradients, which
    take every input and release one by one with per-event input adjoints: a path that neither
    merges nor nets."""
    net = egret.Network(config())
    samples = [binned_sample(k, (k % 3, 2)) for k in range(4)]
    fb = net.forward(samples, threads=2)
    grad = fb.backward(d_logits=d_mean_cross_entropy(fb.logits, samples))
    _, batch, _ = net.loss_and_gradient(samples)
    singles = [net.loss_and_gradient(s)[1] for s in samples]
    assert any(np.abs(batch[name]).max() > 1e-3 for name in batch)
    for name in batch:
        np.testing.assert_allclose(grad[name], batch[name], rtol=1e-12, atol=1e-15, err_msg=name)
        mean = sum(np.asarray(g[name]) for g in singles) / len(samples)
        np.testing.assert_allclose(grad[name], mean, rtol=1e-9, atol=1e-12, err_msg=name)


def test_parameters_round_trip_and_checks():
    net = egret.Network(json.dumps(config()))
    p = net.parameters()
    net.set_parameters(p)
    q = net.parameters()
    assert set(p) == set(q) and all(np.array_equal(p[k], q[k]) for k in p)
    assert p["layer0.U_u"].shape == (6, 4) and p["layer0.V_z"].shape == (6, 6)
    assert p["layer1.U_u"].shape == (3, 6) and p["readout.W_o"].shape == (3, 3)
    theta = p["layer0.theta"].copy()
    theta[2] = 0.45
    net.set_parameters({"layer0.theta": theta})
    assert net.parameters()["layer0.theta"][2] == 0.45
    with pytest.raises(ValueError, match=r"layer0.U_u: expected shape \(6, 4\)"):
        net.set_parameters({"layer0.U_u": np.zeros((4, 6))})
    with pytest.raises(ValueError, match="NaN or infinite entry at index 1"):
        net.set_parameters({"layer1.b_z": np.array([0.0, np.nan, 0.0])})
    with pytest.raises(ValueError, match="layer0.tau_m: NaN or infinite"):
        net.set_parameters({"layer0.tau_m": float("inf")})
    bad = theta.copy()
    bad[0] = -1.0
    with pytest.raises(ValueError, match=r"theta\[0\]: -1 is outside \[1e-06, inf\) \(a threshold\)"):
        net.set_parameters({"layer0.theta": bad})
    with pytest.raises(ValueError, match="unknown parameter 'layer0.W'"):
        net.set_parameters({"layer0.W": np.zeros(3)})
    with pytest.raises(ValueError, match="expected an array of numbers"):
        net.set_parameters({"layer0.b_u": "abc"})
    # nothing was half-applied by the failed calls
    assert net.parameters()["layer0.theta"][2] == 0.45 and net.parameters()["layer0.theta"][0] > 0


def test_checkpoint_and_trace_from_python(tmp_path, egret_bin):
    net = egret.Network(config())
    p = net.parameters()
    p["layer0.theta"] = p["layer0.theta"] + 0.05
    net.set_parameters(p)
    net.save_checkpoint(str(tmp_path / "ckpt.h5"), epoch=7)
    raw = egret.read_checkpoint(str(tmp_path / "ckpt.h5"))
    assert raw["epoch"] == 7 and json.loads(raw["configuration"]) == config()
    back = egret.Network.load_checkpoint(str(tmp_path / "ckpt.h5"))
    q = back.parameters()
    for k in p:  # theta goes through softplus and back: equal to rounding
        np.testing.assert_allclose(q[k], p[k], rtol=1e-14, atol=1e-15, err_msg=k)
    samples = [sample(seed=k) for k in range(3)]
    n = net.write_trace(str(tmp_path / "trace.h5"), samples, labels=[0, 1, 2])
    tr = egret.read_trace(str(tmp_path / "trace.h5"))
    sims = net.simulate_batch(samples)
    assert n == sum(len(r["time"]) for r in sims) > 0
    assert list(tr["sample_label"]) == [0, 1, 2]
    layer0 = tr["layers"][0]
    offsets = layer0["sample_offsets"]
    for k, r in enumerate(sims):
        mine = r["layer"] == 0
        got = layer0["timestamps"][offsets[k]:offsets[k + 1]] - tr["sample_start"][k]
        np.testing.assert_allclose(got, r["time"][mine], rtol=0, atol=1e-12)
        assert np.array_equal(layer0["node_ids"][offsets[k]:offsets[k + 1]], r["unit"][mine])
    r = run([egret_bin, "inspect", tmp_path / "trace.h5"])
    assert r.returncode == 0 and "layer0" in r.stdout
    with pytest.raises(RuntimeError, match="not an egret checkpoint"):
        egret.Network.load_checkpoint(str(tmp_path / "trace.h5"))


def test_checkpoint_written_by_egret_train_loads(tmp_path, egret_bin, root):
    cfg = json.loads((root / "examples" / "delay_copy.json").read_text())
    cfg["training"]["epochs"] = 2
    cfg["output"]["dir"] = str(tmp_path / "out")
    (tmp_path / "train.json").write_text(json.dumps(cfg))
    r = run([egret_bin, "train", "--config", tmp_path / "train.json"])
    assert r.returncode == 0, r.stderr
    # Trained in float (the example's default), stored in float64, reloaded in either precision.
    net = egret.Network.load_checkpoint(str(tmp_path / "out" / "checkpoint.h5"), precision="double")
    assert net.units == [2] and net.readout_classes == 2
    raw = egret.read_checkpoint(str(tmp_path / "out" / "checkpoint.h5"))
    assert raw["epoch"] == 2 and len(raw["adam_m"]) == len(raw["values"]) == 44
    p = net.parameters()
    theta = np.log1p(np.exp(raw["values"][36:38]))  # softplus(rho), the layout of train/parameters.hpp
    # The network that was saved: its thetas as written (/parameters, float-rounded by the float
    # run), which softplus of the training coordinate gives within float rounding.
    with h5py.File(tmp_path / "out" / "checkpoint.h5", "r") as f:
        saved = f["parameters/layer0/theta"][()]
    np.testing.assert_array_equal(p["layer0.theta"], saved)
    np.testing.assert_allclose(p["layer0.theta"], theta, rtol=3e-7)
    in_float = egret.Network.load_checkpoint(str(tmp_path / "out" / "checkpoint.h5"))
    assert in_float.precision == "float"
    np.testing.assert_allclose(in_float.parameters()["layer0.theta"], theta, rtol=3e-7)


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
    with pytest.raises(ValueError, match="entry 2 is not an integer"):
        net.simulate(t, np.array([0, 1, 2.5, 0, 0, 0, 0, 0, 0, 0]), end_time=40.0)
    with pytest.raises(ValueError, match="expected integers, got dtype <U1"):
        net.simulate(t, np.array(list("abcdefghij")), end_time=40.0)
    with pytest.raises(ValueError, match="expected a 1-D array"):
        net.simulate(t.reshape(2, 5), ch.reshape(2, 5), end_time=40.0)
    with pytest.raises(ValueError, match="readout window"):
        net.simulate(t, ch, end_time=40.0, readout_windows=[(30.0, 20.0)])
    with pytest.raises(ValueError, match="end_time must be finite and > 0"):
        net.simulate(t, ch, end_time=float("nan"))
    with pytest.raises(ValueError, match="input events after end_time"):
        net.simulate(t, ch, end_time=5.0)
    with pytest.raises(ValueError, match="unknown key 'tau_mm'"):
        c = config()
        c["layers"][0]["tau_mm"] = 1
        egret.Network(c)
    with pytest.raises(ValueError, match="unknown loss"):
        net.loss_and_gradient(sample(), loss="hinge")
    with pytest.raises(ValueError, match="2 labels for 1 readouts"):
        egret.Sample(t, ch, channels=4, end_time=40.0, readout_times=[20.0], labels=[0, 1])
    with pytest.raises(ValueError, match=r"targets must have shape \(readouts = 2, outputs >= 1\)"):
        egret.Sample(t, ch, channels=4, end_time=40.0, readout_times=[20.0, 30.0],
                     targets=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="has no targets for binary_cross_entropy"):
        net.loss_and_gradient(sample(), loss="binary_cross_entropy")
    with pytest.raises(ValueError, match="label 5 out of range"):
        net.loss_and_gradient(sample(labels=(5, 0)))
    with pytest.raises(ValueError, match="sample 0 has 5 channels, the network 4"):
        net.loss_and_gradient(egret.Sample(t, ch, channels=5, end_time=40.0, readout_times=[20.0],
                                           labels=0))
    with pytest.raises(ValueError, match="sample 1 has 1 readouts, sample 0 has 2"):
        net.forward([sample(), egret.Sample(t, ch, channels=4, end_time=40.0, readout_times=[9.0])])
    with pytest.raises(ValueError, match="expected an egret.Sample or a sequence"):
        net.forward([1, 2])
    with pytest.raises(ValueError, match="empty batch"):
        net.forward([])


def test_type_stubs_cover_the_module(root):
    """python/egret/_egret.pyi names every public function, class and method of the module."""
    import ast
    tree = ast.parse((root / "python" / "egret" / "_egret.pyi").read_text())
    stub = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            stub[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        elif isinstance(node, ast.FunctionDef):
            stub[node.name] = None
        elif isinstance(node, ast.AnnAssign):
            stub[node.target.id] = None
    public = {n for n in dir(egret._egret) if not n.startswith("_")}
    assert public == set(stub)
    for name, members in stub.items():
        if members is not None:
            actual = {n for n in dir(getattr(egret._egret, name)) if not n.startswith("_")}
            assert actual == members - {"__init__", "__len__"}, name


def test_continuous_and_discrete_network_matches_the_cli(egret_bin, root, tmp_path):
    """examples/two_layer.json: a continuous EGRU layer feeding a discrete EGRU layer."""
    cfg = root / "examples" / "two_layer.json"
    r = run([egret_bin, "simulate", "--config", cfg, "--input", root / "examples" / "events.csv",
             "--trace", tmp_path / "trace.csv"])
    assert r.returncode == 0, r.stderr
    cli = np.loadtxt(tmp_path / "trace.csv", delimiter=",", skiprows=1)
    ev = np.loadtxt(root / "examples" / "events.csv", delimiter=",", skiprows=1, ndmin=2)
    net = egret.Network(cfg.read_text())
    assert net.layer_types == ["continuous_egru", "discrete_egru"]
    assert repr(net) == ("<egret.Network: 8 inputs; continuous_egru (16), discrete_egru (8); "
                         "readout 3 classes>")
    py = net.simulate(ev[:, 0], ev[:, 1].astype(int), ev[:, 2] if ev.shape[1] > 2 else None,
                      end_time=200.0)
    assert (cli[:, 1] == 1).sum() > 0  # the discrete layer emits events
    assert np.array_equal(py["time"], cli[:, 0]) and np.array_equal(py["unit"], cli[:, 2])
    assert np.array_equal(py["layer"], cli[:, 1]) and np.array_equal(py["value"], cli[:, 3])
    assert py["layer_counts"][1]["internal_steps"] == 200  # ticks of dt = 1 ms
    names = {"U_u", "U_r", "U_z", "V_u", "V_r", "V_z", "b_u", "b_r", "b_z", "theta", "tau_o"}
    assert {k.split(".")[1] for k in net.parameters() if k.startswith("layer1.")} == names
    s = egret.Sample(ev[:, 0], ev[:, 1].astype(int), channels=8, end_time=200.0,
                     readout_times=[100.0], labels=0)
    # the mixed network trains (its gradients: tests/python/test_discrete_egru_gradients.py)
    _, grads, stats = net.loss_and_gradient(s)
    assert np.abs(grads["layer1.U_z"]).max() > 0 and np.isfinite(grads["layer1.V_z"]).all()
    assert stats["surrogate_pairs"] == 8 * 200  # the discrete layer's (unit, tick) pairs


def test_samples_arguments_and_lifetimes(tmp_path):
    net = egret.Network(config())
    # samples from a generator: the batch holds them while C++ runs
    expected = [r["time"] for r in net.simulate_batch([sample(seed=k) for k in range(6)])]
    got = [r["time"] for r in net.simulate_batch(sample(seed=k) for k in range(6))]
    assert all(np.array_equal(a, b) for a, b in zip(expected, got))
    t, ch, v = events(20)
    # labels as numpy integers, one per readout or one for all
    s = egret.Sample(t, ch, channels=4, end_time=40.0, readout_times=[10.0, 20.0],
                     labels=np.int64(2))
    assert s.labels == [2, 2]
    assert egret.Sample(t, ch, channels=4, end_time=40.0, readout_times=[10.0, 20.0],
                        labels=np.array([0, 1], dtype=np.uint8)).labels == [0, 1]
    with pytest.raises(ValueError, match=r"label 8589934592 out of range"):
        egret.Sample(t, ch, channels=4, end_time=40.0, readout_times=[10.0], labels=[2**33])
    with pytest.raises(ValueError, match=r"label 1099511627776 out of range"):
        egret.Sample(t, ch, channels=4, end_time=40.0, readout_times=[10.0], labels=2**40)
    with pytest.raises(ValueError, match="expected an integer class label"):
        egret.Sample(t, ch, channels=4, end_time=40.0, readout_times=[10.0], labels=[0.5])
    with pytest.raises(ValueError, match="labels or targets given but no readouts"):
        egret.Sample(t, ch, channels=4, end_time=40.0, targets=np.zeros((0, 2)))
    with pytest.raises(ValueError, match=r"outputs >= 1"):
        egret.Sample(t, ch, channels=4, end_time=40.0, readout_times=[5.0], targets=np.zeros((1, 0)))
    with pytest.raises(ValueError, match="targets must be an array of numbers"):
        egret.Sample(t, ch, channels=4, end_time=40.0, readout_times=[5.0], targets=[["a"]])
    with pytest.raises(ValueError, match="readout_windows: expected a sequence"):
        egret.Sample(t, ch, channels=4, end_time=40.0, readout_windows=5)
    with pytest.raises(ValueError, match=r"readout time 50.0+ is outside \[0, end_time = 40"):
        egret.Sample(t, ch, channels=4, end_time=40.0, readout_times=[50.0])
    with pytest.raises(ValueError, match=r"readout window begin nan is outside"):
        egret.Sample(t, ch, channels=4, end_time=40.0, readout_windows=[(np.nan, 30.0)])
    with pytest.raises(ValueError, match=r"threads must be in \[0, 4096\]"):
        net.simulate_batch([sample()], threads=100000)
    with pytest.raises(ValueError, match=r"threads must be in \[0, 4096\]"):
        net.loss_and_gradient([sample()], threads=-1)


def test_one_network_from_several_python_threads():
    """The GIL is released while C++ runs; calls on one network from several threads (with
    set_parameters in between) give the results of the same calls made one after another."""
    import threading
    net = egret.Network(config())
    samples = [sample(seed=k) for k in range(4)]
    p0 = net.parameters()
    p1 = dict(p0, **{"layer0.theta": p0["layer0.theta"] + 0.05})
    ref = {}
    for name, p in (("p0", p0), ("p1", p1)):
        net.set_parameters(p)
        ref[name] = (net.loss_and_gradient(samples)[0],
                     [r["time"] for r in net.simulate_batch(samples)])
    seen, errors = [], []

    def worker():
        try:
            for _ in range(15):
                loss = net.loss_and_gradient(samples, threads=1)[0]
                times = [r["time"] for r in net.simulate_batch(samples, threads=1)]
                seen.append((loss, times))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for th in threads:
        th.start()
    for k in range(30):
        net.set_parameters(p0 if k % 2 else p1)
    for th in threads:
        th.join()
    assert not errors, errors
    assert len(seen) == 45
    for loss, _ in seen:
        assert loss in (ref["p0"][0], ref["p1"][0])


def test_checkpoint_of_a_network_built_from_a_training_configuration(tmp_path, root):
    net = egret.Network((root / "examples" / "delay_copy.json").read_text())
    net.save_checkpoint(str(tmp_path / "c.h5"))
    back = egret.Network.load_checkpoint(str(tmp_path / "c.h5"))
    for k, v in net.parameters().items():
        np.testing.assert_allclose(back.parameters()[k], v, rtol=1e-14, err_msg=k)


def test_simulation_settings_of_the_configuration_apply_to_every_run():
    """"simulation": max_events is the event budget of every run from Python (it used to apply to
    the CLI's simulate only), and tape_checkpoint_every sets how often the tape keeps the layers'
    state: any K gives bitwise the same gradient (the state in between is recomputed exactly)."""
    samples = [sample(seed=k, labels=(k % 3, 2)) for k in range(3)]
    small = config()
    small["simulation"]["max_events"] = 50
    with pytest.raises(RuntimeError, match="event budget"):
        egret.Network(small).simulate_batch(samples)
    with pytest.raises(RuntimeError, match="event budget"):
        egret.Network(small).loss_and_gradient(samples)
    results = {}
    for k in (1, 5, 0):
        cfg = config()
        cfg["simulation"]["tape_checkpoint_every"] = k
        loss, grad, _ = egret.Network(cfg).loss_and_gradient(samples)
        results[k] = (loss, grad)
    for k in (5, 0):
        assert results[k][0] == results[1][0]
        for name, g in results[1][1].items():
            np.testing.assert_array_equal(results[k][1][name], g, err_msg=f"K = {k}: {name}")
    bad = config()
    bad["simulation"]["tape_checkpoint_every"] = -1
    with pytest.raises(ValueError, match="tape_checkpoint_every"):
        egret.Network(bad)


def test_sparse_connectivity_from_configuration_gradient_and_checkpoint(tmp_path):
    """"connectivity" makes a sparse layer: a fixed fan-out of connections shared by the gates,
    gradients that are zero exactly at absent connections (so an optimizer step keeps them
    absent), and a checkpoint that reloads the same connections and the same loss."""
    cfg = config()
    cfg["layers"][0]["units"] = 20
    cfg["layers"][0]["connectivity"] = {"input": 0.5, "recurrent": 0.2}
    net = egret.Network(cfg)
    p = net.parameters()
    for name, fan_out in (("U", 10), ("V", 4)):
        present = p[f"layer0.{name}_u"] != 0
        np.testing.assert_array_equal(present.sum(axis=0), fan_out)
        for gate in ("r", "z"):
            np.testing.assert_array_equal(p[f"layer0.{name}_{gate}"] != 0, present)
    samples = [sample(seed=k, labels=(k % 3, 2)) for k in range(3)]
    loss, grad, _ = net.loss_and_gradient(samples)
    for name in ("U_u", "U_r", "U_z", "V_u", "V_r", "V_z"):
        absent = p[f"layer0.{name}"] == 0
        assert absent.sum() > 0
        assert np.all(grad[f"layer0.{name}"][absent] == 0), name
        assert np.any(grad[f"layer0.{name}"][~absent] != 0), name
    net.set_parameters({k: p[k] - 0.1 * grad[k] for k in grad if k.startswith("layer0.V")})
    after = net.parameters()
    np.testing.assert_array_equal(after["layer0.V_u"] == 0, p["layer0.V_u"] == 0)
    net.save_checkpoint(str(tmp_path / "sparse.h5"), epoch=1)
    again = egret.Network.load_checkpoint(str(tmp_path / "sparse.h5"))
    np.testing.assert_array_equal(again.parameters()["layer0.V_z"], after["layer0.V_z"])
    assert again.loss_and_gradient(samples)[0] == net.loss_and_gradient(samples)[0]


def test_checkpoint_of_format_2_keeps_the_self_recurrence_it_was_trained_with(root, tmp_path):
    """tests/data/checkpoint_v2_delay_copy.h5 was written by egret 5dff143 (format 2, before the
    "self_recurrence" option, when a unit's own event always reached its own pre-activations):
    `egret train` on examples/delay_copy.json in double with 16 training and 8 held-out trials,
    2 epochs. Its training_log.csv gave the held-out loss 0.54403706016553488 at epoch 2. Read
    now, the layer gets "self_recurrence": true and the same network gives the same loss; the
    same parameters without self-recurrence are refused, not silently changed."""
    path = root / "tests" / "data" / "checkpoint_v2_delay_copy.h5"
    with h5py.File(path, "r") as f:
        assert f.attrs["egret_format_version"] == 2
        assert np.any(np.diag(f["parameters/layer0/V_u"][()]) != 0)
    net = egret.Network.load_checkpoint(str(path))
    assert json.loads(net.config)["layers"][0]["self_recurrence"] is True
    held_out = egret.delay_copy_trials(8, 3)  # the task's seed 2, plus 1 for held-out trials
    loss = net.loss_and_gradient(held_out, loss="binary_cross_entropy")[0]
    assert loss == 0.54403706016553488
    cfg = json.loads(net.config)
    cfg["layers"][0]["self_recurrence"] = False
    with pytest.raises(ValueError, match=r"V_u\[0, 0\] = .* self-recurrence"):
        egret.Network(json.dumps(cfg)).set_parameters(net.parameters())
    # Saved again, it is the current format (4) with the option written out, and loads the same.
    net.save_checkpoint(str(tmp_path / "v4.h5"), epoch=2)
    with h5py.File(tmp_path / "v4.h5", "r") as f:
        assert f.attrs["egret_format_version"] == 4
    again = egret.Network.load_checkpoint(str(tmp_path / "v4.h5"))
    assert again.loss_and_gradient(held_out, loss="binary_cross_entropy")[0] == loss


def _mixed_fixture_samples():
    def sample(k):
        rng = np.random.default_rng(k)
        t = np.sort(rng.uniform(0, 38, 90))
        ch = rng.integers(0, 3, 90).astype(np.int64)
        v = rng.uniform(0.5, 1.5, 90)
        return egret.Sample(t, ch, v, channels=3, end_time=40.0, readout_windows=[(20.0, 39.0)],
                            labels=[k % 2])
    return [sample(k) for k in range(3)]


def test_checkpoint_of_format_3_gives_each_unit_its_layers_time_constant(root, tmp_path):
    """tests/data/checkpoint_v3_scalar_tau_mixed.h5 was written by egret e8497f9 (format 3, one
    time constant per layer) with Network.save_checkpoint: an exp-kernel continuous EGRU (tau_m
    6.5, tau_o 7, tau_s 4), a LIF layer (tau_mem 14) and an su_snn layer (tau_mem 11). On the three
    samples below that egret gave the loss 0.709871593341101 and these event counts per layer.
    Read now, every unit has its layer's value, and the network behaves as it did."""
    path = root / "tests" / "data" / "checkpoint_v3_scalar_tau_mixed.h5"
    with h5py.File(path, "r") as f:
        assert f.attrs["egret_format_version"] == 3
        assert f["parameters/layer0"].attrs["tau_m"] == 6.5
    net = egret.Network.load_checkpoint(str(path))
    p = net.parameters()
    for name, value in (("layer0.tau_m", 6.5), ("layer0.tau_o", 7.0), ("layer0.tau_s", 4.0),
                        ("layer1.tau_mem", 14.0), ("layer2.tau_mem", 11.0)):
        assert np.all(np.asarray(p[name]) == value), name
    assert p["layer0.tau_m"].shape == (3,)
    samples = _mixed_fixture_samples()
    loss = net.loss_and_gradient(samples, loss="softmax_cross_entropy")[0]
    assert loss == pytest.approx(0.709871593341101, rel=1e-12)
    counts = [np.bincount(r["layer"], minlength=3).tolist() for r in net.simulate_batch(samples)]
    assert counts == [[7, 51, 28], [10, 61, 21], [6, 51, 22]]
    # Per-unit values round-trip bitwise through a format-4 checkpoint.
    p["layer0.tau_m"] = np.array([4.25, 6.5, 9.125]) * (1 + 1e-13)
    p["layer0.tau_o"] = np.array([3.0, 7.0, 11.0]) / 3
    p["layer0.tau_s"] = np.array([2.0, 4.0, 8.0]) * np.pi
    net.set_parameters(p)
    net.save_checkpoint(str(tmp_path / "v4.h5"), epoch=5)
    with h5py.File(tmp_path / "v4.h5", "r") as f:
        assert f.attrs["egret_format_version"] == 4
        assert f["parameters/layer0/tau_m"].shape == (3,)
    back = egret.Network.load_checkpoint(str(tmp_path / "v4.h5")).parameters()
    for name in ("layer0.tau_m", "layer0.tau_o", "layer0.tau_s"):
        assert np.array_equal(back[name], p[name]), name
    # One number still sets every unit's; a wrong length or a bad entry is refused.
    net.set_parameters({"layer0.tau_m": 5.0})
    assert np.array_equal(net.parameters()["layer0.tau_m"], [5.0, 5.0, 5.0])
    with pytest.raises(ValueError, match=r"layer0.tau_m: expected shape \(3\)"):
        net.set_parameters({"layer0.tau_m": np.array([5.0, 6.0])})
    with pytest.raises(ValueError, match=r"tau_m\[1\]"):
        net.set_parameters({"layer0.tau_m": np.array([5.0, -1.0, 6.0])})


def test_training_resumes_from_a_checkpoint_of_format_3(root, tmp_path, egret_bin):
    """tests/data/checkpoint_v3_scalar_tau_delay_copy.h5: `egret train` by e8497f9 (format 3) on a
    3-unit delay-copy network with train_time_constants, 2 epochs (32 training and 8 held-out
    trials); its held-out loss read back then was 0.5552681609988213. Now it loads with each unit
    given the layer's tau_m and tau_o, gives the same loss, and training resumes from it with a
    time constant per unit (their Adam moments start at 0)."""
    path = root / "tests" / "data" / "checkpoint_v3_scalar_tau_delay_copy.h5"
    net = egret.Network.load_checkpoint(str(path))
    p = net.parameters()
    assert p["layer0.tau_m"].shape == (3,)
    assert np.all(p["layer0.tau_m"] == 4.830617904663086)
    held_out = egret.delay_copy_trials(8, 3)
    loss = net.loss_and_gradient(held_out, loss="binary_cross_entropy")[0]
    assert loss == pytest.approx(0.5552681609988213, rel=1e-12)
    (tmp_path / "out").mkdir()
    r = run([egret_bin, "train", "--resume", path, "--out", tmp_path / "out", "--epochs", "4"])
    assert r.returncode == 0, r.stderr
    assert re.search(r"^epoch\s+3 ", r.stdout, re.M) and re.search(r"^epoch\s+4 ", r.stdout, re.M)
    assert not re.search(r"^epoch\s+1 ", r.stdout, re.M)
    with h5py.File(tmp_path / "out" / "checkpoint.h5", "r") as f:
        assert f.attrs["egret_format_version"] == 4 and f.attrs["epoch"] == 4
        tau_m = f["parameters/layer0/tau_m"][()]
    # Trained unit by unit: the units that fire moved apart (a silent unit has no gradient).
    assert tau_m.shape == (3,) and len(set(tau_m.tolist())) >= 2


def test_runaway_guard_reports_event_rate_growth(tmp_path, egret_bin, root):
    """`training.rate_growth_limit`: after every epoch but the first, a layer whose event rate
    exceeds the limit times its first epoch's is reported, with both rates and their ratio (the
    rates are those of the progress line: one layer). A limit of 0 is off."""
    cfg = json.loads((root / "examples" / "delay_copy.json").read_text())
    cfg["training"]["epochs"] = 3
    cfg["output"]["dir"] = str(tmp_path / "out")
    for limit, warnings in ((1e-6, 2), (0, 0), (1e6, 0)):
        cfg["training"]["rate_growth_limit"] = limit
        (tmp_path / "train.json").write_text(json.dumps(cfg))
        r = run([egret_bin, "train", "--config", tmp_path / "train.json"])
        assert r.returncode == 0, r.stderr
        rates = [float(m) for m in re.findall(r"\|\s+([\d.]+) ev/unit/s", r.stdout)]
        found = re.findall(r"warning: layer 0's event rate grew to ([\d.]+) events/unit/s, "
                           r"([\d.]+)x its first epoch's ([\d.]+)", r.stdout)
        assert len(rates) == 3 and len(found) == warnings, r.stdout
        for k, (rate, ratio, first) in enumerate(found):
            assert float(rate) == rates[k + 1] and float(first) == rates[0]
            assert abs(float(ratio) - rates[k + 1] / rates[0]) <= 0.051
    cfg["training"]["rate_growth_limit"] = -1
    (tmp_path / "train.json").write_text(json.dumps(cfg))
    r = run([egret_bin, "train", "--config", tmp_path / "train.json"])
    assert r.returncode != 0 and "training.rate_growth_limit" in r.stderr
