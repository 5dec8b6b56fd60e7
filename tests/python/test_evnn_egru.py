"""egret.torch.EGRU against EvNN's equations written here in plain PyTorch (docs/evnn_egru.md;
docs/model.md §4, EvNN convention), autograd through them with EvNN's pseudo-derivative as the
independent truth for the gradients: forward (y, h, trace within 1e-10, o exactly), gradients of
the input, the state and every parameter (1e-9 relative), zoneout, DropConnect, grad_clip, the
EvNN state_dict layout and the torch.nn.GRU weight mapping."""
import numpy as np
import pytest
import torch

import egret
import egret.torch as et

torch.set_num_threads(1)


class Spike(torch.autograd.Function):
    """H(v) (strict) forward; gamma max(0, 1 - eps |v|) backward."""

    @staticmethod
    def forward(ctx, v, gamma, eps):
        ctx.save_for_backward(v)
        ctx.gamma, ctx.eps = gamma, eps
        return (v > 0).to(v.dtype)

    @staticmethod
    def backward(ctx, g):
        (v,) = ctx.saved_tensors
        return g * ctx.gamma * torch.clamp(1 - ctx.eps * v.abs(), min=0), None, None


def reference(x, y0, W, R, bx, br, thr, gamma, eps, zw=None):
    """EvNN's recurrence, densely: x (T, B, C), y0 (B, N) or None -> y, h, o, trace (T, B, N)."""
    T, B, _ = x.shape
    N = thr.shape[0]
    y = torch.zeros(B, N, dtype=x.dtype) if y0 is None else y0
    h = torch.zeros(B, N, dtype=x.dtype)
    tr = torch.zeros(B, N, dtype=x.dtype)
    outs = {k: [] for k in ("y", "h", "o", "trace")}
    for t in range(T):
        a = x[t] @ W + bx
        q = y @ R + br
        z = torch.sigmoid(a[:, :N] + q[:, :N])
        r = torch.sigmoid(a[:, N:2 * N] + q[:, N:2 * N])
        g = torch.tanh(a[:, 2 * N:] + r * q[:, 2 * N:])
        c = z * h + (1 - z) * g
        if zw is not None:
            c = zw[t] * c + (1 - zw[t]) * h
        o = Spike.apply(c - thr, gamma, eps)
        y = o * c
        h = c - o * thr
        tr = 0.9 * tr + 0.1 * y
        for k, v in (("y", y), ("h", h), ("o", o), ("trace", tr)):
            outs[k].append(v)
    return tuple(torch.stack(outs[k]) for k in ("y", "h", "o", "trace"))


def random_layer(C, N, seed, input_scale, dtype=torch.float64, **kw):
    torch.manual_seed(seed)
    layer = et.EGRU(C, N, dtype=dtype, **kw)
    with torch.no_grad():
        layer.bias.uniform_(-0.3, 0.3)
        layer.recurrent_bias.uniform_(-0.3, 0.3)
    gen = torch.Generator().manual_seed(seed + 1)
    return layer, gen


def sparse_input(T, B, C, gen, scale, density=0.3, dtype=torch.float64):
    x = torch.randn(T, B, C, generator=gen, dtype=dtype) * scale
    return x * (torch.rand(T, B, C, generator=gen, dtype=dtype) < density)


CASES = [  # C, N, T, B, input scale
    (6, 8, 20, 3, 2.0),
    (16, 24, 30, 2, 1.5),
    (40, 64, 25, 4, 1.0),
    (64, 32, 15, 5, 3.0),
]


