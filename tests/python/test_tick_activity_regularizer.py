"""The activity regulariser on tick-schedule families (adjoint/activity_regularizer.hpp; docs/adjoint.md
section 4) against PyTorch autograd of the families' references, written independently: per
sample and layer, each unit's activity is its number of events over the sample's length,
    A_n = #events_n / T,   R = w mean_{l,n} (1000 A_n - target)^2 / max(target, 1)^2,
reached in the gradient straight through: each event counts |v_k| / nu with nu the mean |v| of
the layer's events in the sample, held constant. The events v are the emitted values: spikes for
LIF, the output y for the discrete EGRU, the changes of h for BMRU. The batch's value is the mean
over samples of loss + R. Cases: two layers of each, a batch of three."""
import numpy as np
import pytest
import torch

import egret
from autograd_reference import (bin_inputs, compare, held_readouts, labelled_batch, layer_params,
                                logits_of, loss_of, named_tensors, readout_params, readouts)
from test_bmru_gradients import config as bmru_config
from test_bmru_gradients import two_layers as two_bmru_layers
from test_lif_gradients import config as lif_config
from test_lif_gradients import two_layers as two_lif_layers
from test_discrete_egru_gradients import discrete_layer

POINTS, WINDOWS = [6.1, 12.0, 19.9], [(2.0, 9.5), (14.2, 20.0)]


def activity_penalty(emitted, end, weight, target_hz, units):
    """R of one sample: emitted is a list of (K, N) emitted values per layer."""
    total = 0.0
    for v in emitted:
        size = v.abs()
        events = (v.detach() != 0).to(v.dtype)
        nu = size.detach().sum() / events.sum()
        straight = (size / nu).sum(0)
        count = events.sum(0) + straight - straight.detach()  # the count, its gradient via |v|
        A = count / end
        total = total + ((1000 * A - target_hz) ** 2).sum()
    return weight * total / (units * max(target_hz, 1.0) ** 2)


def regularized_batch_equals_autograd(net, held, signed, dt, end, layers, emitted, reg):
    """egret's cross-entropy + activity regulariser of a batch of three and its gradients against
    autograd of the reference; returns the worst error per parameter and the events counted."""
    cases, samples = labelled_batch(np.random.default_rng(11), end, POINTS, WINDOWS, signed=signed)
    value, grads, stats = net.loss_and_gradient(samples, loss="softmax_cross_entropy",
                                                activity_regularizer=reg)
    ticks = int(round(end / dt))
    P0, P1 = layer_params(net, 0), layer_params(net, 1)
    W = readout_params(net)
    total, penalty, events = 0.0, 0.0, 0
    for t, ch, v, labels in cases:
        x = bin_inputs(t, ch, torch.tensor(v), dt, ticks, net.input_channels)
        y0, y1 = layers(P0, P1, x)
        o = held_readouts(y1, dt, POINTS, WINDOWS) if held else \
            readouts(y1, dt, P1["tau_o"], POINTS, WINDOWS)
        ev = [emitted(y0), emitted(y1)]
        events += sum(int((e != 0).sum()) for e in ev)
        units = sum(e.shape[1] for e in ev)
        r = activity_penalty(ev, end, reg["weight"], reg["target_hz"], units)
        penalty = penalty + float(r)
        total = total + loss_of(logits_of(o, W), "softmax_cross_entropy", labels) + r
    ref = total / len(cases)
    ref.backward()
    assert value == pytest.approx(float(ref), rel=1e-12)
    assert stats["activity_regularizer"] == pytest.approx(penalty / len(cases), rel=1e-12)
    return compare(grads, named_tensors(W, P0, P1)), events, penalty / len(cases)


def changes(h):
    return torch.diff(h, dim=0, prepend=torch.zeros_like(h[:1]))


def test_lif_spike_count_term_equals_autograd():
    dt, end, alpha_s = 0.5, 20.0, 2.0
    net = egret.Network(lif_config(4, dt, alpha_s))
    worst, spikes, penalty = regularized_batch_equals_autograd(
        net, False, False, dt, end, lambda P0, P1, x: two_lif_layers(P0, P1, x, dt, alpha_s,
                                                                    {"pairs": 0}),
        lambda s: s, {"weight": 0.7, "target_hz": 40.0})
    assert spikes > 150 and penalty > 0.01
    print(f"LIF spike-count term: {spikes} spikes, R = {penalty:.3g}, worst relative error "
          f"{max(worst.values()):.1e}")


def test_bmru_change_term_equals_autograd():
    dt, end, alpha_s = 0.5, 20.0, 1.5
    net = egret.Network(bmru_config(6, dt, alpha_s))
    worst, switches, penalty = regularized_batch_equals_autograd(
        net, True, True, dt, end, lambda P0, P1, x: two_bmru_layers(P0, P1, x, alpha_s), changes,
        {"weight": 0.5, "target_hz": 20.0})
    assert switches > 40 and penalty > 0.01
    # the term reaches the parameters: its gradient alone is not zero
    reg_only = egret.Network(bmru_config(6, dt, alpha_s))
    cases, samples = labelled_batch(np.random.default_rng(11), end, POINTS, WINDOWS, signed=True)
    _, g_with, _ = reg_only.loss_and_gradient(samples, loss="softmax_cross_entropy",
                                              activity_regularizer={"weight": 0.5,
                                                                    "target_hz": 20.0})
    _, g_without, _ = reg_only.loss_and_gradient(samples, loss="softmax_cross_entropy")
    assert np.abs(np.asarray(g_with["layer0.b_x"]) - np.asarray(g_without["layer0.b_x"])).max() > 1e-4
    print(f"BMRU change term: {switches} changes, R = {penalty:.3g}, worst relative error "
          f"{max(worst.values()):.1e}")


def test_discrete_egru_output_term_equals_autograd():
    dt, end = 0.5, 20.0
    layer = {"type": "discrete_egru", "dt": dt}
    cfg = {"precision": "double", "seed": 5, "input_channels": 5, "readout_classes": 3,
           "layers": [dict(layer, units=7, tau_o=6, threshold=0.2,
                           init={"weight_scale": 2.5, "bias_z": 0.5, "bias_spread": 0.3}),
                      dict(layer, units=4, tau_o=5, threshold=0.15,
                           init={"weight_scale": 2.5, "bias_z": 0.4})]}
    net = egret.Network(cfg)
    counts = {"pairs": 0, "zero": 0}

    def layers(P0, P1, x):
        y0 = discrete_layer(P0, x, 0.3, 0.5, counts)
        return y0, discrete_layer(P1, y0, 0.3, 0.5, counts)

    worst, events, penalty = regularized_batch_equals_autograd(
        net, False, False, dt, end, layers, lambda y: y, {"weight": 0.4, "target_hz": 30.0})
    assert events > 100 and penalty > 0.01
    print(f"discrete EGRU output term: {events} events, R = {penalty:.3g}, worst relative error "
          f"{max(worst.values()):.1e}")
