"""The selective-update spiking family (models/su_snn/su_snn_cell.hpp, suRNN paper Fig. A1): forward spikes
and surrogate gradients against PyTorch autograd of the equations, written here independently:
    a_k = g_b + sum_j g_alpha[:, j] sin(g_omega_j t_k + g_phi[:, j]),  g = H_gate(a)
    ubar_k = alpha u_{k-1} + W x_k + V s_{k-1} + b - theta H(u_{k-1} - theta)
    u_k = u_{k-1} + g (ubar_k - u_{k-1}),  s_k = g H(u_k - theta)
with the arctan surrogate 1 / (1 + (alpha_s pi q)^2) for the spike's H and the sigmoid-derivative
surrogate beta s (1 - s) for the gate's; alpha = exp(-dt / tau_mem) has one entry per unit. Cases: two layers, a batch of three, point and window
readouts of the output trace, every parameter (the gate's too), the input values, distinct
per-unit tau_mem; and the schedule's sparsity: a closed unit never spikes."""
import math

import numpy as np
import torch

import egret
from autograd_reference import (heaviside_with_surrogate, input_values_equal_autograd,
                                labelled_batch, random_events, readouts, spikes_match,
                                two_layers_equal_autograd)


def su_snn_layer(P, x, dt, alpha_s, slope, counts):
    """x: (K, D) binned inputs -> (K, N) spikes."""
    H = heaviside_with_surrogate(lambda q: 1 / (1 + (alpha_s * math.pi * q) ** 2))
    H_gate = heaviside_with_surrogate(lambda a: slope * torch.sigmoid(slope * a)
                                      * (1 - torch.sigmoid(slope * a)))
    n = P["theta"].shape[0]
    assert P["tau_mem"].shape == (n,)  # one membrane time constant per unit
    alpha = torch.exp(-dt / P["tau_mem"])  # (n,): every unit its own decay
    u = torch.zeros(n, dtype=torch.float64)
    s = torch.zeros(n, dtype=torch.float64)
    out = []
    for k, xk in enumerate(x):
        t = dt * (k + 1)
        g = H_gate(P["g_b"] + (P["g_alpha"] * torch.sin(P["g_omega"] * t + P["g_phi"])).sum(1))
        ubar = (alpha * u + P["W"] @ xk + P["V"] @ s + P["b"]
                - P["theta"] * H(u - P["theta"]))
        u = u + g * (ubar - u)
        s = g * H(u - P["theta"])
        counts["open"] += int(g.sum())
        counts["pairs"] += n
        counts["closed_spikes"] += int(((1 - g) * (u > P["theta"])).sum())
        out.append(s)
    return torch.stack(out)


def config(seed, dt, alpha_s, slope):
    layer = {"type": "su_snn", "dt": dt, "surrogate": {"alpha": alpha_s, "slope": slope}}
    return {"precision": "double", "seed": seed, "input_channels": 5, "readout_classes": 3,
            "layers": [dict(layer, units=7, tau_mem=6, tau_o=5, threshold=0.6,
                            init={"weight_scale": 3.0, "recurrent_scale": 1.5, "bias": 0.1,
                                  "bias_spread": 0.2},
                            gate={"frequencies": 3, "period_min": 2, "period_max": 20,
                                  "bias": -0.2}),
                       dict(layer, units=4, tau_mem=4, tau_o=7, threshold=0.5,
                            init={"weight_scale": 2.5, "recurrent_scale": 1.0},
                            gate={"bias": 0.1, "period_max": 10})]}


def two_layers(P0, P1, x, dt, alpha_s, slope, counts):
    s0 = su_snn_layer(P0, x, dt, alpha_s, slope, counts)
    return s0, su_snn_layer(P1, s0, dt, alpha_s, slope, counts)


