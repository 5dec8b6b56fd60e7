"""The held-output families (bmru, surnn, sugru, ds_gru, spiking_gated) below a second layer, in
the cases ordinary training reaches and the per-family tests did not: a lower unit that never
changes in a sample, a unit that changes exactly once, a lower layer silent for a whole sample
(an empty sample), and changes only at the last tick. Such units send only surrogate events
(value 0); the layer above must still return their adjoints (docs/model.md section 6, "held
inputs"). Every parameter gradient and the input values are compared in double with PyTorch
autograd of the family's equations (the references of tests/python/test_<family>_gradients.py),
through Network.loss_and_gradient and through egret.torch; DS-GRU with straight-through off has
a true derivative, checked against central differences of egret's own loss.

Each case first asserts, from egret's own events, that it is the case it claims to be."""

import numpy as np
import pytest
import torch

import egret
import egret.torch as et
from autograd_reference import (assert_events_are_changes, bin_inputs, compare, held_readouts,
                                layer_params, logits_of, loss_of, named_tensors, readout_params)
from test_bmru_gradients import bmru_layer
from test_ds_gru_gradients import ds_gru_layer
from test_spiking_gated_gradients import spiking_gated_layer
from test_sugru_gradients import sugru_layer
from test_surnn_gradients import surnn_layer

DT, END, CHANNELS, LOWER, UPPER, CLASSES = 0.5, 10.0, 5, 4, 3, 3
TICKS = int(round(END / DT))
POINTS, WINDOWS = [4.1, END], [(2.0, 7.5), (END - 1.5, END)]
SILENT, ONCE = 0, 1  # the lower layer's unit that never changes, and the one that changes once


class Family:
    """A family's two-layer configuration, its reference step, and how to shape layer 0."""

    def __init__(self, name, layers, reference, silence, change_once, rest, n_params):
        self.name, self.layers, self.reference = name, layers, reference
        self.silence, self.change_once, self.rest = silence, change_once, rest
        self.n_params = n_params  # named parameters per layer

    def config(self, seed):
        return {"precision": "double", "seed": seed, "input_channels": CHANNELS,
                "readout_classes": CLASSES, "layers": self.layers}


def _rows(P, names, i, value=0.0):
    for n in names:
        P[n][i] = value


# BMRU: z = H(|W_x x + b_x| - |W_beta x + b_beta|). Silent: no input weights, |b_x| < |b_beta|.
# Once: no input weights, |b_x| > |b_beta|: it switches to alpha at tick 1 and stays. At rest:
# b_x = 0 < |b_beta|, so a unit switches only with input.
def _bmru_silence(P, i):
    _rows(P, ["layer0.W_x", "layer0.W_beta"], i)
    P["layer0.b_x"][i], P["layer0.b_beta"][i] = 0.1, 0.5


def _bmru_once(P, i):
    _rows(P, ["layer0.W_x", "layer0.W_beta"], i)
    P["layer0.b_x"][i], P["layer0.b_beta"][i] = 0.8, 0.2


def _bmru_rest(P):
    P["layer0.b_x"][:] = 0.0
    P["layer0.b_beta"][:] = 0.3


# suRNN / suGRU: h moves only while the rhythmic gate H(g_b + sum g_alpha sin(...)) is open.
# Silent: the gate stays shut (g_b far below). Once: the gate stays open and the candidate is a
# constant (no input or recurrent weights, saturated z for suGRU), reached at tick 1. At rest:
# b = 0 (suRNN) / b_n = 0 (suGRU): from h = 0 the candidate is 0 without input.
def _gate(P, i, bias):
    P["layer0.g_b"][i] = bias
    P["layer0.g_alpha"][i] = 0.05


def _surnn_silence(P, i):
    _gate(P, i, -6.0)


def _surnn_once(P, i):
    _gate(P, i, 6.0)
    _rows(P, ["layer0.W", "layer0.V"], i)
    P["layer0.b"][i] = 0.6


def _surnn_rest(P):
    P["layer0.b"][:] = 0.0


