"""Discrete-time EGRU training gradients (docs/adjoint.md, "Discrete BPTT") against PyTorch
autograd of the same equations, written here independently: dense double tensors, every unit
every tick, inputs binned into (t_{k-1}, t_k], H with the pseudo-derivative
H'(v) = gamma max(0, 1 - |v| / eps) as a custom autograd.Function, the output trace
o_n(t) = sum_{t_k <= t} y_k,n exp(-(t - t_k) / tau_o), point readouts o(t) and window means
(1 / (b - a)) int_a^b o, logits W_o o + b_o and the loss (mean squared error or softmax
cross-entropy, means over readouts). Compared with egret's Network.loss_and_gradient: every
parameter, the input values, losses at several readouts, two discrete layers, and a continuous
layer feeding a discrete one; and the backward pass's reported sparsity against the share of
zero pseudo-derivatives counted here."""
import numpy as np
import torch

import egret
from autograd_reference import (bin_inputs, compare, heaviside_with_surrogate, layer_params,
                                logits_of, loss_of, named_tensors, random_events, readout_params,
                                readouts)

GAMMA, EPS = 0.3, 0.5  # defaults of "pseudo_derivative"


def heaviside(gamma, eps):
    return heaviside_with_surrogate(lambda v: gamma * torch.clamp(1 - v.abs() / eps, min=0))


def discrete_layer(P, x, gamma, eps, counts):
    """x: (K, D) binned inputs -> (K, N) outputs y_k; counts the zero pseudo-derivatives."""
    H = heaviside(gamma, eps)
    n = P["theta"].shape[0]
    c = torch.zeros(n, dtype=torch.float64)
    y = torch.zeros(n, dtype=torch.float64)
    out = []
    for xk in x:
        u = torch.sigmoid(P["U_u"] @ xk + P["V_u"] @ y + P["b_u"])
        r = torch.sigmoid(P["U_r"] @ xk + P["V_r"] @ y + P["b_r"])
        z = torch.tanh(P["U_z"] @ xk + P["V_z"] @ (r * y) + P["b_z"])
        c = u * z + (1 - u) * c - y
        v = c - P["theta"]
        y = c * H(v)
        counts["pairs"] += n
        counts["zero"] += int(((1 - v.detach().abs() / eps) <= 0).sum())
        out.append(y)
    return torch.stack(out)


def two_discrete_layers_case(loss, half_width, seed):
    dt, end, channels = 0.5, 25.0, 5
    layer = {"type": "discrete_egru", "dt": dt, "pseudo_derivative": {"half_width": half_width}}
    cfg = {"precision": "double", "seed": seed, "input_channels": channels, "readout_classes": 3,
           "layers": [dict(layer, units=7, tau_o=6, threshold=0.2,
                           init={"weight_scale": 2.5, "bias_z": 0.5, "bias_spread": 0.3}),
                      dict(layer, units=4, tau_o=5, threshold=0.15,
                           init={"weight_scale": 2.5, "bias_z": 0.4})]}
    net = egret.Network(cfg)
    # Each unit its own tau_o (the last layer's enters the readouts).
    net.set_parameters({"layer0.tau_o": 6 * np.linspace(0.6, 1.4, 7),
                        "layer1.tau_o": 5 * np.linspace(0.6, 1.4, 4)})
    rng = np.random.default_rng(seed)
    t, ch, v = random_events(rng, 90, end, channels)
    points = [7.3, 15.0, 24.9]  # 15.0 is a tick: the readout includes that tick's events
    windows = [(3.2, 11.7), (18.0, 25.0)]
    r = len(points) + len(windows)
    if loss == "mean_squared_error":
        targets = rng.uniform(-1, 1, (r, 3))
        sample = egret.Sample(t, ch, v, channels=channels, end_time=end, readout_times=points,
                              readout_windows=windows, targets=targets)
    else:
        targets = rng.integers(0, 3, r)
        sample = egret.Sample(t, ch, v, channels=channels, end_time=end, readout_times=points,
                              readout_windows=windows, labels=[int(x) for x in targets])
    value, grads, stats = net.loss_and_gradient(sample, loss=loss)

    ticks = int(round(end / dt))
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    W = readout_params(net)
    x_values = torch.tensor(v, requires_grad=True)
    counts = {"pairs": 0, "zero": 0}
    x = bin_inputs(t, ch, x_values, dt, ticks, channels)
    y0 = discrete_layer(P0, x, GAMMA, half_width, counts)
    y1 = discrete_layer(P1, y0, GAMMA, half_width, counts)  # layer 1 consumes y0 at the same tick
    o = readouts(y1, dt, P1["tau_o"], points, windows)
    logits = logits_of(o, W)
    ref = loss_of(logits, loss, targets)
    ref.backward()
    assert abs(value - float(ref)) <= 1e-12 * abs(float(ref))
    tensors = named_tensors(W, P0, P1)
    tensors["input.value"] = x_values
    worst = compare(grads, tensors)
    assert stats["surrogate_pairs"] == counts["pairs"] == ticks * (7 + 4)
    assert stats["zero_surrogate_pairs"] == counts["zero"]
    assert stats["backward_sparsity"] == counts["zero"] / counts["pairs"]
    events = int((y0 != 0).sum()) + int((y1 != 0).sum())
    assert events > 60  # the layers are active
    return worst, stats, events


