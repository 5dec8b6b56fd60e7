"""The spiking-gated linear recurrent family (models/spiking_gated/spiking_gated_cell.hpp, spiking-gate paper Eq. 7-10):
forward states and surrogate gradients against PyTorch autograd of the equations, written here
independently (real-valued state):
    u_k = W_i x_k + b_i,  m_k = (1 - r) m_{k-1} + r u_k,  r = 1 - exp(-dt inv_tau_m)   (Eq. 7)
    s_k = H(m_k - V_k),   V_k = theta + w X_{k,i} with a tape, theta + w/2 without      (Eq. 8)
    c_hat = W_c x_k + b_c,  c = c_hat tanh(rho) / rho,  rho = sqrt(c_hat^2 + 1)        (Eq. 10)
    h_k = s_k (c h_{k-1} + W_x x_k + b_x) + (1 - s_k) h_{k-1}                          (Eq. 9)
with the arctan surrogate 1 / (1 + (alpha_s pi v)^2) for H. X_{k,i} in [0, 1) is the documented
hash of (layer seed, tick k, unit i), computed here again. A gradient is a taped run (training:
noisy thresholds); Network.simulate is not (inference: the expected threshold). Delta semantics
as for BMRU: the layer above and the readout see h. Cases: two layers, a batch of three, point
and window readouts, every parameter, the input values, the noise on and off."""
import math

import numpy as np
import torch

import egret
from autograd_reference import (assert_events_are_changes, bin_inputs, compare,
                                heaviside_with_surrogate, held_readouts, labelled_batch,
                                layer_params, logits_of, loss_of, random_events, readout_params,
                                two_layers_equal_autograd)

MASK = (1 << 64) - 1


