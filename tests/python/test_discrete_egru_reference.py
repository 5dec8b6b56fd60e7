"""The discrete-time EGRU forward pass (docs/model.md section 4, paper convention) against an
independent PyTorch implementation of the same equations in double precision (docs/architecture.md, "Verification standards"):
dense tensors, every unit every tick, inputs binned into (t_{k-1}, t_k]. Compared: every emitted
event (layer, tick, unit, value) and the readout of the output trace."""
import numpy as np
import torch

import egret


def torch_discrete_layer(p, x):
    """x: (K, D) summed inputs per tick -> (K, N) outputs y_k, by the equations, densely."""
    P = {k: torch.tensor(v, dtype=torch.float64) for k, v in p.items() if not np.isscalar(v)}
    n = P["theta"].shape[0]
    c = torch.zeros(n, dtype=torch.float64)
    y = torch.zeros(n, dtype=torch.float64)
    out = []
    for xk in x:
        u = torch.sigmoid(P["U_u"] @ xk + P["V_u"] @ y + P["b_u"])
        r = torch.sigmoid(P["U_r"] @ xk + P["V_r"] @ y + P["b_r"])
        z = torch.tanh(P["U_z"] @ xk + P["V_z"] @ (r * y) + P["b_z"])
        c = u * z + (1 - u) * c - y
        y = torch.where(c - P["theta"] > 0, c, torch.zeros_like(c))
        out.append(y)
    return torch.stack(out)


def bin_events(t, ch, v, dt, ticks, channels):
    x = torch.zeros(ticks, channels, dtype=torch.float64)
    k = np.maximum(np.ceil(np.asarray(t) / dt).astype(int), 1)  # (t_{k-1}, t_k]; t = 0 -> tick 1
    for kk, c, val in zip(k, ch, v):
        x[kk - 1, int(c)] += val
    return x


def layer_params(net, l):
    prefix = f"layer{l}."
    return {k[len(prefix):]: v for k, v in net.parameters().items() if k.startswith(prefix)}


def events_of(y, dt, layer):
    k, unit = np.nonzero(y.numpy())
    return sorted(((layer, (kk + 1) * dt, int(u)), float(y[kk, u])) for kk, u in zip(k, unit))


def egret_events(r, layer):
    m = r["layer"] == layer
    return sorted(((layer, float(t), int(u)), float(val))
                  for t, u, val in zip(r["time"][m], r["unit"][m], r["value"][m]))


def compare(mine, ref):
    assert [k for k, _ in mine] == [k for k, _ in ref]
    worst = max(abs(a - b) for (_, a), (_, b) in zip(mine, ref))
    assert worst < 1e-10, worst
    return worst


def test_two_discrete_layers_equal_the_torch_equations():
    dt, end, channels = 0.5, 30.0, 6
    cfg = {"precision": "double", "seed": 11, "input_channels": channels, "readout_classes": 3,
           "layers": [{"type": "discrete_egru", "units": 8, "dt": dt, "tau_o": 7, "threshold": 0.2,
                       "init": {"weight_scale": 2.5, "bias_z": 0.5, "bias_spread": 0.3}},
                      {"type": "discrete_egru", "units": 5, "dt": dt, "tau_o": 9, "threshold": 0.15,
                       "init": {"weight_scale": 2.5, "bias_z": 0.4}}]}
    net = egret.Network(cfg)
    rng = np.random.default_rng(4)
    n = 150
    t = np.sort(rng.uniform(0, end, n))
    t[:3] = [0.0, 0.5, 0.5]  # t = 0 goes to tick 1; an event exactly on a tick belongs to it
    ch, v = rng.integers(0, channels, n), rng.uniform(0.2, 1.5, n)
    r = net.simulate(t, ch, v, end_time=end, readout_times=[end])
    ticks = int(round(end / dt))
    y0 = torch_discrete_layer(layer_params(net, 0), bin_events(t, ch, v, dt, ticks, channels))
    y1 = torch_discrete_layer(layer_params(net, 1), y0)  # layer 1 consumes y0 at the same tick
    w0 = compare(egret_events(r, 0), events_of(y0, dt, 0))
    w1 = compare(egret_events(r, 1), events_of(y1, dt, 1))
    assert len(egret_events(r, 0)) > 40 and len(egret_events(r, 1)) > 20
    # readout of the last layer's output trace at the end: sum of y_k exp(-(T - t_k) / tau_o)
    times = dt * torch.arange(1, ticks + 1, dtype=torch.float64)
    o = (y1 * torch.exp(-(end - times) / 9.0)[:, None]).sum(0).numpy()
    np.testing.assert_allclose(r["readouts"][0], o, rtol=1e-12, atol=1e-14)
    p = net.parameters()
    np.testing.assert_allclose(r["logits"][0], p["readout.W_o"] @ o + p["readout.b_o"], rtol=1e-12,
                               atol=1e-14)
    print(f"discrete EGRU vs torch: {len(egret_events(r, 0))} + {len(egret_events(r, 1))} events, "
          f"worst value difference {max(w0, w1):.1e}")


def test_discrete_layer_fed_by_a_continuous_layer_equals_the_torch_equations():
    dt, end, channels = 1.0, 40.0, 4
    cfg = {"precision": "double", "seed": 5, "input_channels": channels,
           "layers": [{"type": "continuous_egru", "units": 6, "tau_m": 5, "tau_o": 6,
                       "window_input": 3, "window_recurrent": 2, "threshold": 0.3,
                       "init": {"weight_scale": 1.5, "bias_z": 0.8, "bias_spread": 0.3}},
                      {"type": "discrete_egru", "units": 5, "dt": dt, "tau_o": 5, "threshold": 0.1,
                       "init": {"weight_scale": 2.0, "bias_z": 0.3}}]}
    net = egret.Network(cfg)
    rng = np.random.default_rng(2)
    t = np.sort(rng.uniform(0, end, 300))
    r = net.simulate(t, rng.integers(0, channels, 300), rng.uniform(0.5, 1.5, 300), end_time=end)
    m0 = r["layer"] == 0
    assert m0.sum() > 30
    # the continuous layer's events (value y at their exact times) are the discrete layer's input
    x = bin_events(r["time"][m0], r["unit"][m0], r["value"][m0], dt, int(end / dt), 6)
    y1 = torch_discrete_layer(layer_params(net, 1), x)
    compare(egret_events(r, 1), events_of(y1, dt, 1))
    assert len(egret_events(r, 1)) > 20