def check_against_reference(layer, x, state, gen, zw=None):
    N = layer.hidden_size
    xs = x.clone().requires_grad_(True)
    s = None if state is None else state.clone().requires_grad_(True)
    if zw is not None:  # the functional path with an explicit zoneout mask
        from egret._evnn_egru import _EvnnEgruFunction
        outs = _EvnnEgruFunction.apply(xs, None if s is None else s[0], layer.kernel,
                                       layer.recurrent_kernel, layer.bias, layer.recurrent_bias,
                                       layer.thr, zw, float(layer.dampening_factor),
                                       float(layer.pseudo_derivative_support), 0, -1.0)
    else:
        y, (h, o, tr) = layer(xs, s)
        outs = (y, h, o, tr)
    params = [layer.kernel, layer.recurrent_kernel, layer.bias, layer.recurrent_bias, layer.thr]
    ref_params = [p.detach().clone().requires_grad_(True) for p in params]
    xr = x.clone().requires_grad_(True)
    sr = None if state is None else state.clone().requires_grad_(True)
    ref = reference(xr, None if sr is None else sr[0], *ref_params,
                    float(layer.dampening_factor), float(layer.pseudo_derivative_support), zw)
    for name, a, b in zip(("y", "h", "o", "trace"), outs, ref):
        if name == "o":
            assert torch.equal(a, b.detach()), "o differs"
        else:
            assert (a - b).abs().max().item() < 1e-10, name
    upstream = [torch.randn(a.shape, generator=gen, dtype=a.dtype) for a in outs]
    loss = sum((u * a).sum() for u, a in zip(upstream, outs))
    loss_ref = sum((u * b).sum() for u, b in zip(upstream, ref))
    layer.zero_grad()
    loss.backward()
    loss_ref.backward()
    pairs = [("input", xs.grad, xr.grad)] + [
        (n, p.grad, r.grad) for n, p, r in zip(
            ("kernel", "recurrent_kernel", "bias", "recurrent_bias", "thr"), params, ref_params)]
    if state is not None:
        pairs.append(("state", s.grad, sr.grad))
    worst = 0.0
    for name, mine, theirs in pairs:
        scale = theirs.abs().max().item()
        assert scale > 0, f"{name}: the reference gradient is zero (the check would be empty)"
        err = (mine - theirs).abs().max().item() / scale
        worst = max(worst, err)
        assert err < 1e-9, f"{name}: {err:.2e}"
    return outs[2].mean().item(), worst


@pytest.mark.parametrize("C, N, T, B, scale", CASES)
def test_forward_and_gradients_equal_evnn_equations(C, N, T, B, scale):
    layer, gen = random_layer(C, N, seed=C + N, input_scale=scale)
    x = sparse_input(T, B, C, gen, scale)
    state = torch.rand(1, B, N, generator=gen, dtype=torch.float64) * (
        torch.rand(1, B, N, generator=gen, dtype=torch.float64) < 0.3)
    activity, worst = check_against_reference(layer, x, state, gen)
    print(f"C={C} N={N} T={T} B={B}: activity {activity:.3f}, worst gradient error {worst:.1e}")
    assert 0.05 <= activity <= 0.40  # the acceptance's range of activity


def test_zoneout_mask_and_batch_first_and_no_state():
    layer, gen = random_layer(10, 12, seed=3, input_scale=2.0)
    x = sparse_input(18, 3, 10, gen, 2.0)
    zw = torch.bernoulli(torch.full((18, 3, 12), 0.7, dtype=torch.float64), generator=gen)
    activity, _ = check_against_reference(layer, x, None, gen, zw=zw)
    assert activity > 0.02
    # batch_first gives the same numbers, transposed
    layer_bf, _ = random_layer(10, 12, seed=3, input_scale=2.0, batch_first=True)
    y, (h, o, tr) = layer(x)
    y2, (h2, o2, tr2) = layer_bf(x.transpose(0, 1))
    for a, b in ((y, y2), (h, h2), (o, o2), (tr, tr2)):
        assert torch.equal(a, b.transpose(0, 1))
    # eval-mode zoneout is the expectation: weights 1 - p everywhere
    lz, _ = random_layer(10, 12, seed=3, input_scale=2.0, zoneout=0.25)
    lz.eval()
    ye, _ = lz(x)
    params = [p.detach() for p in (lz.kernel, lz.recurrent_kernel, lz.bias, lz.recurrent_bias,
                                   lz.thr)]
    ref = reference(x, None, *params, 0.7, 1.0, torch.full((18, 3, 12), 0.75, dtype=torch.float64))
    assert (ye - ref[0]).abs().max().item() < 1e-12


def test_dropconnect_uses_one_mask_of_the_recurrent_kernel_in_training():
    layer, gen = random_layer(8, 16, seed=5, input_scale=2.0, dropout=0.4)
    x = sparse_input(12, 2, 8, gen, 2.0)
    torch.manual_seed(11)
    y, _ = layer(x)
    torch.manual_seed(11)
    R = torch.nn.functional.dropout(layer.recurrent_kernel.detach(), p=0.4, training=True)
    ref = reference(x, None, layer.kernel.detach(), R, layer.bias.detach(),
                    layer.recurrent_bias.detach(), layer.thr.detach(), 0.7, 1.0)
    assert (y - ref[0]).abs().max().item() < 1e-12
    assert (R == 0).float().mean().item() > 0.2  # the mask did drop entries
    layer.eval()
    y_eval, _ = layer(x)
    ref_eval = reference(x, None, *(p.detach() for p in (layer.kernel, layer.recurrent_kernel,
                                                          layer.bias, layer.recurrent_bias,
                                                          layer.thr)), 0.7, 1.0)
    assert (y_eval - ref_eval[0]).abs().max().item() < 1e-12


