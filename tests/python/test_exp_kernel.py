"""The exp gate kernel (issue 15 item 1) against an independent integrator: SciPy's solve_ivp
(DOP853, rtol = atol = 1e-12) integrates the same network as one ODE system, the gate
pre-activations included, with an event function c_n - theta_n per unit (terminal, rising).
Jumps, resets, releases and the hand-over of events to the next layer are written here from
docs/model.md, not taken from egret. Event times must agree within 1e-8 ms and the state at
snapshot times within 1e-8."""
import json

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import egret  # noqa: E402  (path set by conftest)


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def layer_config(units, tau_s, windows, seed_bias):
    return {"type": "continuous_egru", "units": units, "gate_kernel": "exp", "tau_s": tau_s,
            "tau_m": 3.0 + seed_bias, "tau_o": 5.0, "threshold": 0.3,
            "window_input": windows[0], "window_recurrent": windows[1],
            "init": {"weight_scale": 1.5, "bias_z": 0.5, "bias_spread": 0.3}}


class Reference:
    """The network as one ODE system: per layer [a_u, a_r, a_z, c] (4 N entries)."""

    def __init__(self, net, cfg):
        p = net.parameters()
        self.layers = []
        offset = 0
        for l, lc in enumerate(cfg["layers"]):
            n = lc["units"]
            g = {k: np.asarray(p[f"layer{l}.{k}"], dtype=float)
                 for k in ("U_u", "U_r", "U_z", "V_u", "V_r", "V_z", "b_u", "b_r", "b_z", "theta")}
            g.update(n=n, offset=offset, tau_m=np.asarray(p[f"layer{l}.tau_m"], dtype=float),
                     tau_s=np.asarray(p[f"layer{l}.tau_s"], dtype=float),  # per unit
                     w_in=float(lc["window_input"]), w_rec=float(lc["window_recurrent"]))
            self.layers.append(g)
            offset += 4 * n
        self.size = offset

    def view(self, y, l):
        g = self.layers[l]
        o, n = g["offset"], g["n"]
        return y[o:o + n], y[o + n:o + 2 * n], y[o + 2 * n:o + 3 * n], y[o + 3 * n:o + 4 * n]

    def rhs(self, t, y):
        d = np.empty_like(y)
        for l, g in enumerate(self.layers):
            a_u, a_r, a_z, c = self.view(y, l)
            da_u, da_r, da_z, dc = self.view(d, l)
            da_u[:] = (g["b_u"] - a_u) / g["tau_s"]
            da_r[:] = (g["b_r"] - a_r) / g["tau_s"]
            da_z[:] = (g["b_z"] - a_z) / g["tau_s"]
            dc[:] = sigmoid(a_u) * (np.tanh(a_z) - c) / g["tau_m"]
        return d

    def initial_state(self):
        y = np.zeros(self.size)
        for l, g in enumerate(self.layers):
            a_u, a_r, a_z, c = self.view(y, l)
            a_u[:], a_r[:], a_z[:], c[:] = g["b_u"], g["b_r"], g["b_z"], 0.0
        return y

    def add_input(self, y, l, k, x, pending, t, sign=1.0):
        g = self.layers[l]
        a_u, a_r, a_z, _ = self.view(y, l)
        a_u += sign * g["U_u"][:, k] * x
        a_r += sign * g["U_r"][:, k] * x
        a_z += sign * g["U_z"][:, k] * x
        if sign > 0 and np.isfinite(g["w_in"]):
            pending.append((t + g["w_in"], "input_release", l, k, x, 0.0))

    def emit(self, y, l, n, t, pending, events):
        g = self.layers[l]
        a_u, a_r, a_z, c = self.view(y, l)
        value, r = g["theta"][n], sigmoid(a_r[n])
        self.add_recurrent(y, l, n, value, r, 1.0)
        c[n] = 0.0
        events.append((t, l, n))
        if np.isfinite(g["w_rec"]):
            pending.append((t + g["w_rec"], "recurrent_release", l, n, value, r))
        if l + 1 < len(self.layers):
            self.add_input(y, l + 1, n, value, pending, t)

    def add_recurrent(self, y, l, n, value, r, sign):
        g = self.layers[l]
        a_u, a_r, a_z, _ = self.view(y, l)
        a_u += sign * g["V_u"][:, n] * value
        a_r += sign * g["V_r"][:, n] * value
        a_z += sign * g["V_z"][:, n] * r * value

    def run(self, t_in, ch_in, v_in, end, snapshot_times):
        pending = [(t, "input", 0, int(k), float(x), 0.0) for t, k, x in zip(t_in, ch_in, v_in)]
        pending += [(t, "snapshot", -1, i, 0.0, 0.0) for i, t in enumerate(snapshot_times)]
        y, t, events, snaps = self.initial_state(), 0.0, [], {}
        crossing = []
        for l, g in enumerate(self.layers):
            for n in range(g["n"]):
                def f(_, yy, l=l, n=n):
                    return self.view(yy, l)[3][n] - self.layers[l]["theta"][n]
                f.terminal, f.direction = True, 1.0
                crossing.append((f, l, n))
        while True:
            pending.sort(key=lambda e: e[0])
            t_next = pending[0][0] if pending else end
            t_stop = min(t_next, end)
            if t_stop > t:
                sol = solve_ivp(self.rhs, (t, t_stop), y, method="DOP853", rtol=1e-12, atol=1e-12,
                                events=[f for f, _, _ in crossing])
                hit = [i for i, te in enumerate(sol.t_events) if len(te)]
                if hit:
                    i = min(hit, key=lambda i: sol.t_events[i][0])
                    t, y = sol.t_events[i][0], sol.y_events[i][0].copy()
                    self.emit(y, crossing[i][1], crossing[i][2], t, pending, events)
                    continue
                t, y = t_stop, sol.y[:, -1].copy()
            if t >= end and (not pending or t_next > end):
                return events, snaps
            when, kind, l, k, x, r = pending.pop(0)
            if kind == "input":
                self.add_input(y, l, k, x, pending, when)
            elif kind == "input_release":
                self.add_input(y, l, k, x, pending, when, sign=-1.0)
            elif kind == "recurrent_release":
                self.add_recurrent(y, l, k, x, r, -1.0)
            else:
                snaps[k] = y.copy()


