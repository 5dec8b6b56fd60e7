"""The selective-update spiking family (models/su_snn_cell.hpp, seed 000 Fig. A1): forward spikes
and surrogate gradients against PyTorch autograd of the equations, written here independently:
    a_k = g_b + sum_j g_alpha[:, j] sin(g_omega_j t_k + g_phi[:, j]),  g = H_gate(a)
    ubar_k = alpha u_{k-1} + W x_k + V s_{k-1} + b - theta H(u_{k-1} - theta)
    u_k = u_{k-1} + g (ubar_k - u_{k-1}),  s_k = g H(u_k - theta)
with the arctan surrogate 1 / (1 + (alpha_s pi q)^2) for the spike's H and the sigmoid-derivative
surrogate beta s (1 - s) for the gate's. Cases: two layers, a batch of three, point and window
readouts of the output trace, every parameter (the gate's too), the input values; and the
schedule's sparsity: a closed unit never spikes."""
import math

import numpy as np
import torch

import egret
from autograd_reference import (bin_inputs, compare, heaviside_with_surrogate, layer_params,
                                logits_of, loss_of, named_tensors, random_events, readout_params,
                                readouts)


def su_snn_layer(P, x, dt, alpha_s, slope, counts):
    """x: (K, D) binned inputs -> (K, N) spikes."""
    H = heaviside_with_surrogate(lambda q: 1 / (1 + (alpha_s * math.pi * q) ** 2))
    H_gate = heaviside_with_surrogate(lambda a: slope * torch.sigmoid(slope * a)
                                      * (1 - torch.sigmoid(slope * a)))
    n = P["theta"].shape[0]
    alpha = torch.exp(-dt / P["tau_mem"])
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


def test_two_su_snn_layers_batch_of_three_equal_autograd():
    dt, end, alpha_s, slope = 0.5, 20.0, 2.0, 2.0
    net = egret.Network(config(4, dt, alpha_s, slope))
    rng = np.random.default_rng(4)
    points, windows = [6.1, 12.0, 19.9], [(2.0, 9.5), (14.0, 20.0)]
    cases = []
    for _ in range(3):
        t, ch, v = random_events(rng, 80, end, 5)
        cases.append((t, ch, v, rng.integers(0, 3, len(points) + len(windows))))
    samples = [egret.Sample(t, ch, v, channels=5, end_time=end, readout_times=points,
                            readout_windows=windows, labels=[int(x) for x in targets])
               for t, ch, v, targets in cases]
    value, grads, stats = net.loss_and_gradient(samples, loss="softmax_cross_entropy")

    ticks = int(round(end / dt))
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    W = readout_params(net)
    counts = {"open": 0, "pairs": 0, "closed_spikes": 0}
    total, spikes = 0, 0
    for t, ch, v, targets in cases:
        x = bin_inputs(t, ch, torch.tensor(v), dt, ticks, 5)
        s0 = su_snn_layer(P0, x, dt, alpha_s, slope, counts)
        s1 = su_snn_layer(P1, s0, dt, alpha_s, slope, counts)
        o = readouts(s1, dt, P1["tau_o"], points, windows)
        total = total + loss_of(logits_of(o, W),
                                "softmax_cross_entropy", targets)
        spikes += int(s0.sum()) + int(s1.sum())
        r = net.simulate(t, ch, v, end_time=end)  # egret's spikes are the reference's
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
    t, ch, v = random_events(rng, 60, end, 5)
    targets = rng.uniform(-1, 1, (2, 3))
    sample = egret.Sample(t, ch, v, channels=5, end_time=end, readout_times=[15.0, 29.5],
                          targets=targets)
    _, grads, _ = net.loss_and_gradient(sample, loss="mean_squared_error")
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    W = readout_params(net)
    values = torch.tensor(v, requires_grad=True)
    counts = {"open": 0, "pairs": 0, "closed_spikes": 0}
    x = bin_inputs(t, ch, values, dt, int(end / dt), 5)
    s0 = su_snn_layer(P0, x, dt, alpha_s, slope, counts)
    s1 = su_snn_layer(P1, s0, dt, alpha_s, slope, counts)
    o = readouts(s1, dt, P1["tau_o"], [15.0, 29.5], [])
    loss_of(logits_of(o, W), "mean_squared_error", targets).backward()
    worst = compare(grads, {"input.value": values})
    print(f"su-SNN input values: worst relative error {worst['input.value']:.1e}")
