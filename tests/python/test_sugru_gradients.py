"""The selective-update GRU family (models/sugru_cell.hpp, seed 000 Eq. 4 and 6, Fig. A1):
forward states and straight-through gradients against PyTorch autograd of the equations,
written here (the GRU in PyTorch's convention with one bias per gate):
    r = sigmoid(W_r x + V_r h + b_r), z = sigmoid(W_z x + V_z h + b_z),
    n = tanh(W_n x + b_n + r (V_n h)), f = (1 - z) n + z h,  h_k = h + g (f - h)
with the rhythmic gate g = H(a) of test_surnn_gradients.py. Cases: two layers, a batch of three,
point and window readouts, every parameter, the input values."""
import numpy as np
import torch

import egret
from autograd_reference import (assert_events_are_changes, bin_inputs, compare,
                                heaviside_with_surrogate, held_readouts, labelled_batch,
                                layer_params, logits_of, loss_of, named_tensors, random_events,
                                readout_params)


def sugru_layer(P, x, dt, slope, counts):
    H = heaviside_with_surrogate(lambda a: slope * torch.sigmoid(slope * a)
                                 * (1 - torch.sigmoid(slope * a)))
    h = torch.zeros(P["b_r"].shape[0], dtype=torch.float64)
    out = []
    for k, xk in enumerate(x):
        t = dt * (k + 1)
        g = H(P["g_b"] + (P["g_alpha"] * torch.sin(P["g_omega"] * t + P["g_phi"])).sum(1))
        counts["open"] += int(g.sum())
        counts["pairs"] += len(g)
        r = torch.sigmoid(P["W_r"] @ xk + P["V_r"] @ h + P["b_r"])
        z = torch.sigmoid(P["W_z"] @ xk + P["V_z"] @ h + P["b_z"])
        n = torch.tanh(P["W_n"] @ xk + P["b_n"] + r * (P["V_n"] @ h))
        h = h + g * ((1 - z) * n + z * h - h)
        out.append(h)
    return torch.stack(out)


def config(seed, dt):
    layer = {"type": "sugru", "dt": dt, "surrogate": {"slope": 2.0}}
    return {"precision": "double", "seed": seed, "input_channels": 5, "readout_classes": 3,
            "layers": [dict(layer, units=6, init={"weight_scale": 2.0, "bias_z": -0.5},
                            gate={"frequencies": 3, "period_min": 2, "period_max": 20,
                                  "bias": -0.3}),
                       dict(layer, units=4, gate={"bias": -0.2, "period_max": 10})]}


def test_two_sugru_layers_batch_of_three_equal_autograd():
    dt, end, slope = 0.5, 20.0, 2.0
    net = egret.Network(config(5, dt))
    rng = np.random.default_rng(5)
    points, windows = [6.1, 12.0, 19.9], [(2.0, 9.5), (14.2, 20.0)]
    cases, samples = labelled_batch(rng, end, points, windows, signed=True)
    value, grads, stats = net.loss_and_gradient(samples, loss="softmax_cross_entropy")

    ticks = int(round(end / dt))
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    W = readout_params(net)
    counts = {"open": 0, "pairs": 0}
    total, changes = 0, 0
    for t, ch, v, targets in cases:
        x = bin_inputs(t, ch, torch.tensor(v), dt, ticks, 5)
        h0 = sugru_layer(P0, x, dt, slope, counts)
        h1 = sugru_layer(P1, h0, dt, slope, counts)
        o = held_readouts(h1, dt, points, windows)
        total = total + loss_of(logits_of(o, W),
                                "softmax_cross_entropy", targets)
        r = net.simulate(t, ch, v, end_time=end)
        for layer, h in ((0, h0), (1, h1)):
            changes += assert_events_are_changes(r, layer, h, dt)
    ref = total / 3
    ref.backward()
    assert abs(value - float(ref)) <= 1e-12 * abs(float(ref))
    tensors = named_tensors(W, P0, P1)
    worst = compare(grads, tensors)
    assert len(worst) == 2 * 13 + 2
    assert stats["surrogate_pairs"] == counts["pairs"] == 3 * ticks * (6 + 4)
    open_share = counts["open"] / counts["pairs"]
    assert 0.15 < open_share < 0.7 and changes <= counts["open"]
    print(f"two suGRU layers, batch of 3: {open_share:.0%} of unit-ticks open, {changes} changes "
          f"sent, worst relative error {max(worst.values()):.1e} ({max(worst, key=worst.get)})")


def test_sugru_input_value_gradients_equal_autograd():
    dt, end, slope = 1.0, 30.0, 2.0
    net = egret.Network(config(9, dt))
    rng = np.random.default_rng(9)
    t, ch, v = random_events(rng, 60, end, 5)
    targets = rng.uniform(-1, 1, (2, 3))
    sample = egret.Sample(t, ch, v, channels=5, end_time=end, readout_times=[15.0],
                          readout_windows=[(20.0, 29.5)], targets=targets)
    _, grads, _ = net.loss_and_gradient(sample, loss="mean_squared_error")
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    W = readout_params(net)
    values = torch.tensor(v, requires_grad=True)
    counts = {"open": 0, "pairs": 0}
    x = bin_inputs(t, ch, values, dt, int(end / dt), 5)
    h1 = sugru_layer(P1, sugru_layer(P0, x, dt, slope, counts), dt, slope, counts)
    o = held_readouts(h1, dt, [15.0], [(20.0, 29.5)])
    loss_of(logits_of(o, W), "mean_squared_error", targets).backward()
    worst = compare(grads, {"input.value": values})
    print(f"suGRU input values: worst relative error {worst['input.value']:.1e}")
