"""The LIF family (models/lif/lif_cell.hpp): forward spikes and surrogate gradients against PyTorch
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
from autograd_reference import (heaviside_with_surrogate, input_values_equal_autograd,
                                labelled_batch, random_events, readouts, spikes_match,
                                two_layers_equal_autograd)


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


def two_layers(P0, P1, x, dt, alpha_s, counts):
    s0 = lif_layer(P0, x, dt, alpha_s, counts)
    return s0, lif_layer(P1, s0, dt, alpha_s, counts)


def test_two_lif_layers_batch_of_three_equal_autograd():
    dt, end, alpha_s = 0.5, 20.0, 2.0
    net = egret.Network(config(4, dt, alpha_s))
    rng = np.random.default_rng(4)
    points, windows = [6.1, 12.0, 19.9], [(2.0, 9.5), (14.0, 20.0)]
    cases, samples = labelled_batch(rng, end, points, windows)
    ticks = int(round(end / dt))
    counts = {"pairs": 0}
    # the forward pass: egret's spikes are the reference's
    _, stats, worst, spikes = two_layers_equal_autograd(
        net, cases, samples, dt, end,
        lambda P0, P1, x: two_layers(P0, P1, x, dt, alpha_s, counts),
        lambda s, P: readouts(s, dt, P["tau_o"], points, windows),
        lambda r, x, s0, s1: spikes_match(r, 0, s0, dt) + spikes_match(r, 1, s1, dt))
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
    events = random_events(rng, 60, end, 5)
    targets = rng.uniform(-1, 1, (2, 3))
    counts = {"pairs": 0}
    grads, worst = input_values_equal_autograd(
        net, events, targets, dt, end, [15.0, 29.5], [],
        lambda P0, P1, x: two_layers(P0, P1, x, dt, alpha_s, counts),
        lambda s, P: readouts(s, dt, P["tau_o"], [15.0, 29.5], []))
    assert np.abs(np.asarray(grads["input.time"])).max() == 0  # binned: input times get none
    print(f"LIF input values: worst relative error {worst:.1e}")
