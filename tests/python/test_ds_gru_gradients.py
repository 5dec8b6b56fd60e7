"""The dynamic-sparse GRU family (models/ds_gru/ds_gru_cell.hpp, DS-RNN paper Eq. 5-11): forward states and
gradients against PyTorch autograd of the paper's equations, written here in double precision:
    c = W_proj x,  a_h = W_ah c + b_ah,  a_x = W_ax c + b_ax                  (Eq. 10)
    m_h = top-k(sigmoid(tau_h (a_h - mu_h))),  m_x likewise                   (Eq. 11)
    h~ = m_h h,  x~ = m_x x                                                    (Eq. 5)
    z = sigmoid(W_z x~ + U_z h~ + b_z),  r = sigmoid(W_r x~ + U_r h~ + b_r)   (Eq. 6-7)
    h^ = tanh(W_h x~ + U_h (r h~) + b_h),  h_k = (1 - z) h~ + z h^            (Eq. 8-9)
top-k keeps the sigmoid at the k highest scores tau (a - mu) (ties: the lower channel) and zeroes
the rest; straight-through, its backward is the identity, otherwise the kept entries only. Cases:
several ticks, two layers (the second holds the first's h), a batch of three, point and window
readouts, every parameter, both gradient treatments of the top-k, the input values."""
import pytest
import torch

import egret
from autograd_reference import (held_two_layers_equal_autograd, held_input_values_equal_autograd)


def top_k_mask(score, k, straight_through):
    order = torch.sort(score.detach(), descending=True, stable=True).indices
    kept = torch.zeros_like(score)
    kept[order[:k]] = 1
    soft = torch.sigmoid(score)
    if straight_through:  # forward soft * kept, backward d soft / d score everywhere
        return soft * kept + (soft - soft.detach()) * (1 - kept)
    return soft * kept


def ds_gru_layer(P, x, k_h, k_x, straight_through):
    h = torch.zeros(P["b_z"].shape[0], dtype=torch.float64)
    out = []
    for xk in x:
        c = P["W_proj"] @ xk
        m_h = top_k_mask(P["tau_h"] * (P["W_ah"] @ c + P["b_ah"] - P["mu_h"]), k_h,
                         straight_through)
        m_x = top_k_mask(P["tau_x"] * (P["W_ax"] @ c + P["b_ax"] - P["mu_x"]), k_x,
                         straight_through)
        h_t, x_t = m_h * h, m_x * xk
        z = torch.sigmoid(P["W_z"] @ x_t + P["U_z"] @ h_t + P["b_z"])
        r = torch.sigmoid(P["W_r"] @ x_t + P["U_r"] @ h_t + P["b_r"])
        h_hat = torch.tanh(P["W_h"] @ x_t + P["U_h"] @ (r * h_t) + P["b_h"])
        h = (1 - z) * h_t + z * h_hat
        out.append(h)
    return torch.stack(out)


# Layer 0: 6 units on 5 channels, 3 units and 2 channels kept, router rank 3; layer 1: 4 units on
# layer 0's 6, the default budgets (2 units, 3 channels) and rank (4). tau and mu away from their
# initial values, so that their gradients are not special.
BUDGETS = [(3, 2), (2, 3)]


def config(seed, dt, straight_through):
    layer = {"type": "ds_gru", "dt": dt}
    return {"precision": "double", "seed": seed, "input_channels": 5, "readout_classes": 3,
            "layers": [dict(layer, units=6,
                            router={"hidden_k": 3, "input_k": 2, "rank": 3,
                                    "straight_through": straight_through},
                            init={"weight_scale": 2.0, "bias_z": -0.5, "router_scale": 2.0},
                            params={"tau_h": 1.5, "mu_h": 0.2, "tau_x": 0.8, "mu_x": -0.1}),
                       dict(layer, units=4, router={"straight_through": straight_through},
                            params={"tau_h": 2.0, "mu_h": -0.3, "tau_x": 1.2, "mu_x": 0.3})]}


def two_layers(P0, P1, x, straight_through):
    h0 = ds_gru_layer(P0, x, *BUDGETS[0], straight_through)
    return h0, ds_gru_layer(P1, h0, *BUDGETS[1], straight_through)


@pytest.mark.parametrize("straight_through", [1, 0])
def test_two_ds_gru_layers_batch_of_three_equal_autograd(straight_through):
    dt, end = 0.5, 20.0
    net = egret.Network(config(5, dt, straight_through))
    ticks = int(round(end / dt))
    _, stats, worst, changes = held_two_layers_equal_autograd(
        net, 5, dt, end, lambda P0, P1, x: two_layers(P0, P1, x, straight_through))
    assert len(worst) == 2 * 18 + 2  # every parameter has a nonzero gradient, and it matches
    assert stats["surrogate_pairs"] == 3 * ticks * (6 + 4)
    dropped = 0 if straight_through else 3 * ticks * ((6 - 3) + (4 - 2))
    assert stats["zero_surrogate_pairs"] == dropped
    assert changes > 0.5 * 3 * ticks * (6 + 4)
    print(f"two DS-GRU layers, batch of 3, straight_through={straight_through}: {changes} changes "
          f"sent, worst relative error {max(worst.values()):.1e} ({max(worst, key=worst.get)})")


@pytest.mark.parametrize("straight_through", [1, 0])
def test_ds_gru_input_value_gradients_equal_autograd(straight_through):
    dt, end = 1.0, 30.0
    net = egret.Network(config(9, dt, straight_through))
    worst = held_input_values_equal_autograd(net, 9, dt, end, lambda P0, P1, x: two_layers(P0, P1, x, straight_through))
    print(f"DS-GRU input values, straight_through={straight_through}: worst relative error "
          f"{worst:.1e}")
