"""The selective-update GRU family (models/sugru/sugru_cell.hpp, suRNN paper Eq. 4 and 6, Fig. A1):
forward states and straight-through gradients against PyTorch autograd of the equations,
written here (the GRU in PyTorch's convention with one bias per gate):
    r = sigmoid(W_r x + V_r h + b_r), z = sigmoid(W_z x + V_z h + b_z),
    n = tanh(W_n x + b_n + r (V_n h)), f = (1 - z) n + z h,  h_k = h + g (f - h)
with the rhythmic gate g = H(a) of test_surnn_gradients.py. Cases: two layers, a batch of three,
point and window readouts, every parameter, the input values."""
import torch

import egret
from autograd_reference import (held_input_values_equal_autograd, held_two_layers_equal_autograd,
                                rhythmic_gates)


def sugru_layer(P, x, dt, slope, counts):
    h = torch.zeros(P["b_r"].shape[0], dtype=torch.float64)
    out = []
    for xk, g in zip(x, rhythmic_gates(P, dt, len(x), slope, counts)):
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


def two_layers(P0, P1, x, dt, slope, counts):
    h0 = sugru_layer(P0, x, dt, slope, counts)
    return h0, sugru_layer(P1, h0, dt, slope, counts)


def test_two_sugru_layers_batch_of_three_equal_autograd():
    dt, end, slope = 0.5, 20.0, 2.0
    net = egret.Network(config(5, dt))
    counts = {"open": 0, "pairs": 0}
    ticks = int(round(end / dt))
    _, stats, worst, changes = held_two_layers_equal_autograd(
        net, 5, dt, end, lambda P0, P1, x: two_layers(P0, P1, x, dt, slope, counts))
    assert len(worst) == 2 * 13 + 2
    assert stats["surrogate_pairs"] == counts["pairs"] == 3 * ticks * (6 + 4)
    open_share = counts["open"] / counts["pairs"]
    assert 0.15 < open_share < 0.7 and changes <= counts["open"]
    print(f"two suGRU layers, batch of 3: {open_share:.0%} of unit-ticks open, {changes} changes "
          f"sent, worst relative error {max(worst.values()):.1e} ({max(worst, key=worst.get)})")


def test_sugru_input_value_gradients_equal_autograd():
    dt, end, slope = 1.0, 30.0, 2.0
    net = egret.Network(config(9, dt))
    counts = {"open": 0, "pairs": 0}
    worst = held_input_values_equal_autograd(net, 9, dt, end, lambda P0, P1, x: two_layers(P0, P1, x, dt, slope, counts))
    print(f"suGRU input values: worst relative error {worst:.1e}")