def test_two_su_snn_layers_batch_of_three_equal_autograd():
    dt, end, alpha_s, slope = 0.5, 20.0, 2.0, 2.0
    net = egret.Network(config(4, dt, alpha_s, slope))
    rng = np.random.default_rng(4)
    points, windows = [6.1, 12.0, 19.9], [(2.0, 9.5), (14.0, 20.0)]
    cases, samples = labelled_batch(rng, end, points, windows)
    ticks = int(round(end / dt))
    counts = {"open": 0, "pairs": 0, "closed_spikes": 0}
    _, stats, worst, spikes = two_layers_equal_autograd(  # egret's spikes are the reference's
        net, cases, samples, dt, end,
        lambda P0, P1, x: two_layers(P0, P1, x, dt, alpha_s, slope, counts),
        lambda s, P: readouts(s, dt, P["tau_o"], points, windows),
        lambda r, x, s0, s1: spikes_match(r, 0, s0, dt) + spikes_match(r, 1, s1, dt))
    # W, V, b, theta, tau_mem, tau_o and the gate's four per layer, the readout's two; layer 0's
    # tau_o has a zero gradient (no readout sees its trace), checked zero on both sides
    assert len(worst) == 2 * 10 + 2 - 1
    assert stats["surrogate_pairs"] == counts["pairs"] == 3 * ticks * (7 + 4)
    open_share = counts["open"] / counts["pairs"]
    assert 0.2 < open_share < 0.8  # a sparse schedule
    assert spikes > 60
    assert counts["closed_spikes"] > 0  # closed units above threshold: they must stay silent
    print(f"two su-SNN layers, batch of 3: {open_share:.0%} of unit-ticks open, {spikes} spikes, "
          f"worst relative error {max(worst.values()):.1e} ({max(worst, key=worst.get)})")


def test_su_snn_input_value_gradients_equal_autograd():
    dt, end, alpha_s, slope = 1.0, 30.0, 1.0, 1.5
    net = egret.Network(config(8, dt, alpha_s, slope))
    rng = np.random.default_rng(8)
    events = random_events(rng, 60, end, 5)
    targets = rng.uniform(-1, 1, (2, 3))
    counts = {"open": 0, "pairs": 0, "closed_spikes": 0}
    _, worst = input_values_equal_autograd(
        net, events, targets, dt, end, [15.0, 29.5], [],
        lambda P0, P1, x: two_layers(P0, P1, x, dt, alpha_s, slope, counts),
        lambda s, P: readouts(s, dt, P["tau_o"], [15.0, 29.5], []))
    print(f"su-SNN input values: worst relative error {worst:.1e}")


def test_two_su_snn_layers_with_per_unit_tau_mem_equal_autograd():
    dt, end, alpha_s, slope = 0.5, 20.0, 2.0, 2.0
    net = egret.Network(config(4, dt, alpha_s, slope))
    tau_mem = {"layer0.tau_mem": np.array([8.0, 13.0, 21.0, 3.0, 5.0, 34.0, 2.0]),
               "layer1.tau_mem": np.array([4.0, 11.0, 7.0, 18.0])}
    assert net.parameters()["layer0.tau_mem"].shape == (7,)
    assert np.all(net.parameters()["layer0.tau_mem"] == 6.0)  # the configuration's, broadcast
    net.set_parameters(tau_mem)
    rng = np.random.default_rng(4)
    points, windows = [6.1, 12.0, 19.9], [(2.0, 9.5), (14.0, 20.0)]
    cases, samples = labelled_batch(rng, end, points, windows)
    counts = {"open": 0, "pairs": 0, "closed_spikes": 0}
    grads, _, worst, spikes = two_layers_equal_autograd(
        net, cases, samples, dt, end,
        lambda P0, P1, x: two_layers(P0, P1, x, dt, alpha_s, slope, counts),
        lambda s, P: readouts(s, dt, P["tau_o"], points, windows),
        lambda r, x, s0, s1: spikes_match(r, 0, s0, dt) + spikes_match(r, 1, s1, dt))
    assert len(worst) == 2 * 10 + 2 - 1  # every gradient but layer 0's tau_o (zero on both sides)
    for name, tau in tau_mem.items():
        g = np.asarray(grads[name])
        assert g.shape == tau.shape  # dL/dtau_mem: one entry per unit
        assert np.count_nonzero(g) >= len(tau) - 1, (name, g)
        assert len(np.unique(np.round(g, 12))) >= len(tau) - 1  # not one number repeated
    assert spikes > 60
    assert counts["closed_spikes"] > 0
    print(f"two su-SNN layers, per-unit tau_mem: {spikes} spikes, worst relative error "
          f"{max(worst.values()):.1e} ({max(worst, key=worst.get)}); tau_mem: "
          f"{worst['layer0.tau_mem']:.1e}, {worst['layer1.tau_mem']:.1e}")