CASES = [  # (seed, units per layer, tau_s, windows per layer)
    (1, [3], 4.0, [(2.0, 3.0)]),
    (2, [8], 2.0, [("inf", "inf")]),
    (3, [20], 6.0, [(1.5, 2.5)]),
    (4, [6, 4], 3.0, [(2.0, "inf"), ("inf", 2.0)]),
    (5, [10, 5], 5.0, [(3.0, 3.0), (2.0, 4.0)]),
]


def spread_per_unit(net):
    """Each unit its own tau_m and tau_s (from 0.7 to 1.3 times the layer's value)."""
    p = net.parameters()
    for name in [k for k in p if k.endswith(".tau_m") or k.endswith(".tau_s")]:
        p[name] = p[name] * np.linspace(0.7, 1.3, len(p[name]))
    net.set_parameters(p)


@pytest.mark.parametrize("seed,units,tau_s,windows", CASES)
def test_exp_kernel_events_and_states_match_solve_ivp(seed, units, tau_s, windows):
    cfg = {"precision": "double", "seed": seed, "input_channels": 4,
           "layers": [layer_config(n, tau_s, w, 0.5 * l) for l, (n, w) in enumerate(zip(units,
                                                                                        windows))]}
    net = egret.Network(json.dumps(cfg))
    assert net.parameter_specs()["layer0.tau_s"][0] == "log"
    spread_per_unit(net)
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, 40, 40))
    ch = rng.integers(0, 4, 40)
    v = rng.uniform(0.5, 1.5, 40)
    snapshot_times = [12.5, 27.25, 39.0]
    got = net.simulate(t, ch, v, end_time=40.0, snapshot_times=snapshot_times)
    events, snaps = Reference(net, cfg).run(t, ch, v, 40.0, snapshot_times)

    assert len(events) >= 15, "too quiet to be a test"
    assert len(got["time"]) == len(events)
    np.testing.assert_array_equal(got["layer"], [e[1] for e in events])
    np.testing.assert_array_equal(got["unit"], [e[2] for e in events])
    worst_time = np.max(np.abs(got["time"] - np.array([e[0] for e in events])))
    assert worst_time <= 1e-8, worst_time
    ref = Reference(net, cfg)
    worst_state = 0.0
    for i in range(len(snapshot_times)):
        for l in range(len(units)):
            mine = got["snapshots"]["layers"][l]
            for name, part in zip(("a_u", "a_r", "a_z", "c"), ref.view(snaps[i], l)):
                worst_state = max(worst_state, np.max(np.abs(mine[name][i] - part)))
    assert worst_state <= 1e-8, worst_state
    print(f"exp kernel, units {units}: {len(events)} events, worst time error {worst_time:.1e} ms, "
          f"worst state error {worst_state:.1e}")