def test_two_discrete_layers_mean_squared_error_equal_autograd():
    worst, stats, events = two_discrete_layers_case("mean_squared_error", 0.5, 11)
    assert len(worst) >= 20  # every parameter of both layers, the readout and the inputs
    print(f"two discrete layers, MSE: {events} events, worst relative error "
          f"{max(worst.values()):.1e} ({max(worst, key=worst.get)}), "
          f"backward sparsity {stats['backward_sparsity']:.3f}")


def test_two_discrete_layers_cross_entropy_narrow_surrogate_equal_autograd():
    worst, stats, events = two_discrete_layers_case("softmax_cross_entropy", 0.08, 3)
    assert 0.3 < stats["backward_sparsity"] < 1  # a narrow surrogate: a sparse backward pass
    print(f"two discrete layers, cross-entropy, eps 0.08: {events} events, worst relative error "
          f"{max(worst.values()):.1e}, backward sparsity {stats['backward_sparsity']:.3f}")


def test_continuous_layer_feeding_a_discrete_layer_equals_autograd():
    """The discrete layer's gradients, and what reaches the continuous layer through the values
    of its events (y = theta of the emitting unit): the discrete layer bins its inputs, so event
    times, and with them every other continuous parameter and the input values, get none."""
    dt, end, channels = 1.0, 40.0, 4
    cfg = {"precision": "double", "seed": 5, "input_channels": channels, "readout_classes": 2,
           "layers": [{"type": "continuous_egru", "units": 6, "tau_m": 5, "tau_o": 6,
                       "window_input": 3, "window_recurrent": 2, "threshold": 0.3,
                       "init": {"weight_scale": 1.5, "bias_z": 0.8, "bias_spread": 0.3}},
                      {"type": "discrete_egru", "units": 5, "dt": dt, "tau_o": 5, "threshold": 0.1,
                       "pseudo_derivative": {"dampening": 0.7, "half_width": 0.3},
                       "init": {"weight_scale": 2.0, "bias_z": 0.3}}]}
    net = egret.Network(cfg)
    rng = np.random.default_rng(2)
    t, ch, v = random_events(rng, 300, end, channels)
    points, windows = [12.5, 39.0], [(20.0, 30.0)]
    targets = rng.uniform(-1, 1, (3, 2))
    sample = egret.Sample(t, ch, v, channels=channels, end_time=end, readout_times=points,
                          readout_windows=windows, targets=targets)
    _, grads, stats = net.loss_and_gradient(sample, loss="mean_squared_error")
    r = net.simulate(t, ch, v, end_time=end)
    m0 = r["layer"] == 0
    assert m0.sum() > 30
    theta0 = torch.tensor(net.parameters()["layer0.theta"], requires_grad=True)
    ticks = int(end / dt)
    x = bin_inputs(r["time"][m0], r["unit"][m0], theta0[torch.tensor(r["unit"][m0])], dt, ticks, 6)
    P1 = layer_params(net, 1)
    W = readout_params(net)
    counts = {"pairs": 0, "zero": 0}
    y1 = discrete_layer(P1, x, 0.7, 0.3, counts)
    o = readouts(y1, dt, P1["tau_o"], points, windows)
    loss_of(logits_of(o, W), "mean_squared_error", targets).backward()
    tensors = {f"layer1.{k}": p for k, p in P1.items()}
    tensors.update(W)
    tensors["layer0.theta"] = theta0
    worst = compare(grads, tensors)
    for name, g in grads.items():
        if name.startswith("layer0.") and name != "layer0.theta" or name.startswith("input."):
            assert np.abs(np.asarray(g)).max() == 0, name
    assert stats["zero_surrogate_pairs"] == counts["zero"]
    assert int((y1 != 0).sum()) > 20
    print(f"continuous -> discrete: worst relative error {max(worst.values()):.1e}")


def activity_case(threshold):
    cfg = {"precision": "double", "seed": 9, "input_channels": 8, "readout_classes": 2,
           "layers": [{"type": "discrete_egru", "units": 64, "dt": 1.0, "tau_o": 5,
                       "threshold": threshold, "pseudo_derivative": {"half_width": 0.05},
                       "init": {"weight_scale": 1.0, "bias_z": 0.6, "bias_spread": 0.4}}]}
    net = egret.Network(cfg)
    rng = np.random.default_rng(1)
    t, ch, v = random_events(rng, 200, 100.0, 8)
    s = egret.Sample(t, ch, v, channels=8, end_time=100.0, readout_windows=[(50.0, 100.0)],
                     labels=1)
    _, _, stats = net.loss_and_gradient(s, loss="softmax_cross_entropy")
    events = len(net.simulate(t, ch, v, end_time=100.0)["time"])
    return stats, events / (64 * 100)