def splitmix64(z):
    z = (z + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def noise(seed, k, i):
    """X_{k,i} / w of docs/model.md: uniform in [0, 1)."""
    return (splitmix64(splitmix64(splitmix64(seed) ^ k) ^ i) >> 11) / 2.0 ** 53


def spiking_gated_layer(P, x, settings, seed, taped, counts):
    """x: (K, D) inputs (held values) -> (K, N) states h_k."""
    dt, theta, w, alpha_s = (settings[k] for k in ("dt", "threshold", "noise", "alpha_s"))
    H = heaviside_with_surrogate(lambda v: 1 / (1 + (alpha_s * math.pi * v) ** 2))
    n = P["b_x"].shape[0]
    r = -torch.expm1(-dt * P["inv_tau_m"])
    m = torch.zeros(n, dtype=torch.float64)
    h = torch.zeros(n, dtype=torch.float64)
    out = []
    for k, xk in enumerate(x, start=1):
        m = (1 - r) * m + r * (P["W_i"] @ xk + P["b_i"])
        if taped:
            V = theta + w * torch.tensor([noise(seed, k, i) for i in range(n)], dtype=torch.float64)
        else:
            V = torch.full((n,), theta + w / 2, dtype=torch.float64)
        s = H(m - V)
        c_hat = P["W_c"] @ xk + P["b_c"]
        rho = torch.sqrt(c_hat ** 2 + 1)
        c = c_hat * torch.tanh(rho) / rho
        h = s * (c * h + P["W_x"] @ xk + P["b_x"]) + (1 - s) * h
        counts["spikes"] += int(s.sum())
        counts["pairs"] += n
        counts["near"] += int((torch.abs(m - V) < 0.2).sum())  # where the surrogate matters
        out.append(h)
    return torch.stack(out)


SETTINGS = [{"dt": 0.5, "threshold": -0.1, "noise": 1.0, "alpha_s": 1.5},
            {"dt": 0.5, "threshold": 0.2, "noise": 0.6, "alpha_s": 1.0}]


def config(seed, settings):
    def layer(units, s, init):
        return {"type": "spiking_gated", "units": units, "dt": s["dt"],
                "threshold": s["threshold"], "threshold_noise": s["noise"],
                "surrogate": {"alpha": s["alpha_s"]}, "init": init}
    return {"precision": "double", "seed": seed, "input_channels": 5, "readout_classes": 3,
            "layers": [layer(6, settings[0], {"weight_scale": 1.5, "gate_scale": 2.0,
                                              "forget_scale": 1.5, "bias_gate": 0.4,
                                              "bias_spread": 0.4, "leak": 0.4,
                                              "bias_forget": 1.0}),
                       layer(4, settings[1], {"gate_scale": 2.0, "bias_gate": 0.5,
                                              "bias_spread": 0.3, "leak": 0.3})]}


def two_layers(P0, P1, x, seed, settings, taped, counts):
    h0 = spiking_gated_layer(P0, x, settings[0], seed, taped, counts)
    return h0, spiking_gated_layer(P1, h0, settings[1], seed + 1, taped, counts)


def test_two_spiking_gated_layers_batch_of_three_equal_autograd():
    seed, end = 11, 20.0
    dt = SETTINGS[0]["dt"]
    net = egret.Network(config(seed, SETTINGS))
    rng = np.random.default_rng(11)
    points, windows = [6.1, 12.0, 19.9], [(2.0, 9.5), (14.2, 20.0)]
    cases, samples = labelled_batch(rng, end, points, windows, signed=True)
    ticks = int(round(end / dt))
    counts = {"spikes": 0, "pairs": 0, "near": 0}

    def inference_events(r, x, h0, h1):
        # inference (no tape): the expected threshold; egret's events are the changes of h
        with torch.no_grad():
            quiet = {"spikes": 0, "pairs": 0, "near": 0}
            g0, g1 = two_layers(layer_params(net, 0), layer_params(net, 1), x, seed, SETTINGS,
                                False, quiet)
        return sum(assert_events_are_changes(r, l, g, dt) for l, g in ((0, g0), (1, g1)))

    _, stats, worst, changes = two_layers_equal_autograd(
        net, cases, samples, dt, end,
        lambda P0, P1, x: two_layers(P0, P1, x, seed, SETTINGS, True, counts),
        lambda h, P: held_readouts(h, dt, points, windows), inference_events)
    assert len(worst) == 2 * 7 + 2  # W_x, b_x, W_c, b_c, W_i, b_i, inv_tau_m per layer; readout
    assert stats["surrogate_pairs"] == 3 * ticks * (6 + 4)
    spiking = counts["spikes"] / counts["pairs"]
    assert 0.15 < spiking < 0.85 and counts["near"] > 100  # both branches and the surrogate
    assert changes > 40
    print(f"two spiking-gated layers, batch of 3: {spiking:.0%} of unit-ticks spiking in training, "
          f"{changes} changes sent in inference, worst relative error "
          f"{max(worst.values()):.1e} ({max(worst, key=worst.get)})")


def test_spiking_gated_input_value_gradients_equal_autograd_noise_off():
    seed, end = 4, 30.0
    settings = [dict(SETTINGS[0], dt=1.0, noise=0.0), dict(SETTINGS[1], dt=1.0, noise=0.0)]
    net = egret.Network(config(seed, settings))
    rng = np.random.default_rng(4)
    t, ch, v = random_events(rng, 60, end, 5)
    v = v * rng.choice([-1, 1], len(v))
    targets = rng.uniform(-1, 1, (2, 3))
    sample = egret.Sample(t, ch, v, channels=5, end_time=end, readout_times=[15.0],
                          readout_windows=[(20.0, 29.5)], targets=targets)
    value, grads, _ = net.loss_and_gradient(sample, loss="mean_squared_error")
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    W = readout_params(net)
    values = torch.tensor(v, requires_grad=True)
    x = bin_inputs(t, ch, values, 1.0, int(end), 5)
    counts = {"spikes": 0, "pairs": 0, "near": 0}
    h0 = spiking_gated_layer(P0, x, settings[0], seed, True, counts)
    h1 = spiking_gated_layer(P1, h0, settings[1], seed + 1, True, counts)
    o = held_readouts(h1, 1.0, [15.0], [(20.0, 29.5)])
    ref = loss_of(logits_of(o, W), "mean_squared_error", targets)
    ref.backward()
    assert abs(value - float(ref)) <= 1e-12 * abs(float(ref))
    worst = compare(grads, {"input.value": values, **{f"layer1.{k}": p for k, p in P1.items()}})
    # without noise a taped run and an untaped one are the same run
    r = net.simulate(t, ch, v, end_time=end)
    assert assert_events_are_changes(r, 0, h0, 1.0) + assert_events_are_changes(r, 1, h1, 1.0) > 10
    print(f"spiking-gated input values: worst relative error {worst['input.value']:.1e}")