def test_exp_kernel_configuration_and_errors():
    base = {"precision": "double", "input_channels": 2,
            "layers": [{"type": "continuous_egru", "units": 3, "gate_kernel": "exp"}]}
    net = egret.Network(json.dumps(base))
    assert np.array_equal(net.parameters()["layer0.tau_s"], [5.0, 5.0, 5.0])  # the default
    assert "layer0.tau_s" not in egret.Network(json.dumps(
        {**base, "layers": [{"type": "continuous_egru", "units": 3}]})).parameters()
    bad = json.loads(json.dumps(base))
    bad["layers"][0]["gate_kernel"] = "gaussian"
    with pytest.raises(ValueError, match=r'gate_kernel: expected one of "box", "exp"'):
        egret.Network(json.dumps(bad))
    sparse = json.loads(json.dumps(base))
    sparse["layers"][0]["connectivity"] = {"recurrent": 0.5}
    v_u = egret.Network(json.dumps(sparse)).parameters()["layer0.V_u"]
    assert 0 < np.count_nonzero(v_u) < v_u.size  # sparse with the exp kernel: a sparse V


def test_exp_kernel_gradient_from_python_equals_finite_differences():
    """The exp kernel's adjoint (issue 15 item 2) through the Python module: tau_s and every
    other scalar parameter, and sampled entries of each array, against central finite
    differences of the forward pass (the C++ test AdjointFiniteDifference.ExpGateKernel covers
    input times and values and more networks). Both integrations at tolerance 1e-15."""
    layers = [layer_config(6, 3.0, (2.0, 3.0), 0.0), layer_config(4, 5.0, ("inf", 2.0), 0.5)]
    for lc in layers:
        lc["ode_tolerance"], lc["crossing_tolerance"] = 1e-15, 1e-13
    cfg = json.dumps({"precision": "double", "seed": 5, "input_channels": 4,
                      "readout_classes": 3, "layers": layers})
    rng = np.random.default_rng(5)
    t = np.sort(rng.uniform(0, 30, 30))
    ch, v = rng.integers(0, 4, 30), rng.uniform(0.5, 1.5, 30)
    s = egret.Sample(t, ch, v, channels=4, end_time=30.0, readout_times=[15.0, 30.0],
                     labels=[1, 2])
    net = egret.Network(cfg)
    spread_per_unit(net)
    _, grad, _ = net.loss_and_gradient(s)
    base = net.parameters()
    reference = net.simulate(t, ch, v, end_time=30.0)
    assert len(reference["time"]) >= 15, "too quiet to be a test"

    def loss_at(name, idx, h):
        p = {k: (np.array(x, copy=True) if not np.isscalar(x) else x) for k, x in base.items()}
        if idx is None:
            p[name] = p[name] + h
        else:
            p[name][idx] += h
        q = egret.Network(cfg)
        q.set_parameters(p)
        same = np.array_equal(q.simulate(t, ch, v, end_time=30.0)["unit"], reference["unit"])
        return q.loss_and_gradient(s)[0] if same else None

    checked, worst = 0, 0.0
    for name, value in base.items():
        if np.isscalar(value):
            entries = [None]
        else:
            entries = [tuple(rng.integers(0, n) for n in np.shape(value)) for _ in range(2)]
        for idx in entries:
            if ".V_" in name and idx[0] == idx[1]:
                continue  # without self-recurrence the diagonal of V is no parameter
            h = 1e-5 * max(1.0, abs(float(value if idx is None else value[idx])))
            f = [loss_at(name, idx, d) for d in (h, -h, h / 2, -h / 2)]
            if any(x is None for x in f):
                continue
            est = (4 * (f[2] - f[3]) / h - (f[0] - f[1]) / (2 * h)) / 3
            g = grad[name] if idx is None else grad[name][idx]
            # Relative; tiny entries absolutely, to the differences' own rounding noise.
            noise = 64 * 2.2e-16 * max(1.0, abs(f[0])) / h
            err = abs(g - est) / max(abs(g), abs(est), noise / 1e-5)
            worst = max(worst, err)
            checked += 1
            assert err <= 1e-5, f"{name}{idx}: adjoint {g} vs finite difference {est}"
    assert checked >= 40
    assert np.any(grad["layer0.tau_s"] != 0.0) and np.any(grad["layer1.tau_s"] != 0.0)
    print(f"exp kernel from Python: {checked} entries, worst relative error {worst:.1e}")


