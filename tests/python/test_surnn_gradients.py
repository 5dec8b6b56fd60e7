"""The selective-update RNN family (models/surnn_cell.hpp, seed 000 Eq. 4 and 6): forward states
and straight-through gradients against PyTorch autograd of the equations, written here:
    a_k = g_b + sum_j g_alpha[:, j] sin(g_omega_j t_k + g_phi[:, j]),  g = H(a)
    h_k = h_{k-1} + g (tanh(W x_k + V h_{k-1} + b) - h_{k-1})
with H's surrogate beta s (1 - s), s = sigmoid(beta a). Delta semantics as for BMRU: the layer
above and the readout see h. Cases: two layers, a batch of three, point and window readouts,
every parameter (the gate's frequencies, phases, amplitudes and biases too), the input values;
and the schedule's sparsity: closed units send nothing."""
import numpy as np
import torch

import egret
from autograd_reference import (assert_events_are_changes, bin_inputs, compare,
                                heaviside_with_surrogate, held_readouts, labelled_batch,
                                layer_params, logits_of, loss_of, named_tensors, random_events,
                                readout_params)


def surnn_layer(P, x, dt, slope, counts):
    H = heaviside_with_surrogate(lambda a: slope * torch.sigmoid(slope * a)
                                 * (1 - torch.sigmoid(slope * a)))
    h = torch.zeros(P["b"].shape[0], dtype=torch.float64)
    out = []
    for k, xk in enumerate(x):
        t = dt * (k + 1)
        a = P["g_b"] + (P["g_alpha"] * torch.sin(P["g_omega"] * t + P["g_phi"])).sum(1)
        g = H(a)
        counts["open"] += int(g.sum())
        counts["pairs"] += len(g)
        h = h + g * (torch.tanh(P["W"] @ xk + P["V"] @ h + P["b"]) - h)
        out.append(h)
    return torch.stack(out)


def config(seed, dt):
    layer = {"type": "surnn", "dt": dt, "surrogate": {"slope": 2.0}}
    return {"precision": "double", "seed": seed, "input_channels": 5, "readout_classes": 3,
            "layers": [dict(layer, units=6, init={"weight_scale": 2.0},
                            gate={"frequencies": 3, "period_min": 2, "period_max": 20,
                                  "bias": -0.3}),
                       dict(layer, units=4, gate={"bias": -0.2, "period_max": 10})]}


def test_two_surnn_layers_batch_of_three_equal_autograd():
    dt, end, slope = 0.5, 20.0, 2.0
    net = egret.Network(config(7, dt))
    rng = np.random.default_rng(7)
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
        h0 = surnn_layer(P0, x, dt, slope, counts)
        h1 = surnn_layer(P1, h0, dt, slope, counts)
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
    assert len(worst) == 2 * 7 + 2  # W, V, b, g_b, g_alpha, g_phi, g_omega per layer; readout
    assert stats["surrogate_pairs"] == counts["pairs"] == 3 * ticks * (6 + 4)
    open_share = counts["open"] / counts["pairs"]
    assert 0.15 < open_share < 0.7  # a sparse schedule: closed units are carried
    assert changes <= counts["open"]  # a closed unit never sends
    print(f"two suRNN layers, batch of 3: {open_share:.0%} of unit-ticks open, {changes} changes "
          f"sent, worst relative error {max(worst.values()):.1e} ({max(worst, key=worst.get)})")


def test_surnn_input_value_gradients_equal_autograd():
    dt, end, slope = 1.0, 30.0, 2.0
    net = egret.Network(config(3, dt))
    rng = np.random.default_rng(3)
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
    h1 = surnn_layer(P1, surnn_layer(P0, x, dt, slope, counts), dt, slope, counts)
    o = held_readouts(h1, dt, [15.0], [(20.0, 29.5)])
    loss_of(logits_of(o, W), "mean_squared_error", targets).backward()
    worst = compare(grads, {"input.value": values})
    print(f"suRNN input values: worst relative error {worst['input.value']:.1e}")