def test_backward_work_falls_with_activity():
    busy, busy_activity = activity_case(0.3)
    quiet, quiet_activity = activity_case(0.7)
    assert busy_activity > 3 * quiet_activity > 0
    assert 0.2 < busy_activity < 0.5 and 0.02 < quiet_activity < 0.1
    assert quiet["backward_macs"] < 0.5 * busy["backward_macs"]
    assert quiet["backward_sparsity"] > busy["backward_sparsity"]
    print(f"activity {busy_activity:.3f} -> {busy['backward_macs']} backward MACs, "
          f"activity {quiet_activity:.3f} -> {quiet['backward_macs']}")


def discrete_layer_states(P, x, gamma, eps):
    """As discrete_layer, also returning every tick's c (K, N)."""
    H = heaviside(gamma, eps)
    n = P["theta"].shape[0]
    c = torch.zeros(n, dtype=torch.float64)
    y = torch.zeros(n, dtype=torch.float64)
    ys, cs = [], []
    for xk in x:
        u = torch.sigmoid(P["U_u"] @ xk + P["V_u"] @ y + P["b_u"])
        r = torch.sigmoid(P["U_r"] @ xk + P["V_r"] @ y + P["b_r"])
        z = torch.tanh(P["U_z"] @ xk + P["V_z"] @ (r * y) + P["b_z"])
        c = u * z + (1 - u) * c - y
        y = c * H(c - P["theta"])
        ys.append(y)
        cs.append(c)
    return torch.stack(ys), torch.stack(cs)


def test_state_regularizer_on_two_discrete_layers_equals_autograd():
    """The state regulariser (docs/model.md, The state regulariser) on the ticks:
    weight / (N T) * dt * sum over layers, ticks and units of max(0, c_k - (theta - margin)),
    with theta attached and detached, added to the loss; every gradient against autograd."""
    dt, end, channels, margin, weight = 0.5, 20.0, 5, 0.05, 4.0
    layer = {"type": "discrete_egru", "dt": dt}
    cfg = {"precision": "double", "seed": 7, "input_channels": channels, "readout_classes": 3,
           "layers": [dict(layer, units=6, tau_o=6, threshold=0.2,
                           init={"weight_scale": 2.5, "bias_z": 0.5, "bias_spread": 0.3}),
                      dict(layer, units=4, tau_o=5, threshold=0.15,
                           init={"weight_scale": 2.5, "bias_z": 0.4})]}
    net = egret.Network(cfg)
    rng = np.random.default_rng(7)
    t, ch, v = random_events(rng, 80, end, channels)
    windows = [(5.0, 12.0), (12.0, 20.0)]
    labels = [1, 2]
    sample = egret.Sample(t, ch, v, channels=channels, end_time=end, readout_windows=windows,
                          labels=labels)
    ticks = int(round(end / dt))
    for detach in (False, True):
        reg = {"weight": weight, "margin": margin, "detach_threshold": detach}
        value, grads, stats = net.loss_and_gradient(sample, state_regularizer=reg)
        P0, P1 = layer_params(net, 0), layer_params(net, 1)
        W = readout_params(net)
        x_values = torch.tensor(v, requires_grad=True)
        x = bin_inputs(t, ch, x_values, dt, ticks, channels)
        y0, c0 = discrete_layer_states(P0, x, GAMMA, EPS)
        y1, c1 = discrete_layer_states(P1, y0, GAMMA, EPS)
        task = loss_of(logits_of(readouts(y1, dt, P1["tau_o"], [], windows), W),
                       "softmax_cross_entropy", labels)
        level = lambda P: (P["theta"].detach() if detach else P["theta"]) - margin
        excess = (torch.relu(c0 - level(P0)).sum() + torch.relu(c1 - level(P1)).sum()) * dt
        state = weight / ((6 + 4) * end) * excess
        (task + state).backward()
        assert abs(stats["state_regularizer"] - float(state)) <= 1e-12 * float(state)
        assert float(state) > 0.1 * float(task)  # the term matters here
        assert abs(value - float(task + state)) <= 1e-12 * float(task + state)
        tensors = named_tensors(W, P0, P1)
        tensors["input.value"] = x_values
        worst = compare(grads, tensors)
        assert len(worst) >= 20
        print(f"state regularizer on two discrete layers, detach {detach}: worst relative error "
              f"{max(worst.values()):.1e} ({max(worst, key=worst.get)})")
