"""The dynamic-sparse GRU family (models/ds_gru_cell.hpp, seed 003 Eq. 5-11): forward states and
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
import numpy as np
import pytest
import torch

import egret
from autograd_reference import (assert_events_are_changes, bin_inputs, compare, held_readouts,
                                labelled_batch, layer_params, logits_of, loss_of, named_tensors,
                                random_events, readout_params)


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
    rng = np.random.default_rng(5)
    points, windows = [6.1, 12.0, 19.9], [(2.0, 9.5), (14.2, 20.0)]
    cases, samples = labelled_batch(rng, end, points, windows, signed=True)
    value, grads, stats = net.loss_and_gradient(samples, loss="softmax_cross_entropy")

    ticks = int(round(end / dt))
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    W = readout_params(net)
    total, changes = 0, 0
    for t, ch, v, targets in cases:
        x = bin_inputs(t, ch, torch.tensor(v), dt, ticks, 5)
        h0, h1 = two_layers(P0, P1, x, straight_through)
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
    rng = np.random.default_rng(9)
    t, ch, v = random_events(rng, 60, end, 5)
    targets = rng.uniform(-1, 1, (2, 3))
    sample = egret.Sample(t, ch, v, channels=5, end_time=end, readout_times=[15.0],
                          readout_windows=[(20.0, 29.5)], targets=targets)
    _, grads, _ = net.loss_and_gradient(sample, loss="mean_squared_error")
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    W = readout_params(net)
    values = torch.tensor(v, requires_grad=True)
    x = bin_inputs(t, ch, values, dt, int(end / dt), 5)
    _, h1 = two_layers(P0, P1, x, straight_through)
    o = held_readouts(h1, dt, [15.0], [(20.0, 29.5)])
    loss_of(logits_of(o, W), "mean_squared_error", targets).backward()
    worst = compare(grads, {"input.value": values})
    print(f"DS-GRU input values, straight_through={straight_through}: worst relative error "
          f"{worst['input.value']:.1e}")