def _sugru_once(P, i):
    _gate(P, i, 6.0)
    _rows(P, [f"layer0.{w}_{g}" for w in "WV" for g in "rzn"], i)
    P["layer0.b_z"][i] = -50.0  # z = 1.9e-22: 1 - z rounds to 1, so h = n at once, and stays
    P["layer0.b_n"][i] = 0.6


def _sugru_rest(P):
    P["layer0.b_n"][:] = 0.0


# DS-GRU: h_k = (1 - z) h~ + z tanh(W_h x~ + U_h (r h~) + b_h). Silent: no candidate weights and
# b_h = 0 (the case: d/d b_h of that unit is not 0). Once: z saturates to 1 exactly
# (b_z = 50), the candidate is the constant tanh(b_h). At rest: b_h = 0.
def _ds_gru_silence(P, i):
    _rows(P, ["layer0.W_h", "layer0.U_h"], i)
    P["layer0.b_h"][i] = 0.0


def _ds_gru_once(P, i):
    _rows(P, ["layer0.W_h", "layer0.U_h", "layer0.W_z", "layer0.U_z"], i)
    P["layer0.b_z"][i], P["layer0.b_h"][i] = 50.0, 0.6


def _ds_gru_rest(P):
    P["layer0.b_h"][:] = 0.0


# Spiking-gated (noise off, so taped and untaped runs are the same run): h moves only when the
# gate neuron spikes. Silent: the gate never spikes (b_i far below theta). Once: it spikes at
# every tick, c = 0 (b_c = 0, no W_c) and W_x x + b_x = b_x, so h = b_x from tick 1 on.
# At rest: b_x = 0, so from h = 0 nothing moves without input.
def _spiking_silence(P, i):
    _rows(P, ["layer0.W_i"], i)
    P["layer0.b_i"][i] = -5.0


def _spiking_once(P, i):
    _rows(P, ["layer0.W_i", "layer0.W_c", "layer0.W_x"], i)
    P["layer0.b_i"][i], P["layer0.b_c"][i], P["layer0.b_x"][i] = 50.0, 0.0, 0.6


def _spiking_rest(P):
    P["layer0.b_x"][:] = 0.0


def _rhythmic(kind, init):
    return [{"type": kind, "dt": DT, "units": LOWER, "surrogate": {"slope": 2.0}, "init": init,
             "gate": {"frequencies": 2, "period_min": 2, "period_max": 20, "bias": -0.2}},
            {"type": kind, "dt": DT, "units": UPPER, "surrogate": {"slope": 2.0},
             "gate": {"bias": 0.3, "period_max": 10}}]


SPIKING = [{"dt": DT, "threshold": -0.1, "noise": 0.0, "alpha_s": 1.5},
           {"dt": DT, "threshold": 0.2, "noise": 0.0, "alpha_s": 1.0}]


def _spiking_layers():
    def layer(units, s, init):
        return {"type": "spiking_gated", "units": units, "dt": s["dt"],
                "threshold": s["threshold"], "threshold_noise": s["noise"],
                "surrogate": {"alpha": s["alpha_s"]}, "init": init}
    return [layer(LOWER, SPIKING[0], {"weight_scale": 1.5, "gate_scale": 2.0, "bias_gate": 0.4,
                                      "bias_spread": 0.4, "leak": 0.4, "bias_forget": 1.0}),
            layer(UPPER, SPIKING[1], {"gate_scale": 2.0, "bias_gate": 0.6, "bias_spread": 0.3,
                                      "leak": 0.4})]


def _ds_gru_layers(straight_through):
    router = {"hidden_k": 3, "input_k": 3, "rank": 3, "straight_through": straight_through}
    return [{"type": "ds_gru", "dt": DT, "units": LOWER, "router": router,
             "init": {"weight_scale": 2.0, "bias_z": -0.5, "router_scale": 2.0},
             "params": {"tau_h": 1.5, "mu_h": 0.2, "tau_x": 0.8, "mu_x": -0.1}},
            {"type": "ds_gru", "dt": DT, "units": UPPER,
             "router": {"hidden_k": 2, "input_k": 3, "rank": 2,
                        "straight_through": straight_through},
             "init": {"bias_z": 0.5}, "params": {"tau_h": 2.0, "mu_h": -0.3}}]