def test_grad_clip_rescales_the_layer_gradients_by_their_global_norm():
    layer, gen = random_layer(8, 16, seed=7, input_scale=2.0, grad_clip=1e-3)
    free, _ = random_layer(8, 16, seed=7, input_scale=2.0)
    x = sparse_input(10, 2, 8, gen, 2.0)
    xa, xb = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    layer(xa)[0].sum().backward()
    free(xb)[0].sum().backward()
    names = ("kernel", "recurrent_kernel", "bias", "recurrent_bias", "thr")
    norm = torch.sqrt(sum((getattr(free, n).grad ** 2).sum() for n in names)).item()
    assert norm > 1e-3
    clipped = torch.sqrt(sum((getattr(layer, n).grad ** 2).sum() for n in names)).item()
    assert clipped == pytest.approx(1e-3 * norm / (norm + 1e-6), rel=1e-9)
    assert torch.equal(xa.grad, xb.grad)  # the input gradient is not clipped


def test_thresholds_are_clamped_in_place_and_initialised_from_beta():
    layer = et.EGRU(4, 2000, thr_mean=0.3, dtype=torch.float64)
    thr = layer.thr.detach()
    assert thr.min() > 0 and thr.max() < 1
    assert thr.mean().item() == pytest.approx(0.3, abs=0.01)  # Beta(9/7, 3) has mean 0.3
    with torch.no_grad():
        layer.thr[:3] = torch.tensor([-0.5, 0.5, 1.5], dtype=torch.float64)
    layer(torch.zeros(2, 1, 4, dtype=torch.float64))
    assert layer.thr[:3].tolist() == [0.0, 0.5, 1.0]


def test_state_dict_in_evnns_layout_loads_strictly():
    C, N = 5, 7
    g = torch.Generator().manual_seed(1)
    evnn_layout = {  # the keys, shapes and order of evnn_pytorch.EGRU's state_dict
        "_max_norm": torch.tensor([-1.0]),
        "kernel": torch.randn(C, 3 * N, generator=g),
        "recurrent_kernel": torch.randn(N, 3 * N, generator=g),
        "bias": torch.randn(3 * N, generator=g),
        "recurrent_bias": torch.randn(3 * N, generator=g),
        "dampening_factor": torch.tensor([0.5]),
        "pseudo_derivative_support": torch.tensor([2.0]),
        "thr": torch.rand(N, generator=g),
    }
    layer = et.EGRU(C, N)
    assert list(layer.state_dict().keys()) == list(evnn_layout.keys())
    layer.load_state_dict(evnn_layout)
    for k, v in evnn_layout.items():
        assert torch.equal(layer.state_dict()[k], v)
    assert float(layer.dampening_factor) == 0.5 and float(layer.pseudo_derivative_support) == 2.0


def test_torch_gru_weights_round_trip_with_the_gate_order_mapped():
    C, N = 6, 9
    layer, gen = random_layer(C, N, seed=9, input_scale=1.0)
    gru = torch.nn.GRU(C, N, dtype=torch.float64)
    w_ih, w_hh, b_ih, b_hh = layer.to_native_weights()
    with torch.no_grad():
        gru.weight_ih_l0.copy_(w_ih)
        gru.weight_hh_l0.copy_(w_hh)
        gru.bias_ih_l0.copy_(b_ih)
        gru.bias_hh_l0.copy_(b_hh)
    # One step of nn.GRU from h0 = y0 against EvNN's gate equations on the EGRU's parameters:
    # h' = (1 - z) g + z y0 (GRU memory = recurrent input), with z, r, g as in reference().
    x = torch.randn(1, 4, C, generator=gen, dtype=torch.float64)
    y0 = torch.randn(1, 4, N, generator=gen, dtype=torch.float64)
    out, _ = gru(x, y0)
    a = x[0] @ layer.kernel.detach() + layer.bias.detach()
    q = y0[0] @ layer.recurrent_kernel.detach() + layer.recurrent_bias.detach()
    z = torch.sigmoid(a[:, :N] + q[:, :N])
    r = torch.sigmoid(a[:, N:2 * N] + q[:, N:2 * N])
    g = torch.tanh(a[:, 2 * N:] + r * q[:, 2 * N:])
    assert (out[0] - ((1 - z) * g + z * y0[0])).abs().max().item() < 1e-14
    back, _ = random_layer(C, N, seed=10, input_scale=1.0)
    back.from_native_weights(gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0, gru.bias_hh_l0)
    for n in ("kernel", "recurrent_kernel", "bias", "recurrent_bias"):
        assert torch.equal(getattr(back, n), getattr(layer, n)), n


