"""What the PyTorch references of the tick-schedule families share (tests/python/test_*_gradients.py):
binning of input events into (t_{k-1}, t_k], the output trace's point and window readouts, the
losses, a Heaviside step with a chosen surrogate derivative, and the comparison of egret's
gradients with autograd's. Written independently of egret: dense tensors, every unit every tick."""
import numpy as np
import torch

import egret


def heaviside_with_surrogate(derivative):
    """H(u) = 1 for u > 0 else 0 forward; derivative(u) in place of H'(u) backward."""
    class H(torch.autograd.Function):
        @staticmethod
        def forward(ctx, u):
            ctx.save_for_backward(u)
            return (u > 0).to(u.dtype)

        @staticmethod
        def backward(ctx, g):
            (u,) = ctx.saved_tensors
            return g * derivative(u)

    return H.apply


def layer_params(net, l):
    prefix = f"layer{l}."
    return {k[len(prefix):]: torch.tensor(np.asarray(v, dtype=np.float64), requires_grad=True)
            for k, v in net.parameters().items() if k.startswith(prefix)}


def bin_inputs(t, ch, values, dt, ticks, channels):
    """values: a differentiable tensor, one per event, summed into (t_{k-1}, t_k]."""
    k = np.maximum(np.ceil(np.asarray(t) / dt).astype(int), 1)
    keep = k <= ticks
    flat = torch.zeros(ticks * channels, dtype=torch.float64)
    index = torch.tensor((k[keep] - 1) * channels + np.asarray(ch)[keep], dtype=torch.int64)
    flat = flat.index_add(0, index, values[torch.tensor(np.nonzero(keep)[0])])
    return flat.reshape(ticks, channels)


def readouts(y, dt, tau, points, windows):
    """Point readouts o(t) and window means of the output trace of outputs y (K, N); tau is one
    time constant or one per unit (N)."""
    times = dt * torch.arange(1, y.shape[0] + 1, dtype=torch.float64)[:, None]  # (K, 1)
    tau = tau.reshape(1, -1) if torch.is_tensor(tau) and tau.dim() > 0 else tau  # (1, N)
    out = []
    for t in points:
        e = torch.exp(-(t - times) / tau)
        w = torch.where(times <= t, e, torch.zeros_like(e))
        out.append((w * y).sum(0))
    for a, b in windows:
        before = times <= a
        inside = (times > a) & (times <= b)
        e_a, e_b = torch.exp(-(a - times) / tau), torch.exp(-(b - times) / tau)
        w = torch.where(before, tau * (e_a - e_b),
                        torch.where(inside, tau * (1 - e_b), torch.zeros_like(e_b)))
        out.append((w * y).sum(0) / (b - a))
    return torch.stack(out)


def loss_of(logits, loss, targets):
    if loss == "mean_squared_error":
        return ((logits - torch.tensor(targets)) ** 2).mean()
    return torch.nn.functional.cross_entropy(logits, torch.tensor(targets), reduction="mean")


def relative_error(mine, ref):
    ref = np.asarray(ref, dtype=np.float64)
    scale = np.abs(ref).max()
    assert scale > 0, "a zero reference gradient tests nothing"
    return float(np.abs(np.asarray(mine) - ref).max() / scale)


def compare(grads, ref_tensors):
    worst = {}
    for name, tensor in ref_tensors.items():
        ref = tensor.grad.numpy() if tensor.grad is not None else np.zeros(tuple(tensor.shape))
        mine = np.asarray(grads[name], dtype=np.float64).reshape(ref.shape)
        if np.abs(ref).max() == 0:
            assert np.abs(mine).max() == 0, name
            continue
        worst[name] = relative_error(mine, ref)
        assert worst[name] <= 1e-10, (name, worst[name])
    return worst


def random_events(rng, n, end, channels):
    t = np.sort(rng.uniform(0.01, end, n))
    return t, rng.integers(0, channels, n), rng.uniform(0.3, 1.5, n)