def test_exp_kernel_through_torch_trains_tau_s():
    """egret.torch with the exp kernel: torch autograd through egret's adjoint gives the
    gradient of log tau_s (train_time_constants) that central finite differences give."""
    import torch

    import egret.torch as et
    m = et.ContinuousEGRU(3, 4, gate_kernel="exp", tau_s=3.0, tau_m=3.0, threshold=0.3,
                          ode_tolerance=1e-15, train_time_constants=True, precision="double",
                          init={"weight_scale": 1.5, "bias_z": 0.5})
    rng = np.random.default_rng(0)
    t, ch = np.sort(rng.uniform(0, 20, 20)), rng.integers(0, 3, 20)
    s = egret.Sample(t, ch, np.ones(20), channels=3, end_time=20.0, readout_times=[10.0, 20.0],
                     labels=[0, 1])
    (m(s) ** 2).sum().backward()
    # log_tau holds tau_m, tau_o and tau_s of the 4 units in turn: the tau_s that matters most.
    assert m.layers[0].time_constants == ["tau_m", "tau_o", "tau_s"]
    assert m.layers[0].log_tau.shape == (12,)
    k = 8 + int(torch.argmax(m.layers[0].log_tau.grad[8:].abs()))
    g = m.layers[0].log_tau.grad[k].item()
    with torch.no_grad():
        f = []
        for d in (1e-5, -1e-5, 5e-6, -5e-6):
            m.layers[0].log_tau[k] += d
            f.append((m(s) ** 2).sum().item())
            m.layers[0].log_tau[k] -= d
    fd = (4 * (f[2] - f[3]) / 1e-5 - (f[0] - f[1]) / 2e-5) / 3
    assert abs(g) > 1e-3
    assert abs(g - fd) <= 1e-5 * abs(fd), (g, fd)


