"""The LIF family (models/lif_cell.hpp): forward spikes and surrogate gradients against PyTorch
autograd of the equations, written here independently:
    v_k = alpha v_{k-1} + W x_k + V s_{k-1} + b - theta s_{k-1},  alpha = exp(-dt / tau_mem)
    s_k = H(v_k - theta), with the arctan surrogate 1 / (1 + (alpha_s pi u)^2) in place of H'.
Inputs are binned into (t_{k-1}, t_k]; a layer consumes the spikes of the layer below at the same
tick; the readout sees the output trace of the last layer's spikes. Cases: two layers, several
readouts, a batch of samples, every parameter, the input values."""
import math

import numpy as np
import torch

import egret
from autograd_reference import (bin_inputs, compare, heaviside_with_surrogate, layer_params,
                                logits_of, loss_of, named_tensors, random_events, readout_params,
                                readouts)


def lif_layer(P, x, dt, alpha_s, counts):
    """x: (K, D) binned inputs -> (K, N) spikes."""
    H = heaviside_with_surrogate(lambda u: 1 / (1 + (alpha_s * math.pi * u) ** 2))
    n = P["theta"].shape[0]
    alpha = torch.exp(-dt / P["tau_mem"])
    v = torch.zeros(n, dtype=torch.float64)
    s = torch.zeros(n, dtype=torch.float64)
    out = []
    for xk in x:
        v = alpha * v + P["W"] @ xk + P["V"] @ s + P["b"] - P["theta"] * s
        s = H(v - P["theta"])
        counts["pairs"] += n
        out.append(s)
    return torch.stack(out)


def config(seed, dt, alpha_s):
    layer = {"type": "lif", "dt": dt, "surrogate": {"alpha": alpha_s}}
    return {"precision": "double", "seed": seed, "input_channels": 5, "readout_classes": 3,
            "layers": [dict(layer, units=7, tau_mem=6, tau_o=5, threshold=0.6,
                            init={"weight_scale": 3.0, "recurrent_scale": 1.5, "bias": 0.1,
                                  "bias_spread": 0.2}),
                       dict(layer, units=4, tau_mem=4, tau_o=7, threshold=0.5,
                            init={"weight_scale": 2.5, "recurrent_scale": 1.0})]}


def test_two_lif_layers_batch_of_three_equal_autograd():
    dt, end, alpha_s = 0.5, 20.0, 2.0
    net = egret.Network(config(4, dt, alpha_s))
    rng = np.random.default_rng(4)
    points, windows = [6.1, 12.0, 19.9], [(2.0, 9.5), (14.0, 20.0)]
    samples, events_per_sample, targets_all = [], [], []
    for _ in range(3):
        t, ch, v = random_events(rng, 80, end, 5)
        targets = rng.integers(0, 3, len(points) + len(windows))
        samples.append(egret.Sample(t, ch, v, channels=5, end_time=end, readout_times=points,
                                    readout_windows=windows, labels=[int(x) for x in targets]))
        events_per_sample.append((t, ch, v))
        targets_all.append(targets)
    value, grads, stats = net.loss_and_gradient(samples, loss="softmax_cross_entropy")

    ticks = int(round(end / dt))
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    W = readout_params(net)
    counts = {"pairs": 0}
    total, spikes = 0, 0
    for (t, ch, v), targets in zip(events_per_sample, targets_all):
        x = bin_inputs(t, ch, torch.tensor(v), dt, ticks, 5)
        s0 = lif_layer(P0, x, dt, alpha_s, counts)
        s1 = lif_layer(P1, s0, dt, alpha_s, counts)
        o = readouts(s1, dt, P1["tau_o"], points, windows)
        total = total + loss_of(logits_of(o, W),
                                "softmax_cross_entropy", targets)
        spikes += int(s0.sum()) + int(s1.sum())
        # the forward pass: egret's spikes are the reference's
        r = net.simulate(t, ch, v, end_time=end)
        for layer, s in ((0, s0), (1, s1)):
            k, n = np.nonzero(s.detach().numpy())
            mine = r["layer"] == layer
            assert np.array_equal(np.round(r["time"][mine] / dt).astype(int), k + 1)
            assert np.array_equal(r["unit"][mine], n)
            assert np.all(r["value"][mine] == 1.0)
    ref = total / 3
    ref.backward()
    assert abs(value - float(ref)) <= 1e-12 * abs(float(ref))
    tensors = named_tensors(W, P0, P1)
    worst = compare(grads, tensors)
    # W, V, b, theta, tau_mem, tau_o per layer and the readout's two; layer 0's tau_o has a zero
    # gradient (no readout sees its trace), which compare() checks is zero on both sides
    assert len(worst) == 2 * 6 + 2 - 1
    assert stats["surrogate_pairs"] == counts["pairs"] == 3 * ticks * (7 + 4)
    assert stats["zero_surrogate_pairs"] == 0  # the arctan surrogate is never zero
    assert spikes > 150
    print(f"two LIF layers, batch of 3: {spikes} spikes, worst relative error "
          f"{max(worst.values()):.1e} ({max(worst, key=worst.get)})")


def test_lif_input_value_gradients_equal_autograd():
    dt, end, alpha_s = 1.0, 30.0, 1.0
    net = egret.Network(config(8, dt, alpha_s))
    rng = np.random.default_rng(8)
    t, ch, v = random_events(rng, 60, end, 5)
    targets = rng.uniform(-1, 1, (2, 3))
    sample = egret.Sample(t, ch, v, channels=5, end_time=end, readout_times=[15.0, 29.5],
                          targets=targets)
    _, grads, _ = net.loss_and_gradient(sample, loss="mean_squared_error")
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    W = readout_params(net)
    values = torch.tensor(v, requires_grad=True)
    counts = {"pairs": 0}
    x = bin_inputs(t, ch, values, dt, int(end / dt), 5)
    s1 = lif_layer(P1, lif_layer(P0, x, dt, alpha_s, counts), dt, alpha_s, counts)
    o = readouts(s1, dt, P1["tau_o"], [15.0, 29.5], [])
    loss_of(logits_of(o, W), "mean_squared_error", targets).backward()
    worst = compare(grads, {"input.value": values})
    assert np.abs(np.asarray(grads["input.time"])).max() == 0  # binned: input times get none
    print(f"LIF input values: worst relative error {worst['input.value']:.1e}")