def held_readouts(h, dt, points, windows):
    """h (K, N) held from t_k = k dt on (zero before t_1): point values and window means."""
    K = h.shape[0]
    times = dt * np.arange(1, K + 1)
    out = []
    for t in points:
        k = int(np.searchsorted(times, t, side="right"))  # ticks at or before t
        out.append(h[k - 1] if k > 0 else torch.zeros_like(h[0]))
    for a, b in windows:
        ends = np.append(times[1:], np.inf)
        lengths = np.clip(np.minimum(ends, b) - np.maximum(times, a), 0, None)
        out.append(torch.tensor(lengths) @ h / (b - a))
    return torch.stack(out)


def assert_events_are_changes(result, layer, h, dt):
    """A held-output layer's events (egret's simulate result) are exactly the changes of the
    reference's states h (K, N): one event per (tick, unit) whose h changed, valued h_k - h_{k-1}.
    Returns their number."""
    d = torch.diff(h.detach(), dim=0, prepend=torch.zeros_like(h[:1])).numpy()
    k, n = np.nonzero(d)
    mine = result["layer"] == layer
    assert np.array_equal(np.round(result["time"][mine] / dt).astype(int), k + 1)
    assert np.array_equal(result["unit"][mine], n)
    assert np.allclose(result["value"][mine], d[k, n], rtol=0, atol=1e-12)
    return len(k)


def readout_params(net):
    """The readout's W_o and b_o as leaf tensors."""
    return {k: torch.tensor(v, requires_grad=True) for k, v in net.parameters().items()
            if k.startswith("readout.")}


def logits_of(o, W):
    return o @ W["readout.W_o"].T + W["readout.b_o"]


def named_tensors(W, *layers):
    """egret's gradient names for the reference's leaf tensors: layer<l>.<name>, readout.*."""
    tensors = {f"layer{l}.{k}": p for l, P in enumerate(layers) for k, p in P.items()}
    tensors.update(W)
    return tensors


def labelled_batch(rng, end, points, windows, signed=False, size=3, channels=5, classes=3):
    """`size` samples of random input events with a class label per readout: the cases
    (t, ch, v, labels) and egret's Samples of them."""
    cases = []
    for _ in range(size):
        t, ch, v = random_events(rng, 80, end, channels)
        if signed:
            v = v * rng.choice([-1, 1], len(v))
        cases.append((t, ch, v, rng.integers(0, classes, len(points) + len(windows))))
    samples = [egret.Sample(t, ch, v, channels=channels, end_time=end, readout_times=points,
                            readout_windows=windows, labels=[int(x) for x in labels])
               for t, ch, v, labels in cases]
    return cases, samples


def spikes_match(result, layer, s, dt):
    """A binary-spike layer's events (egret's simulate result) are exactly the reference's spikes
    s (K, N): one event of value 1 per (tick, unit) that spiked. Returns their number."""
    k, n = np.nonzero(s.detach().numpy())
    mine = result["layer"] == layer
    assert np.array_equal(np.round(result["time"][mine] / dt).astype(int), k + 1)
    assert np.array_equal(result["unit"][mine], n)
    assert np.all(result["value"][mine] == 1.0)
    return len(k)


def two_layers_equal_autograd(net, cases, samples, dt, end, layers, readout, events):
    """The body every family's two-layer batch test shares: egret's softmax cross-entropy of
    `samples` and its gradients against PyTorch autograd of the reference on the same `cases`
    (t, channel, value, labels). layers(P0, P1, x) -> (y0, y1), the reference's outputs of both
    layers for binned inputs x; readout(y1, P1) -> the readouts o; events(result, x, y0, y1)
    checks egret's own run of the case (Network.simulate) against the reference and returns a
    count. Returns egret's gradients and statistics, the worst relative error per parameter and
    the summed counts."""
    value, grads, stats = net.loss_and_gradient(samples, loss="softmax_cross_entropy")
    ticks = int(round(end / dt))
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    W = readout_params(net)
    total, counted = 0, 0
    for t, ch, v, labels in cases:
        x = bin_inputs(t, ch, torch.tensor(v), dt, ticks, net.input_channels)
        y0, y1 = layers(P0, P1, x)
        total = total + loss_of(logits_of(readout(y1, P1), W), "softmax_cross_entropy", labels)
        counted += events(net.simulate(t, ch, v, end_time=end), x, y0, y1)
    ref = total / len(cases)
    ref.backward()
    assert abs(value - float(ref)) <= 1e-12 * abs(float(ref))
    return grads, stats, compare(grads, named_tensors(W, P0, P1)), counted