def _ds_gru_reference(straight_through):
    budgets = [(3, 3), (2, 3)]
    return lambda l, P, x, seed: ds_gru_layer(P, x, *budgets[l], straight_through)


def _spiking_reference(l, P, x, seed):
    counts = {"spikes": 0, "pairs": 0, "near": 0}
    return spiking_gated_layer(P, x, SPIKING[l], seed + l, True, counts)


def _counted(f):
    return lambda l, P, x, seed: f(P, x, DT, 2.0, {"open": 0, "pairs": 0})


FAMILIES = {
    "bmru": Family("bmru", [{"type": "bmru", "dt": DT, "units": LOWER, "surrogate": {"alpha": 1.5},
                             "init": {"weight_scale": 2.0, "bias_beta": 0.3, "alpha": 0.8}},
                            {"type": "bmru", "dt": DT, "units": UPPER,
                             "surrogate": {"alpha": 1.5},
                             "init": {"weight_scale": 1.5, "bias_beta": 0.2}}],
                   lambda l, P, x, seed: bmru_layer(P, x, 1.5),
                   _bmru_silence, _bmru_once, _bmru_rest, 5),
    "surnn": Family("surnn", _rhythmic("surnn", {"weight_scale": 2.0}), _counted(surnn_layer),
                    _surnn_silence, _surnn_once, _surnn_rest, 7),
    "sugru": Family("sugru", _rhythmic("sugru", {"weight_scale": 2.0, "bias_z": -0.5}),
                    _counted(sugru_layer), _surnn_silence, _sugru_once, _sugru_rest, 13),
    "ds_gru": Family("ds_gru", _ds_gru_layers(1), _ds_gru_reference(1), _ds_gru_silence,
                     _ds_gru_once, _ds_gru_rest, 18),
    "ds_gru_exact": Family("ds_gru", _ds_gru_layers(0), _ds_gru_reference(0), _ds_gru_silence,
                           _ds_gru_once, _ds_gru_rest, 18),
    "spiking_gated": Family("spiking_gated", _spiking_layers(), _spiking_reference,
                            _spiking_silence, _spiking_once, _spiking_rest, 7),
}


def _shaped_network(family, seed, shape):
    net = egret.Network(family.config(seed))
    values = {k: np.array(v, dtype=np.float64) for k, v in net.parameters().items()}
    shape(values)
    net.set_parameters(values)
    return net


def _per_unit(family):
    def shape(P):
        family.silence(P, SILENT)
        family.change_once(P, ONCE)
    return shape


def _sample(t, ch, v, labels):
    return egret.Sample(np.asarray(t, dtype=np.float64), np.asarray(ch, dtype=np.int64),
                        np.asarray(v, dtype=np.float64), channels=CHANNELS, end_time=END,
                        readout_times=POINTS, readout_windows=WINDOWS,
                        labels=[int(x) for x in labels])


def _random_case(rng, n=40):
    t = np.sort(rng.uniform(0.01, END, n))
    v = rng.uniform(0.3, 1.5, n) * rng.choice([-1, 1], n)
    return t, rng.integers(0, CHANNELS, n), v, rng.integers(0, CLASSES, 4)


def _empty_case(rng):
    return np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0), rng.integers(0, CLASSES, 4)


def _last_tick_case(rng, n=6):
    """Events only in the last tick's bin (END - DT, END]."""
    t = np.sort(rng.uniform(END - DT + 0.01, END, n))
    v = rng.uniform(0.8, 1.5, n) * rng.choice([-1, 1], n)
    return t, rng.permutation(np.arange(n)) % CHANNELS, v, rng.integers(0, CLASSES, 4)


def _reference_loss(family, net, cases, seed, values=None):
    """PyTorch's loss of the batch (mean over samples), its leaf tensors, and each sample's
    layer-0 and layer-1 states."""
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    W = readout_params(net)
    total, states = 0, []
    for i, (t, ch, v, labels) in enumerate(cases):
        vals = values if values is not None and i == 0 else torch.tensor(v, dtype=torch.float64)
        x = bin_inputs(t, ch, vals, DT, TICKS, CHANNELS)
        h0 = family.reference(0, P0, x, seed)
        h1 = family.reference(1, P1, h0, seed)
        o = held_readouts(h1, DT, POINTS, WINDOWS)
        total = total + loss_of(logits_of(o, W), "softmax_cross_entropy", labels)
        states.append((h0, h1))
    return total / len(cases), named_tensors(W, P0, P1), states


