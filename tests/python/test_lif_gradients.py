"""The LIF family (models/lif/lif_cell.hpp): forward spikes and surrogate gradients against PyTorch
autograd of the equations, written here independently:
    v_k = alpha v_{k-1} + W x_k + V s_{k-1} + b - theta s_{k-1},  alpha = exp(-dt / tau_mem)
    s_k = H(v_k - theta), with the arctan surrogate 1 / (1 + (alpha_s pi u)^2) in place of H'.
tau_mem has one entry per unit (alpha elementwise): a configuration's number is broadcast.
Inputs are binned into (t_{k-1}, t_k]; a layer consumes the spikes of the layer below at the same
tick; the readout sees the output trace of the last layer's spikes. Cases: two layers, several
readouts, a batch of samples, every parameter, the input values, distinct per-unit tau_mem (also
through the torch module's log tau)."""
import math

import numpy as np
import torch

import egret
import egret.torch as et
from autograd_reference import (heaviside_with_surrogate, input_values_equal_autograd,
                                labelled_batch, random_events, readouts, spikes_match,
                                two_layers_equal_autograd)


def lif_layer(P, x, dt, alpha_s, counts):
    """x: (K, D) binned inputs -> (K, N) spikes."""
    H = heaviside_with_surrogate(lambda u: 1 / (1 + (alpha_s * math.pi * u) ** 2))
    n = P["theta"].shape[0]
    assert P["tau_mem"].shape == (n,)  # one membrane time constant per unit
    alpha = torch.exp(-dt / P["tau_mem"])  # (n,): every unit its own decay
    v = torch.zeros(n, dtype=torch.float64)
    s = torch.zeros(n, dtype=torch.float64)
    out = []
    for xk in x:
        v = alpha * v + P["W"] @ xk + P["V"] @ s + P["b"] - P["theta"] * s
        s = H(v - P["theta"])
        counts["pairs"] += n
        out.append(s)
    return torch.stack(out)


def config(seed, dt, alpha_s):
    layer = {"type": "lif", "dt": dt, "surrogate": {"alpha": alpha_s}}
    return {"precision": "double", "seed": seed, "input_channels": 5, "readout_classes": 3,
            "layers": [dict(layer, units=7, tau_mem=6, tau_o=5, threshold=0.6,
                            init={"weight_scale": 3.0, "recurrent_scale": 1.5, "bias": 0.1,
                                  "bias_spread": 0.2}),
                       dict(layer, units=4, tau_mem=4, tau_o=7, threshold=0.5,
                            init={"weight_scale": 2.5, "recurrent_scale": 1.0})]}


def two_layers(P0, P1, x, dt, alpha_s, counts):
    s0 = lif_layer(P0, x, dt, alpha_s, counts)
    return s0, lif_layer(P1, s0, dt, alpha_s, counts)


def test_two_lif_layers_batch_of_three_equal_autograd():
    dt, end, alpha_s = 0.5, 20.0, 2.0
    net = egret.Network(config(4, dt, alpha_s))
    rng = np.random.default_rng(4)
    points, windows = [6.1, 12.0, 19.9], [(2.0, 9.5), (14.0, 20.0)]
    cases, samples = labelled_batch(rng, end, points, windows)
    ticks = int(round(end / dt))
    counts = {"pairs": 0}
    # the forward pass: egret's spikes are the reference's
    _, stats, worst, spikes = two_layers_equal_autograd(
        net, cases, samples, dt, end,
        lambda P0, P1, x: two_layers(P0, P1, x, dt, alpha_s, counts),
        lambda s, P: readouts(s, dt, P["tau_o"], points, windows),
        lambda r, x, s0, s1: spikes_match(r, 0, s0, dt) + spikes_match(r, 1, s1, dt))
    # W, V, b, theta, tau_mem, tau_o per layer and the readout's two; layer 0's tau_o has a zero
    # gradient (no readout sees its trace), which compare() checks is zero on both sides
    assert len(worst) == 2 * 6 + 2 - 1
    assert stats["surrogate_pairs"] == counts["pairs"] == 3 * ticks * (7 + 4)
    assert stats["zero_surrogate_pairs"] == 0  # the arctan surrogate is never zero
    assert spikes > 150
    print(f"two LIF layers, batch of 3: {spikes} spikes, worst relative error "
          f"{max(worst.values()):.1e} ({max(worst, key=worst.get)})")


def test_lif_input_value_gradients_equal_autograd():
    dt, end, alpha_s = 1.0, 30.0, 1.0
    net = egret.Network(config(8, dt, alpha_s))
    rng = np.random.default_rng(8)
    events = random_events(rng, 60, end, 5)
    targets = rng.uniform(-1, 1, (2, 3))
    counts = {"pairs": 0}
    grads, worst = input_values_equal_autograd(
        net, events, targets, dt, end, [15.0, 29.5], [],
        lambda P0, P1, x: two_layers(P0, P1, x, dt, alpha_s, counts),
        lambda s, P: readouts(s, dt, P["tau_o"], [15.0, 29.5], []))
    assert np.abs(np.asarray(grads["input.time"])).max() == 0  # binned: input times get none
    print(f"LIF input values: worst relative error {worst:.1e}")