@pytest.mark.parametrize("margin", [1e-4, 1e-8])
def test_a_crossing_inside_one_integration_step_is_not_missed(margin):
    """c rises and falls back within ~1 ms (an input lifts a_z, which relaxes with tau_s = 0.3
    toward b_z = 0.2). With theta `margin` below the peak, c stays above theta for 0.03 ms
    (1e-4) or 0.3 us (1e-8); the second is shorter than an integration step, so only the bound
    on dc/dt, not a sign change at the step ends, finds it."""
    def config(theta):
        return {"precision": "double", "input_channels": 1,
                "layers": [{"type": "continuous_egru", "units": 1, "gate_kernel": "exp",
                            "tau_s": 0.3, "tau_m": 1.0, "window_input": "inf",
                            "params": {"b_u": 3.0, "b_r": 0.0, "b_z": 0.2, "U_u": [[0.0]],
                                       "U_r": [[0.0]], "U_z": [[3.0]], "V_u": [[0.0]],
                                       "V_r": [[0.0]], "V_z": [[0.0]], "theta": theta}}]}

    def rhs(t, c):  # after the input at t = 1
        a_z = 0.2 + 3.0 * np.exp(-(t - 1.0) / 0.3)
        return sigmoid(3.0) * (np.tanh(a_z) - c) / 1.0
    c_at_1 = np.tanh(0.2) * (1 - np.exp(-sigmoid(3.0) * 1.0))
    sol = solve_ivp(rhs, (1.0, 5.0), [c_at_1], method="DOP853", rtol=1e-13, atol=1e-13,
                    dense_output=True)
    # The peak (dc/dt = 0) and the first time c reaches theta = peak - margin, by brentq.
    from scipy.optimize import brentq
    t_peak = brentq(lambda t: rhs(t, sol.sol(t)[0]), 1.01, 4.0, xtol=1e-15)
    theta = sol.sol(t_peak)[0] - margin
    t_cross = brentq(lambda t: sol.sol(t)[0] - theta, 1.0, t_peak, xtol=1e-15)
    got = egret.Network(json.dumps(config(theta))).simulate(np.array([1.0]), np.array([0]),
                                                            end_time=5.0)
    assert len(got["time"]) == 1
    assert abs(got["time"][0] - t_cross) < 1e-7, got["time"][0] - t_cross
    # Just above the peak there is no crossing.
    quiet = egret.Network(json.dumps(config(theta + 2 * margin)))
    assert len(quiet.simulate(np.array([1.0]), np.array([0]), end_time=5.0)["time"]) == 0
    print(f"margin {margin}: above theta for {2 * (t_peak - t_cross) * 1e3:.3g} us, crossing "
          f"time error {abs(got['time'][0] - t_cross):.1e} ms")


def test_a_late_crossing_after_the_gates_have_settled():
    """A slow unit (u = sigmoid(-3), z settling at tanh(0.32) just above theta = 0.3) crosses
    after about 73 ms, long after its gates settled (tau_s = 0.1 ms): the search ends in the box
    kernel's closed form, which must agree with solve_ivp integrating all the way."""
    cfg = {"precision": "double", "input_channels": 1,
           "layers": [{"type": "continuous_egru", "units": 1, "gate_kernel": "exp",
                       "tau_s": 0.1, "tau_m": 1.0, "window_input": "inf",
                       "params": {"b_u": -3.0, "b_r": 0.0, "b_z": 0.32, "U_u": [[2.0]],
                                  "U_r": [[0.0]], "U_z": [[-1.0]], "V_u": [[0.0]],
                                  "V_r": [[0.0]], "V_z": [[0.0]], "theta": 0.3}}]}
    got = egret.Network(json.dumps(cfg)).simulate(np.array([0.5]), np.array([0]), end_time=200.0)

    def rhs(t, y):  # y = [a_u, a_z, c]
        return [(-3.0 - y[0]) / 0.1, (0.32 - y[1]) / 0.1,
                sigmoid(y[0]) * (np.tanh(y[1]) - y[2]) / 1.0]
    first = solve_ivp(rhs, (0.0, 0.5), [-3.0, 0.32, 0.0], method="DOP853", rtol=1e-12, atol=1e-12)
    y = first.y[:, -1] + np.array([2.0, -1.0, 0.0])  # the input at 0.5 ms
    crossing = lambda t, y: y[2] - 0.3  # noqa: E731
    crossing.terminal, crossing.direction = True, 1.0
    sol = solve_ivp(rhs, (0.5, 200.0), y, method="DOP853", rtol=1e-12, atol=1e-12,
                    events=[crossing])
    expected = sol.t_events[0]
    assert len(expected) == 1 and expected[0] > 0.5 + 40 * 0.1
    assert len(got["time"]) >= 1
    assert abs(got["time"][0] - expected[0]) < 1e-8, got["time"][0] - expected[0]