def _lower_changes(net, case):
    """Layer 0's events in egret's own run: {unit: [tick, ...]}."""
    t, ch, v, _ = case
    r = net.simulate(t, ch, v, end_time=END)
    mine = r["layer"] == 0
    ticks = np.round(r["time"][mine] / DT).astype(int)
    out = {}
    for u, k in zip(r["unit"][mine], ticks):
        out.setdefault(int(u), []).append(int(k))
    return out, r


def _check_against_autograd(family, net, cases, seed):
    value, grads, _ = net.loss_and_gradient([_sample(*c) for c in cases],
                                            loss="softmax_cross_entropy")
    ref, tensors, states = _reference_loss(family, net, cases, seed)
    ref.backward()
    assert abs(value - float(ref)) <= 1e-12 * abs(float(ref))
    for case, (h0, h1) in zip(cases, states):  # egret's events are the reference's changes
        _, r = _lower_changes(net, case)
        assert_events_are_changes(r, 0, h0, DT)
        assert_events_are_changes(r, 1, h1, DT)
    worst = compare(grads, tensors)
    return grads, tensors, worst


@pytest.mark.parametrize("name", list(FAMILIES))
def test_a_unit_that_never_changes_and_one_that_changes_once(name):
    family, seed = FAMILIES[name], 21
    net = _shaped_network(family, seed, _per_unit(family))
    rng = np.random.default_rng(4)
    cases = [_random_case(rng) for _ in range(3)]
    for case in cases:
        changes, _ = _lower_changes(net, case)
        assert SILENT not in changes, changes
        assert changes.get(ONCE) == [1], changes
        assert len(changes) >= 3  # the other units do change
    grads, tensors, worst = _check_against_autograd(family, net, cases, seed)
    assert len(worst) == 2 * family.n_params + 2  # every parameter's gradient is nonzero
    # The silent unit's adjoint reaches its own parameters: its rows are not zero.
    for pname, g in grads.items():
        if pname.startswith("layer0.") and np.ndim(g) >= 1 and np.shape(g)[0] == LOWER:
            ref = tensors[pname].grad.numpy()
            if np.any(ref[SILENT] != 0):
                assert np.any(np.asarray(g)[SILENT] != 0), pname
    print(f"{name}: silent unit and a unit that changes once, worst relative error "
          f"{max(worst.values()):.1e} ({max(worst, key=worst.get)})")


@pytest.mark.parametrize("name", list(FAMILIES))
def test_a_silent_lower_layer_and_changes_at_the_last_tick(name):
    family, seed = FAMILIES[name], 33
    net = _shaped_network(family, seed, family.rest)
    rng = np.random.default_rng(8)
    cases = [_empty_case(rng), _last_tick_case(rng), _random_case(rng)]
    changes, _ = _lower_changes(net, cases[0])
    assert changes == {}  # the whole lower layer is silent
    changes, _ = _lower_changes(net, cases[1])
    assert changes and all(k == [TICKS] for k in changes.values()), changes
    grads, tensors, worst = _check_against_autograd(family, net, cases, seed)
    lower = [k for k in worst if k.startswith("layer0.")]
    assert len(lower) >= family.n_params - 2  # layer 0 learns from silent samples too
    print(f"{name}: a silent layer, changes at the last tick: worst relative error "
          f"{max(worst.values()):.1e} ({max(worst, key=worst.get)})")