# Distinct membrane time constants per unit (layer 0: 7 units, layer 1: 4).
TAU_MEM = {"layer0.tau_mem": np.array([8.0, 13.0, 21.0, 3.0, 5.0, 34.0, 2.0]),
           "layer1.tau_mem": np.array([4.0, 11.0, 7.0, 18.0])}


def test_per_unit_tau_mem_is_a_vector_broadcast_from_the_configuration():
    net = egret.Network(config(4, 0.5, 2.0))
    params = net.parameters()
    for name, n, tau in (("layer0.tau_mem", 7, 6.0), ("layer1.tau_mem", 4, 4.0)):
        assert isinstance(params[name], np.ndarray) and params[name].shape == (n,)
        assert np.all(params[name] == tau)
    assert isinstance(params["layer0.tau_o"], float)  # the output trace's stays one per layer
    net.set_parameters(TAU_MEM)
    for name, tau in TAU_MEM.items():
        assert np.array_equal(net.parameters()[name], tau)
    for bad in (0.0, -2.0, np.nan):
        tau = TAU_MEM["layer1.tau_mem"].copy()
        tau[2] = bad
        try:
            net.set_parameters({"layer1.tau_mem": tau})
        except ValueError as e:
            assert "tau_mem[2]" in str(e) or "index 2" in str(e), str(e)
        else:
            raise AssertionError(f"tau_mem[2] = {bad} was accepted")
    assert np.array_equal(net.parameters()["layer1.tau_mem"], TAU_MEM["layer1.tau_mem"])


def test_two_lif_layers_with_per_unit_tau_mem_equal_autograd():
    dt, end, alpha_s = 0.5, 20.0, 2.0
    net = egret.Network(config(4, dt, alpha_s))
    net.set_parameters(TAU_MEM)
    rng = np.random.default_rng(4)
    points, windows = [6.1, 12.0, 19.9], [(2.0, 9.5), (14.0, 20.0)]
    cases, samples = labelled_batch(rng, end, points, windows)
    counts = {"pairs": 0}
    grads, _, worst, spikes = two_layers_equal_autograd(
        net, cases, samples, dt, end,
        lambda P0, P1, x: two_layers(P0, P1, x, dt, alpha_s, counts),
        lambda s, P: readouts(s, dt, P["tau_o"], points, windows),
        lambda r, x, s0, s1: spikes_match(r, 0, s0, dt) + spikes_match(r, 1, s1, dt))
    assert len(worst) == 2 * 6 + 2 - 1  # every gradient but layer 0's tau_o (zero on both sides)
    for name, tau in TAU_MEM.items():
        g = np.asarray(grads[name])
        assert g.shape == tau.shape  # dL/dtau_mem: one entry per unit
        assert np.count_nonzero(g) >= len(tau) - 1, (name, g)
        assert len(np.unique(np.round(g, 12))) >= len(tau) - 1  # not one number repeated
    assert spikes > 150
    print(f"two LIF layers, per-unit tau_mem: {spikes} spikes, worst relative error "
          f"{max(worst.values()):.1e} ({max(worst, key=worst.get)}); tau_mem: "
          f"{worst['layer0.tau_mem']:.1e}, {worst['layer1.tau_mem']:.1e}")


def test_per_unit_tau_mem_trains_through_the_torch_module():
    """EventNetwork(train_time_constants=True): log_tau holds layer 0's 7 tau_mem entries, then
    tau_o; its gradient is egret's dL/dtau times tau (the chain rule of tau = exp(log tau))."""
    dt, end, alpha_s = 0.5, 20.0, 2.0
    cfg = config(4, dt, alpha_s)
    ref_net = egret.Network(cfg)
    ref_net.set_parameters(TAU_MEM)
    model = et.EventNetwork(cfg, train_time_constants=True)
    with torch.no_grad():
        for l, layer in enumerate(model.layers):
            offset, shape = layer.time_constant_slices["tau_mem"]
            assert shape == TAU_MEM[f"layer{l}.tau_mem"].shape
            layer.log_tau[offset:offset + shape[0]] = torch.from_numpy(
                np.log(TAU_MEM[f"layer{l}.tau_mem"]))
    assert np.allclose(model.to_network().parameters()["layer0.tau_mem"], TAU_MEM["layer0.tau_mem"],
                       rtol=1e-15)
    _, samples = labelled_batch(np.random.default_rng(4), end, [6.1, 12.0, 19.9], [(2.0, 9.5)])
    logits = model(samples)
    y = torch.tensor([s.labels for s in samples])
    torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)).backward()
    _, ref, _ = ref_net.loss_and_gradient(samples, loss="softmax_cross_entropy")
    for l, layer in enumerate(model.layers):
        assert layer.time_constants == ["tau_mem", "tau_o"]
        tau = np.exp(layer.log_tau.detach().numpy())
        n = len(TAU_MEM[f"layer{l}.tau_mem"])
        expected = np.append(np.asarray(ref[f"layer{l}.tau_mem"]) * tau[:n],
                             ref[f"layer{l}.tau_o"] * tau[n])
        assert np.count_nonzero(expected[:n]) >= n - 1
        np.testing.assert_allclose(layer.log_tau.grad.numpy(), expected, rtol=1e-12, atol=1e-300)
