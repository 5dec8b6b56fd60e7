"""The BMRU family (models/bmru/bmru_cell.hpp, BMRU paper Eq. 11): forward states and surrogate
gradients against PyTorch autograd of the equations, written here independently:
    h_hat = W_x x_k + b_x,  beta = |W_beta x_k + b_beta|,  z = H(|h_hat| - beta)
    h_k = z S(h_hat) alpha + (1 - z) h_{k-1}
with the arctan surrogate f'(u) = 1 / (1 + (alpha_s pi u)^2) for H and 2 f' for S (Eq. 12-13).
Delta semantics: egret sends only changes of h; the layer above and the readout must see h
itself, as this dense reference does (layer 1's input at tick k is layer 0's h_k; the readout
reads h at the last tick <= t, windows average the piecewise-constant h). Cases: two layers, a
batch of three samples, point and window readouts, every parameter, the input values."""
import math

import numpy as np
import pytest
import torch

import egret
from autograd_reference import (heaviside_with_surrogate, held_readouts, held_two_layers_equal_autograd,
                                input_values_equal_autograd, random_events)


def sign_with_surrogate(alpha_s):
    class S(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sign(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 / (1 + (alpha_s * math.pi * x) ** 2)

    return S.apply


def bmru_layer(P, x, alpha_s):
    """x: (K, D) inputs (held values) -> (K, N) states h_k."""
    H = heaviside_with_surrogate(lambda u: 1 / (1 + (alpha_s * math.pi * u) ** 2))
    S = sign_with_surrogate(alpha_s)
    h = torch.zeros(P["b_x"].shape[0], dtype=torch.float64)
    out = []
    for xk in x:
        h_hat = P["W_x"] @ xk + P["b_x"]
        beta = torch.abs(P["W_beta"] @ xk + P["b_beta"])
        z = H(torch.abs(h_hat) - beta)
        h = z * S(h_hat) * P["alpha"] + (1 - z) * h
        out.append(h)
    return torch.stack(out)


def config(seed, dt, alpha_s):
    layer = {"type": "bmru", "dt": dt, "surrogate": {"alpha": alpha_s}}
    return {"precision": "double", "seed": seed, "input_channels": 5, "readout_classes": 3,
            "layers": [dict(layer, units=6, init={"weight_scale": 2.0, "bias_beta": 0.3,
                                                  "alpha": 0.8}),
                       dict(layer, units=4, init={"weight_scale": 1.5, "bias_beta": 0.2})]}


def two_layers(P0, P1, x, alpha_s):
    h0 = bmru_layer(P0, x, alpha_s)
    return h0, bmru_layer(P1, h0, alpha_s)


def test_two_bmru_layers_batch_of_three_equal_autograd():
    dt, end, alpha_s = 0.5, 20.0, 1.5
    net = egret.Network(config(6, dt, alpha_s))
    ticks = int(round(end / dt))
    # both signs: states switch both ways; egret's events are exactly the changes of the
    # reference's h
    _, stats, worst, switches = held_two_layers_equal_autograd(
        net, 6, dt, end, lambda P0, P1, x: two_layers(P0, P1, x, alpha_s))
    assert len(worst) == 2 * 5 + 2  # W_x, b_x, W_beta, b_beta, alpha per layer; the readout
    assert stats["surrogate_pairs"] == 3 * ticks * (6 + 4)
    assert switches > 40
    print(f"two BMRU layers, batch of 3: {switches} changes sent, worst relative error "
          f"{max(worst.values()):.1e} ({max(worst, key=worst.get)})")


def test_bmru_input_value_gradients_equal_autograd():
    dt, end, alpha_s = 1.0, 30.0, 1.0
    net = egret.Network(config(2, dt, alpha_s))
    rng = np.random.default_rng(2)
    t, ch, v = random_events(rng, 60, end, 5)
    v = v * rng.choice([-1, 1], len(v))
    targets = rng.uniform(-1, 1, (2, 3))
    _, worst = input_values_equal_autograd(
        net, (t, ch, v), targets, dt, end, [15.0], [(20.0, 29.5)],
        lambda P0, P1, x: two_layers(P0, P1, x, alpha_s),
        lambda h, P: held_readouts(h, dt, [15.0], [(20.0, 29.5)]))
    print(f"BMRU input values: worst relative error {worst:.1e}")


def test_a_layer_that_cannot_hold_its_input_is_refused_after_bmru():
    cfg = {"precision": "double", "input_channels": 2, "layers": [{"type": "bmru", "units": 3},
                                           {"type": "continuous_egru", "units": 2}]}
    with pytest.raises(ValueError, match="cannot consume the changes of a held output"):
        egret.Network(cfg)
