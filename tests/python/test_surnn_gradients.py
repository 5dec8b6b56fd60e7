"""The selective-update RNN family (models/surnn/surnn_cell.hpp, suRNN paper Eq. 4 and 6): forward states
and straight-through gradients against PyTorch autograd of the equations, written here:
    a_k = g_b + sum_j g_alpha[:, j] sin(g_omega_j t_k + g_phi[:, j]),  g = H(a)
    h_k = h_{k-1} + g (tanh(W x_k + V h_{k-1} + b) - h_{k-1})
with H's surrogate beta s (1 - s), s = sigmoid(beta a). Delta semantics as for BMRU: the layer
above and the readout see h. Cases: two layers, a batch of three, point and window readouts,
every parameter (the gate's frequencies, phases, amplitudes and biases too), the input values;
and the schedule's sparsity: closed units send nothing."""
import torch

import egret
from autograd_reference import (held_input_values_equal_autograd, held_two_layers_equal_autograd,
                                rhythmic_gates)


def surnn_layer(P, x, dt, slope, counts):
    h = torch.zeros(P["b"].shape[0], dtype=torch.float64)
    out = []
    for xk, g in zip(x, rhythmic_gates(P, dt, len(x), slope, counts)):
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
    counts = {"open": 0, "pairs": 0}
    ticks = int(round(end / dt))
    _, stats, worst, changes = held_two_layers_equal_autograd(
        net, 7, dt, end, lambda P0, P1, x: two_layers(P0, P1, x, dt, slope, counts))
    assert len(worst) == 2 * 7 + 2  # W, V, b, g_b, g_alpha, g_phi, g_omega per layer; readout
    assert stats["surrogate_pairs"] == counts["pairs"] == 3 * ticks * (6 + 4)
    open_share = counts["open"] / counts["pairs"]
    assert 0.15 < open_share < 0.7  # a sparse schedule: closed units are carried
    assert changes <= counts["open"]  # a closed unit never sends
    print(f"two suRNN layers, batch of 3: {open_share:.0%} of unit-ticks open, {changes} changes "
          f"sent, worst relative error {max(worst.values()):.1e} ({max(worst, key=worst.get)})")


def two_layers(P0, P1, x, dt, slope, counts):
    h0 = surnn_layer(P0, x, dt, slope, counts)
    return h0, surnn_layer(P1, h0, dt, slope, counts)


def test_surnn_input_value_gradients_equal_autograd():
    dt, end, slope = 1.0, 30.0, 2.0
    net = egret.Network(config(3, dt))
    counts = {"open": 0, "pairs": 0}
    worst = held_input_values_equal_autograd(net, 3, dt, end, lambda P0, P1, x: two_layers(P0, P1, x, dt, slope, counts))
    print(f"suRNN input values: worst relative error {worst:.1e}")