def test_float32_follows_float64_and_errors_name_the_problem():
    layer, gen = random_layer(12, 20, seed=4, input_scale=2.0)
    x = sparse_input(15, 3, 12, gen, 2.0)
    y64, (h64, o64, _) = layer(x)
    layer32 = et.EGRU(12, 20, dtype=torch.float32)
    layer32.load_state_dict({k: v.float() for k, v in layer.state_dict().items()})
    y32, _ = layer32(x.float())
    assert (y32.double() - y64).abs().max().item() < 1e-4
    with pytest.raises(ValueError, match=r"input must be \(T, B, 12\)"):
        layer(torch.zeros(3, 2, 5, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"state must be \(1, 3, 20\)"):
        layer(x, torch.zeros(3, 20, dtype=torch.float64))
    with pytest.raises(ValueError, match="kernel: expected a C-contiguous float64 array"):
        layer32(x)  # float64 input, float32 weights
    bad = x.clone()
    bad[2, 1, 3] = float("nan")
    with pytest.raises(ValueError, match="input: NaN or infinite entry"):
        layer(bad)
    with pytest.raises(ValueError, match="zoneout=1.5 must be in"):
        et.EGRU(3, 4, zoneout=1.5)


# The same convention as a cell family on the event engine ("type": "evnn_egru"): two layers,
# a batch of three event streams, point and window readouts of the engine's output trace, the
# EvNN equations in plain PyTorch as the truth (events, loss, every gradient, input values).
from autograd_reference import (bin_inputs, compare, labelled_batch, layer_params,  # noqa: E402
                                logits_of, loss_of, named_tensors, readout_params, readouts)


def evnn_engine_layer(P, x, gamma, eps):
    """x: (K, D) summed inputs per tick -> (K, N) outputs y_k, EvNN's equations."""
    y, _, _, _ = reference(x[:, None, :], None, P["kernel"], P["recurrent_kernel"], P["bias"],
                           P["recurrent_bias"], P["thr"], gamma, eps)
    return y[:, 0, :]


def engine_config(seed, dt):
    layer = {"type": "evnn_egru", "dt": dt, "thr_mean": 0.2, "weight_initialization_gain": 2.5,
             "pseudo_derivative_support": 2.0, "dampening_factor": 0.5}
    return {"precision": "double", "seed": seed, "input_channels": 5, "readout_classes": 3,
            "layers": [dict(layer, units=7), dict(layer, units=4)]}


def test_engine_family_equals_the_evnn_equations():
    dt, end = 0.5, 20.0
    net = egret.Network(engine_config(4, dt))
    rng = np.random.default_rng(4)
    points, windows = [6.1, 12.0, 19.9], [(2.0, 9.5), (14.2, 20.0)]
    cases, samples = labelled_batch(rng, end, points, windows)
    value, grads, stats = net.loss_and_gradient(samples, loss="softmax_cross_entropy")
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    tau0 = float(P0.pop("tau_o"))
    tau1 = float(P1.pop("tau_o"))
    assert tau0 == pytest.approx(dt / np.log(10 / 9), rel=1e-15)  # EvNN's 0.9 per tick
    W = readout_params(net)
    ticks = int(round(end / dt))
    total, events = 0, 0
    for t, ch, v, labels in cases:
        x = bin_inputs(t, ch, torch.tensor(v), dt, ticks, 5)
        y0 = evnn_engine_layer(P0, x, 0.5, 2.0)
        y1 = evnn_engine_layer(P1, y0, 0.5, 2.0)
        total = total + loss_of(logits_of(readouts(y1, dt, tau1, points, windows), W),
                                "softmax_cross_entropy", labels)
        r = net.simulate(t, ch, v, end_time=end)
        for layer, y in ((0, y0), (1, y1)):
            k, n = np.nonzero(y.detach().numpy())
            mine = r["layer"] == layer
            assert np.array_equal(np.round(r["time"][mine] / dt).astype(int), k + 1)
            assert np.array_equal(r["unit"][mine], n)
            assert np.allclose(r["value"][mine], y.detach().numpy()[k, n], rtol=0, atol=1e-12)
            events += len(k)
    ref = total / 3
    ref.backward()
    assert abs(value - float(ref)) <= 1e-12 * abs(float(ref))
    worst = compare(grads, named_tensors(W, P0, P1))
    assert len(worst) == 2 * 5 + 2  # kernel, recurrent_kernel, bias, recurrent_bias, thr; readout
    assert events > 60
    assert stats["surrogate_pairs"] == 3 * ticks * (7 + 4)
    print(f"evnn_egru on the engine: {events} events, worst relative error "
          f"{max(worst.values()):.1e} ({max(worst, key=worst.get)})")


def test_engine_family_input_value_gradients_and_threshold_clamp():
    dt, end = 1.0, 25.0
    cfg = engine_config(8, dt)
    net = egret.Network(cfg)
    params = net.parameters()
    params["layer0.thr"] = np.array([-0.2, 0.1, 0.4, 1.7, 0.3, 0.2, 0.9])
    net.set_parameters(params)
    assert net.parameters()["layer0.thr"].tolist() == [0.0, 0.1, 0.4, 1.0, 0.3, 0.2, 0.9]
    rng = np.random.default_rng(8)
    t = np.sort(rng.uniform(0.01, end, 60))
    ch, v = rng.integers(0, 5, 60), rng.uniform(0.3, 1.5, 60)
    targets = rng.uniform(-1, 1, (1, 3))
    sample = egret.Sample(t, ch, v, channels=5, end_time=end, readout_times=[end],
                          targets=targets)
    _, grads, _ = net.loss_and_gradient(sample, loss="mean_squared_error")
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    P0.pop("tau_o")
    tau1 = float(P1.pop("tau_o"))
    W = readout_params(net)
    values = torch.tensor(v, requires_grad=True)
    x = bin_inputs(t, ch, values, dt, int(end / dt), 5)
    y1 = evnn_engine_layer(P1, evnn_engine_layer(P0, x, 0.5, 2.0), 0.5, 2.0)
    loss_of(logits_of(readouts(y1, dt, tau1, [end], []), W), "mean_squared_error",
            targets).backward()
    worst = compare(grads, {"input.value": values})
    print(f"evnn_egru input values: worst relative error {worst['input.value']:.1e}")


def test_batches_run_step_by_step_give_the_rows_own_results_bitwise():
    # From 4 rows on, the batch runs step-synchronously (each weight row read once per step);
    # every row's sums are in the same order as a row run alone, so results agree bitwise.
    layer, gen = random_layer(20, 30, seed=12, input_scale=2.0)
    x = sparse_input(16, 6, 20, gen, 2.0)
    state = torch.rand(1, 6, 30, generator=gen, dtype=torch.float64)
    y, (h, o, tr) = layer(x, state)
    assert 0.05 < o.mean().item() < 0.5
    for b in range(6):
        yb, (hb, ob, trb) = layer(x[:, b:b + 1], state[:, b:b + 1])
        for whole, alone in ((y, yb), (h, hb), (o, ob), (tr, trb)):
            assert torch.equal(whole[:, b:b + 1], alone)


def test_gradients_of_a_batch_of_several_groups_equal_the_equations_for_any_thread_count():
    grads = []
    for threads in (1, 2):
        layer, gen = random_layer(12, 40, seed=21, input_scale=2.0, threads=threads)
        x = sparse_input(14, 19, 12, gen, 2.0)  # 19 rows: groups of 8, 8 and 3 in the backward
        state = torch.rand(1, 19, 40, generator=gen, dtype=torch.float64)
        activity, worst = check_against_reference(layer, x, state, gen)
        assert 0.05 <= activity <= 0.4
        grads.append([p.grad.clone() for p in (layer.kernel, layer.recurrent_kernel, layer.bias,
                                                layer.recurrent_bias, layer.thr)])
    for a, b in zip(*grads):
        assert torch.equal(a, b)