def input_values_equal_autograd(net, events, targets, dt, end, points, windows, layers, readout):
    """egret's gradient of the mean squared error with respect to the input values of one sample
    against autograd of the reference (layers and readout as for two_layers_equal_autograd).
    Returns egret's gradients and the worst relative error of the values."""
    t, ch, v = events
    sample = egret.Sample(t, ch, v, channels=net.input_channels, end_time=end,
                          readout_times=points, readout_windows=windows, targets=targets)
    _, grads, _ = net.loss_and_gradient(sample, loss="mean_squared_error")
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    values = torch.tensor(v, requires_grad=True)
    x = bin_inputs(t, ch, values, dt, int(end / dt), net.input_channels)
    _, y1 = layers(P0, P1, x)
    o = readout(y1, P1)
    loss_of(logits_of(o, readout_params(net)), "mean_squared_error", targets).backward()
    return grads, compare(grads, {"input.value": values})["input.value"]


POINTS, WINDOWS = [6.1, 12.0, 19.9], [(2.0, 9.5), (14.2, 20.0)]


def held_two_layers_equal_autograd(net, seed, dt, end, layers):
    """two_layers_equal_autograd for a held-output family: a batch of three samples of signed
    random events (labelled_batch), the readouts of the held state at POINTS and WINDOWS, and
    egret's events checked to be the changes of the reference's states."""
    cases, samples = labelled_batch(np.random.default_rng(seed), end, POINTS, WINDOWS, signed=True)
    return two_layers_equal_autograd(
        net, cases, samples, dt, end, layers, lambda h, P: held_readouts(h, dt, POINTS, WINDOWS),
        lambda r, x, h0, h1: sum(assert_events_are_changes(r, l, h, dt)
                                 for l, h in ((0, h0), (1, h1))))


def held_input_values_equal_autograd(net, seed, dt, end, layers):
    """input_values_equal_autograd for a held-output family: 60 random events, random targets, a
    readout of the held state at 15 ms and one over (20, 29.5) ms. Returns the worst error."""
    rng = np.random.default_rng(seed)
    events = random_events(rng, 60, end, net.input_channels)
    targets = rng.uniform(-1, 1, (2, net.readout_classes))
    return input_values_equal_autograd(
        net, events, targets, dt, end, [15.0], [(20.0, 29.5)], layers,
        lambda h, P: held_readouts(h, dt, [15.0], [(20.0, 29.5)]))[1]


def rhythmic_gates(P, dt, ticks, slope, counts):
    """suRNN's and suGRU's gate g_k = H(g_b + sum_j g_alpha[:, j] sin(g_omega_j t_k + g_phi[:, j]))
    at t_k = k dt, k = 1..ticks, with the surrogate slope s (1 - s), s = sigmoid(slope a), for H';
    counts the open (unit, tick) pairs and all pairs."""
    H = heaviside_with_surrogate(lambda a: slope * torch.sigmoid(slope * a)
                                 * (1 - torch.sigmoid(slope * a)))
    for k in range(1, ticks + 1):
        g = H(P["g_b"] + (P["g_alpha"] * torch.sin(P["g_omega"] * dt * k + P["g_phi"])).sum(1))
        counts["open"] += int(g.sum())
        counts["pairs"] += len(g)
        yield g
