"""Held inputs as window changes (docs/adjoint.md §5, "Netted input windows"): a binned stream
whose window is four bins, where most inputs start when an earlier input of their channel ends.
The netted run (the default) and `"simulation": {"net_input_windows": false}` are the same model:
the same events and counts, readouts and gradients within rounding, in Python's simulate_batch
and loss_and_gradient as in the C++ tests (tests/test_event_batches.cpp, test_adjoint_fd.cpp)."""
import copy

import numpy as np
import pytest

import egret


def binned_config(net_input_windows=None):
    cfg = {"seed": 3, "input_channels": 24, "readout_classes": 3,
           "layers": [{"type": "continuous_egru", "units": 10, "tau_m": 10, "tau_o": 20,
                       "window_input": 20, "window_recurrent": 10, "threshold": 0.3,
                       "init": {"weight_scale": 1.5, "bias_z": 0.6}}]}
    if net_input_windows is not None:
        cfg["simulation"] = {"net_input_windows": net_input_windows}
    return cfg


def binned_samples(n=3):
    rng = np.random.default_rng(11)
    samples = []
    for s in range(n):
        t, ch, val = [], [], []
        for b in range(1, 41):  # 12 of 24 channels per 5 ms bin, counts 1-2: many pairs repeat
            for c in rng.choice(24, size=12, replace=False):
                t.append(5.0 * b), ch.append(int(c)), val.append(float(rng.integers(1, 3)))
        samples.append(egret.Sample(np.array(t), np.array(ch), np.array(val), channels=24,
                                    end_time=220.0, readout_windows=[(40.0, 220.0)],
                                    labels=[s % 3]))
    return samples


@pytest.mark.parametrize("precision,tol", [("double", 1e-9), ("float", 1e-3)])
def test_netted_windows_give_the_same_events_counts_and_gradients(precision, tol):
    samples = binned_samples()
    netted = egret.Network(binned_config(), precision=precision)
    plain = egret.Network(binned_config(False), precision=precision)
    plain.set_parameters(netted.parameters())
    a = netted.simulate_batch(samples, threads=1)
    b = plain.simulate_batch(samples, threads=1)
    events = 0
    for ra, rb in zip(a, b):
        assert ra["events_processed"] == rb["events_processed"]
        assert ra["events_processed"] > 2 * 400  # every input and its release
        for la_, lb_ in zip(ra["layer_counts"], rb["layer_counts"]):
            for key in ("events", "inputs_received", "releases", "internal_steps",
                        "synaptic_macs", "synaptic_acs", "gate_products", "membrane_updates",
                        "active_unit_steps"):
                assert la_[key] == lb_[key], key
        np.testing.assert_allclose(ra["logits"], rb["logits"], rtol=tol, atol=tol)
        events += sum(ra["events_per_layer"])
    assert events > 100, "too quiet to be a test"
    la, ga, _ = netted.loss_and_gradient(samples, threads=1)
    lb, gb, _ = plain.loss_and_gradient(samples, threads=1)
    assert abs(la - lb) <= tol * abs(lb)
    for k in gb:
        norm = np.linalg.norm(np.ravel(gb[k]))
        if norm > 0:
            assert np.linalg.norm(np.ravel(ga[k] - gb[k])) <= tol * norm, k


def test_net_input_windows_must_be_true_or_false():
    cfg = copy.deepcopy(binned_config())
    cfg["simulation"] = {"net_input_windows": 1}
    with pytest.raises(ValueError, match="simulation.net_input_windows.*expected true or false"):
        egret.Network(cfg)