@pytest.mark.parametrize("name", list(FAMILIES))
def test_input_values_when_the_lower_layer_changes_only_at_the_last_tick(name):
    family, seed = FAMILIES[name], 5
    net = _shaped_network(family, seed, lambda P: (family.rest(P), family.silence(P, SILENT)))
    rng = np.random.default_rng(12)
    case = _last_tick_case(rng)
    changes, _ = _lower_changes(net, case)
    assert changes and SILENT not in changes
    _, grads, _ = net.loss_and_gradient(_sample(*case), loss="softmax_cross_entropy")
    values = torch.tensor(case[2], dtype=torch.float64, requires_grad=True)
    ref, _, _ = _reference_loss(family, net, [case], seed, values)
    ref.backward()
    worst = compare(grads, {"input.value": values})
    print(f"{name}: input values, worst relative error {worst['input.value']:.1e}")


def _load_free_parameters(model, values):
    with torch.no_grad():
        for l, layer in enumerate(model.layers):
            for name in layer.free:
                getattr(layer, name).copy_(torch.as_tensor(np.asarray(values[f"layer{l}.{name}"])))
            for name in layer.positive:
                rho = et._softplus_inverse(np.asarray(values[f"layer{l}.{name}"], dtype=np.float64))
                getattr(layer, f"{name}_rho").copy_(torch.from_numpy(rho))


@pytest.mark.parametrize("name", list(FAMILIES))
def test_egret_torch_passes_the_silent_units_adjoint(name):
    family, seed = FAMILIES[name], 21
    net = _shaped_network(family, seed, _per_unit(family))
    rng = np.random.default_rng(4)
    cases = [_random_case(rng) for _ in range(2)] + [_empty_case(rng)]
    model = et.EventNetwork(family.config(seed), threads=1)
    values = net.parameters()
    _load_free_parameters(model, values)
    logits = model([_sample(*c) for c in cases])
    labels = torch.tensor(np.stack([c[3] for c in cases]))
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, CLASSES), labels.reshape(-1))
    loss.backward()
    ref, tensors, _ = _reference_loss(family, net, cases, seed)
    ref.backward()
    assert abs(float(loss) - float(ref)) <= 1e-12 * abs(float(ref))
    mine = {f"layer{l}.{n}": getattr(layer, n).grad.numpy()
            for l, layer in enumerate(model.layers) for n in layer.free}
    worst = compare(mine, {k: tensors[k] for k in mine})
    assert np.any(mine[f"layer0.{next(iter(model.layers[0].free))}"] != 0)
    print(f"{name} through egret.torch: worst relative error {max(worst.values()):.1e}")


def test_ds_gru_silent_unit_gradient_equals_central_differences():
    """Straight-through off: the top-k is locally constant, so egret's gradient is the true
    derivative of its own loss. b_h of the silent unit is the issue's case (egret returned 0)."""
    family, seed = FAMILIES["ds_gru_exact"], 21
    shape = _per_unit(family)
    net = _shaped_network(family, seed, shape)
    rng = np.random.default_rng(4)
    samples = [_sample(*_random_case(rng)) for _ in range(2)]
    _, grads, _ = net.loss_and_gradient(samples, loss="softmax_cross_entropy")
    base = {k: np.array(v, dtype=np.float64) for k, v in net.parameters().items()}
    entries = [("layer0.b_h", (SILENT,)), ("layer0.W_h", (SILENT, 2)),
               ("layer0.U_h", (SILENT, 3)), ("layer0.W_h", (SILENT, 0)),
               ("layer0.b_h", (2,)), ("layer0.W_z", (3, 1)), ("layer0.b_h", (ONCE,))]
    h, worst = 1e-3, 0.0  # the fourth-order central stencil: truncation ~h^4, rounding ~1e-16/h
    for pname, index in entries:
        def loss_at(delta):
            values = {k: v.copy() for k, v in base.items()}
            values[pname][index] += delta
            net.set_parameters(values)
            return net.loss_and_gradient(samples, loss="softmax_cross_entropy")[0]
        fd = (8 * (loss_at(h) - loss_at(-h)) - (loss_at(2 * h) - loss_at(-2 * h))) / (12 * h)
        mine = float(np.asarray(grads[pname])[index])
        assert fd != 0, (pname, index)
        err = abs(mine - fd) / max(abs(fd), 1e-8)
        worst = max(worst, err)
        assert err <= 1e-6, (pname, index, mine, fd)
    net.set_parameters(base)
    print(f"DS-GRU silent unit against central differences: worst relative error {worst:.1e}")