def test_with_an_endless_tau_s_the_exp_kernel_is_the_box_kernel():
    """With tau_s = 1e12 ms the gates do not relax within the 40 ms run (they move by 4e-11 of
    their distance to the bias): the exp kernel must fire the box kernel's events, with the same
    parameters, two layers, finite and infinite windows. The crossing search stops at the end
    of the run; before it did, a unit whose bias alone would lift z above theta made the search
    step through 40 tau_s at the stepper's stable step (about tau_m) and never finished."""
    layers = [layer_config(8, 1e12, (2.0, "inf"), 0.0), layer_config(5, 1e12, ("inf", 3.0), 0.5)]
    exp_cfg = {"precision": "double", "seed": 11, "input_channels": 4, "layers": layers}
    box_cfg = json.loads(json.dumps(exp_cfg))
    for lc in box_cfg["layers"]:
        del lc["gate_kernel"], lc["tau_s"]
    exp_net, box_net = egret.Network(json.dumps(exp_cfg)), egret.Network(json.dumps(box_cfg))
    values = exp_net.parameters()
    box_net.set_parameters({k: v for k, v in values.items() if not k.endswith("tau_s")})
    rng = np.random.default_rng(11)
    t = np.sort(rng.uniform(0, 40, 40))
    ch, v = rng.integers(0, 4, 40), rng.uniform(0.5, 1.5, 40)
    got = exp_net.simulate(t, ch, v, end_time=40.0)
    want = box_net.simulate(t, ch, v, end_time=40.0)
    assert len(want["time"]) >= 15, "too quiet to be a test"
    np.testing.assert_array_equal(got["layer"], want["layer"])
    np.testing.assert_array_equal(got["unit"], want["unit"])
    np.testing.assert_allclose(got["time"], want["time"], rtol=0, atol=1e-9)


def test_float_runs_follow_double_and_extreme_tolerances_finish():
    """The exp kernel integrates in double whatever the run's precision: a float run fires the
    same units at times within float rounding of the double run. The tightest tolerance the
    configuration accepts (1e-15) and a loose one (1e-3) both finish with the same events."""
    def run(precision, tolerance):
        cfg = {"precision": precision, "seed": 3, "input_channels": 4,
               "layers": [layer_config(20, 6.0, (1.5, 2.5), 0.0)]}
        cfg["layers"][0]["ode_tolerance"] = tolerance
        rng = np.random.default_rng(3)
        t = np.sort(rng.uniform(0, 40, 40))
        return egret.Network(json.dumps(cfg)).simulate(t, rng.integers(0, 4, 40),
                                                       rng.uniform(0.5, 1.5, 40), end_time=40.0)
    double = run("double", 1e-12)
    assert len(double["time"]) > 50
    for other, tolerance in ((run("float", 1e-12), 1e-5), (run("double", 1e-15), 1e-9),
                             (run("double", 1e-3), 1e-3)):
        np.testing.assert_array_equal(other["unit"], double["unit"])
        np.testing.assert_allclose(other["time"], double["time"], rtol=0, atol=tolerance)

