"""NIR graphs (docs/nir.md): import checked against NIR's equations integrated independently
here (SciPy, in NIR's own units, from the files as h5py reads them), not against egret's own
output; the NIR authors' exact simulation of a Norse graph; export of a trained LIF network and
import back, bit for bit; and hostile files, each refused with a clear error."""
import json
import pathlib
import shutil

import h5py
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import egret
from conftest import run

ROOT = pathlib.Path(__file__).resolve().parents[2]
NIR_DATA = ROOT.parent / "shared" / "data" / "nir"
REGRESSIONS = ROOT / "tests" / "fuzz" / "corpus" / "regressions" / "nir_graph"


# ---- Writing NIR files in the layout NIR documents (nir/serialization.py) ---------------------

def write_node(group, node):
    group.create_dataset("type", data=node["type"], dtype=h5py.string_dtype())
    for key, value in node.items():
        if key == "type":
            continue
        if key == "nodes":
            nodes = group.create_group("nodes")
            for name, child in value.items():
                write_node(nodes.create_group(name), child)
        elif key == "edges":
            group.create_dataset("edges", data=np.array(value, dtype=object),
                                 dtype=h5py.string_dtype())
        else:
            group.create_dataset(key, data=np.asarray(value))


def write_nir(path, nodes, edges):
    with h5py.File(path, "w") as f:
        f.create_dataset("version", data="1.0.7", dtype=h5py.string_dtype())
        write_node(f.create_group("node"), {"type": "NIRGraph", "nodes": nodes, "edges": edges})
    return path


def shape(n):
    return np.array([n], dtype=np.int64)


# ---- NIR's equations, integrated by SciPy (seconds, as in the files) ---------------------------
#
# The discretisation egret states (docs/nir.md, The time step): the input of a node is held over
# each tick (t_{k-1}, t_k]; its equations are integrated over the tick; a spiking node compares v
# with its threshold at the tick's end and resets there; a recurrent edge carries the previous
# tick's output.

def derivative(node, s):
    t = node["type"]

    def f(_, y):
        n = len(s)
        if t in ("CubaLIF", "CubaLI"):
            i, v = y[:n], y[n:]
            di = (-i + node["w_in"] * s) / node["tau_syn"]
            dv = (node["v_leak"] - v + node["r"] * i) / node["tau_mem"]
            return np.concatenate([di, dv])
        if t in ("LIF", "LI"):
            return (node["v_leak"] - y + node["r"] * s) / node["tau"]
        return node["r"] * s  # IF, I

    return f


def reference_tick(node, state, s, dt_s):
    """One tick of one node: the state (I and v, or v) after dt_s seconds of input s."""
    sol = solve_ivp(derivative(node, s), (0.0, dt_s), state, method="DOP853", rtol=1e-13,
                    atol=1e-15)
    return sol.y[:, -1]


class ReferenceLayer:
    def __init__(self, node, W, b, V=None, threshold=None, reset_scale=None):
        self.node, self.W, self.b, self.V = node, W, b, V
        self.threshold, self.reset_scale = threshold, reset_scale  # LI + Threshold
        self.units = W.shape[0]
        cuba = node["type"] in ("CubaLIF", "CubaLI")
        self.state = np.zeros(2 * self.units if cuba else self.units)
        self.y = np.zeros(self.units)
        self.closest = np.inf  # how near a threshold v came at a tick's end

    def tick(self, x, dt_s):
        s = self.W @ x + self.b
        if self.V is not None:
            s = s + self.V @ self.y
        if self.reset_scale is not None:
            s = s + self.reset_scale * self.y
        self.state = reference_tick(self.node, self.state, s, dt_s)
        v = self.state[-self.units:]
        thr = self.threshold if self.threshold is not None else self.node.get("v_threshold")
        if thr is None:
            self.y = v.copy()
            return v.copy(), np.zeros(self.units, bool)
        self.closest = min(self.closest, np.abs(v - thr).min())
        spikes = v > thr
        if self.threshold is None:  # NIR's LIF, CubaLIF, IF: reset to v_reset
            v[spikes] = self.node["v_reset"][spikes]
        self.y = spikes.astype(float)
        return v.copy(), spikes


def run_reference(layers, x_ticks, dt_ms):
    vs = [[] for _ in layers]
    spikes = [[] for _ in layers]
    for x in x_ticks:
        for i, layer in enumerate(layers):
            v, z = layer.tick(x, dt_ms / 1000.0)
            vs[i].append(v)
            spikes[i].append(z)
            x = layer.y
    return [np.array(v) for v in vs], [np.array(z) for z in spikes]


def run_egret(path, x_ticks, dt_ms, **kw):
    net = egret.Network(egret.import_nir(path, dt=dt_ms, **kw))
    k, ch = np.nonzero(x_ticks)
    t = (k + 0.5) * dt_ms  # inside tick k + 1's bin (t_k, t_{k+1}]
    ticks = len(x_ticks)
    r = net.simulate(t, ch.astype(np.int64), x_ticks[k, ch], end_time=ticks * dt_ms,
                     snapshot_times=[(i + 1) * dt_ms for i in range(ticks)])
    vs = [np.asarray(s["v"]) for s in r["snapshots"]["layers"]]
    spikes = []
    for layer in range(len(vs)):
        z = np.zeros((ticks, vs[layer].shape[1]), bool)
        sel = np.asarray(r["layer"]) == layer
        tick = np.rint(np.asarray(r["time"])[sel] / dt_ms).astype(int) - 1
        z[tick, np.asarray(r["unit"])[sel]] = True
        spikes.append(z)
    return net, vs, spikes


def compare(layers, path, x_ticks, dt_ms, spiking):
    ref_v, ref_s = run_reference(layers, x_ticks, dt_ms)
    net, v, s = run_egret(path, x_ticks, dt_ms)
    for i in range(len(layers)):
        assert np.abs(v[i] - ref_v[i]).max() <= 1e-9, (i, np.abs(v[i] - ref_v[i]).max())
        if spiking[i]:
            assert ref_s[i].sum() > 5, i  # the test exercises spikes and resets
            np.testing.assert_array_equal(s[i], ref_s[i])
            # Not decided by rounding: the reference's v stays clear of the threshold.
            assert layers[i].closest > 1e-7, (i, layers[i].closest)
    return net


rng = np.random.default_rng(39)


def uniform(*size, scale=1.0):
    return rng.uniform(-scale, scale, size)


def input_spikes(ticks, channels, rate=0.3):
    return (rng.uniform(size=(ticks, channels)) < rate).astype(float)


def test_recurrent_cubalif_and_lif_graph_matches_nir_equations(tmp_path):
    """Acceptance: a graph of CubaLIF and LIF nodes, each with a recurrent edge, written here in
    NIR's layout, runs in egret with NIR's equations: spikes at the same ticks, membrane
    potentials within 1e-9 at every tick (double)."""
    cuba = {"type": "CubaLIF", "tau_syn": rng.uniform(2e-3, 5e-3, 5),
            "tau_mem": rng.uniform(8e-3, 20e-3, 5), "r": rng.uniform(0.5, 2.0, 5),
            "v_leak": uniform(5, scale=0.1), "v_threshold": rng.uniform(0.3, 0.6, 5),
            "v_reset": uniform(5, scale=0.1), "w_in": rng.uniform(0.5, 1.5, 5)}
    lif = {"type": "LIF", "tau": rng.uniform(5e-3, 15e-3, 4), "r": rng.uniform(0.5, 2.0, 4),
           "v_leak": np.zeros(4), "v_threshold": rng.uniform(0.2, 0.4, 4),
           "v_reset": np.zeros(4)}
    W1, b1, V1 = uniform(5, 3, scale=2.0), uniform(5, scale=0.2), uniform(5, 5, scale=0.5)
    W2, V2, b2 = uniform(4, 5, scale=6.0), uniform(4, 4, scale=0.5), rng.uniform(0.1, 0.3, 4)
    nodes = {"input": {"type": "Input", "shape": shape(3)},
             "fc1": {"type": "Affine", "weight": W1, "bias": b1}, "lif1": cuba,
             "rec1": {"type": "Linear", "weight": V1},
             "fc2": {"type": "Linear", "weight": W2}, "lif2": lif,
             "rec2": {"type": "Affine", "weight": V2, "bias": b2},
             "output": {"type": "Output", "shape": shape(4)}}
    edges = [("input", "fc1"), ("fc1", "lif1"), ("lif1", "rec1"), ("rec1", "lif1"),
             ("lif1", "fc2"), ("fc2", "lif2"), ("lif2", "rec2"), ("rec2", "lif2"),
             ("lif2", "output")]
    path = write_nir(tmp_path / "recurrent.nir", nodes, edges)
    layers = [ReferenceLayer(cuba, W1, b1, V1), ReferenceLayer(lif, W2, b2, V2)]
    net = compare(layers, path, input_spikes(300, 3), 0.5, [True, True])
    assert net.layer_types == ["cuba_lif", "cuba_lif"]


def test_if_and_li_graph_matches_nir_equations(tmp_path):
    """IF (no leak: r in 1/s) into a graded LI read by the Output."""
    iff = {"type": "IF", "r": rng.uniform(100, 300, 6), "v_threshold": rng.uniform(0.5, 1, 6),
           "v_reset": uniform(6, scale=0.2)}
    li = {"type": "LI", "tau": rng.uniform(3e-3, 9e-3, 2), "r": rng.uniform(0.5, 2, 2),
          "v_leak": uniform(2, scale=0.3)}
    W1, W2, b2 = uniform(6, 2, scale=2.0), uniform(2, 6), uniform(2, scale=0.5)
    nodes = {"input": {"type": "Input", "shape": shape(2)},
             "w1": {"type": "Linear", "weight": W1}, "if": iff,
             "w2": {"type": "Affine", "weight": W2, "bias": b2}, "li": li,
             "output": {"type": "Output", "shape": shape(2)}}
    edges = [("input", "w1"), ("w1", "if"), ("if", "w2"), ("w2", "li"), ("li", "output")]
    path = write_nir(tmp_path / "if_li.nir", nodes, edges)
    layers = [ReferenceLayer(iff, W1, np.zeros(6)), ReferenceLayer(li, W2, b2)]
    net = compare(layers, path, input_spikes(200, 2), 1.0, [True, False])
    assert net.layer_types == ["cuba_lif", "cuba_li"]


def test_graded_recurrent_cubali_and_integrator_match_nir_equations(tmp_path):
    """CubaLI with a recurrent edge of its own (graded: the previous tick's v), then I."""
    cubali = {"type": "CubaLI", "tau_syn": rng.uniform(1e-3, 3e-3, 3),
              "tau_mem": rng.uniform(4e-3, 8e-3, 3), "r": rng.uniform(0.5, 2, 3),
              "v_leak": uniform(3, scale=0.2), "w_in": rng.uniform(0.5, 2, 3)}
    integrator = {"type": "I", "r": rng.uniform(10, 50, 2)}
    W1, V1, W2 = uniform(3, 4), uniform(3, 3, scale=0.3), uniform(2, 3)
    nodes = {"input": {"type": "Input", "shape": shape(4)},
             "w1": {"type": "Linear", "weight": W1}, "cubali": cubali,
             "rec": {"type": "Linear", "weight": V1},
             "w2": {"type": "Linear", "weight": W2}, "i": integrator,
             "output": {"type": "Output", "shape": shape(2)}}
    edges = [("input", "w1"), ("w1", "cubali"), ("cubali", "rec"), ("rec", "cubali"),
             ("cubali", "w2"), ("w2", "i"), ("i", "output")]
    path = write_nir(tmp_path / "graded.nir", nodes, edges)
    layers = [ReferenceLayer(cubali, W1, np.zeros(3), V1), ReferenceLayer(integrator, W2,
                                                                         np.zeros(2))]
    net = compare(layers, path, input_spikes(150, 4), 0.7, [False, False])
    assert net.layer_types == ["cuba_li", "cuba_li"]


def test_li_with_threshold_and_soft_reset_runs_as_egret_lif(tmp_path):
    """An LI and a Threshold with recurrent Linear and Scale edges (any r and v_leak) is egret's
    lif layer."""
    li = {"type": "LI", "tau": rng.uniform(5e-3, 20e-3, 5), "r": rng.uniform(0.5, 3, 5),
          "v_leak": uniform(5, scale=0.2)}
    theta = rng.uniform(0.3, 0.8, 5)
    W, b, V = uniform(5, 3, scale=2.0), uniform(5, scale=0.3), uniform(5, 5, scale=0.5)
    nodes = {"input": {"type": "Input", "shape": shape(3)},
             "w": {"type": "Affine", "weight": W, "bias": b}, "li": li,
             "spike": {"type": "Threshold", "threshold": theta},
             "rec": {"type": "Linear", "weight": V}, "reset": {"type": "Scale", "scale": -theta},
             "output": {"type": "Output", "shape": shape(5)}}
    edges = [("input", "w"), ("w", "li"), ("li", "spike"), ("spike", "rec"), ("rec", "li"),
             ("spike", "reset"), ("reset", "li"), ("spike", "output")]
    path = write_nir(tmp_path / "li_threshold.nir", nodes, edges)
    layers = [ReferenceLayer(li, W, b, V, threshold=theta, reset_scale=-theta)]
    net = compare(layers, path, input_spikes(300, 3), 1.0, [True])
    assert net.layer_types == ["lif"]


def pooling_matrix(channels, height, width, k, stride, pad):
    """SumPool2d as a matrix (outputs x inputs), written from NIR's definition."""
    out_h = (height + 2 * pad - k) // stride + 1
    out_w = (width + 2 * pad - k) // stride + 1
    m = np.zeros((channels * out_h * out_w, channels * height * width))
    for c in range(channels):
        for i in range(out_h):
            for j in range(out_w):
                for a in range(k):
                    for b in range(k):
                        y, x = i * stride - pad + a, j * stride - pad + b
                        if 0 <= y < height and 0 <= x < width:
                            m[(c * out_h + i) * out_w + j, (c * height + y) * width + x] = 1
    return m


@pytest.mark.parametrize("k,stride,pad", [(2, 2, 0), (3, 2, 1)])
def test_sum_pooling_of_a_camera_input_then_weights(k, stride, pad, tmp_path):
    """Input [2, 6, 5] (polarity, y, x: egret's camera channel order) -> SumPool2d -> Flatten ->
    Affine -> Scale -> CubaLIF: the weight nodes in a row are composed into one W."""
    pool = pooling_matrix(2, 6, 5, k, stride, pad)
    cuba = {"type": "CubaLIF", "tau_syn": np.full(4, 2e-3), "tau_mem": rng.uniform(5e-3, 9e-3, 4),
            "r": np.ones(4), "v_leak": np.zeros(4), "v_threshold": np.full(4, 0.4),
            "v_reset": np.zeros(4), "w_in": np.ones(4)}
    W, b, scale = uniform(4, pool.shape[0], scale=1.5), uniform(4, scale=0.1), rng.uniform(1, 2, 4)
    nodes = {"input": {"type": "Input", "shape": np.array([2, 6, 5])},
             "pool": {"type": "SumPool2d", "kernel_size": np.array([k, k]),
                      "stride": np.array([stride, stride]), "padding": np.array([pad, pad])},
             "flat": {"type": "Flatten", "start_dim": np.array(0), "end_dim": np.array(-1)},
             "fc": {"type": "Affine", "weight": W, "bias": b},
             "gain": {"type": "Scale", "scale": scale}, "lif": cuba,
             "output": {"type": "Output", "shape": shape(4)}}
    edges = [("input", "pool"), ("pool", "flat"), ("flat", "fc"), ("fc", "gain"),
             ("gain", "lif"), ("lif", "output")]
    path = write_nir(tmp_path / "pool.nir", nodes, edges)
    layers = [ReferenceLayer(cuba, scale[:, None] * (W @ pool), scale * b)]
    net = compare(layers, path, input_spikes(120, 60, rate=0.2), 0.5, [True])
    assert net.input_channels == 60


def test_snntorch_braille_graph_matches_nir_equations():
    """The real snnTorch export (two CubaLIF layers, the first with a recurrent Affine) at its
    training time step, dt = 1e-4 s, against the equations read from the file by h5py."""
    path = NIR_DATA / "braille_noDelay_bias_zero.nir"
    with h5py.File(path, "r") as f:
        g = f["node/nodes"]
        node = {k: {n: (np.asarray(v[()], dtype=float) if n != "type" else v[()].decode())
                    for n, v in g[k].items()} for k in g}
    layers = [ReferenceLayer(node["lif1.lif"], node["fc1"]["weight"],
                             node["fc1"]["bias"] + node["lif1.w_rec"]["bias"],
                             node["lif1.w_rec"]["weight"]),
              ReferenceLayer(node["lif2"], node["fc2"]["weight"], node["fc2"]["bias"])]
    for layer in layers:
        layer.node.setdefault("v_reset", np.zeros(layer.units))
    x = (np.random.default_rng(1).uniform(size=(200, 12)) < 0.5).astype(float)
    ref_v, ref_s = run_reference(layers, x, 0.1)
    net, v, s = run_egret(path, x, 0.1)
    assert net.layer_types == ["cuba_lif", "cuba_lif"] and net.units == [38, 7]
    for i in range(2):
        assert np.abs(v[i] - ref_v[i]).max() <= 1e-9
        np.testing.assert_array_equal(s[i], ref_s[i])
    assert ref_s[0].sum() > 5 and ref_s[1].sum() > 100
    assert min(layer.closest for layer in layers) > 1e-7


def test_norse_lif_against_the_nir_authors_exact_simulation():
    """lif_norse.nir and lif_exact.csv (NIR paper, 01_lif): the exact event-driven solution with
    the box input and the reset at the crossing time. egret (dt = 1e-4 s) agrees to 1e-9 at
    every tick before the first spike, and every spike falls in the tick whose bin holds the
    exact crossing (within one time step); after a crossing egret resets at the tick's end, so
    the traces then differ by the sub-tick timing of the reset (documented)."""
    exact = np.loadtxt(NIR_DATA / "lif_exact.csv", delimiter=",")
    x = exact[:, :1]
    net, v, s = run_egret(NIR_DATA / "lif_norse.nir", x, 0.1)
    first = np.nonzero(exact[:, 2])[0][0]
    assert np.abs(v[0][:first, 0] - exact[:first, 1]).max() <= 1e-9
    np.testing.assert_array_equal(np.nonzero(s[0][:, 0])[0], np.nonzero(exact[:, 2])[0])


def continuous_spike_times(node, W, x_ticks, dt_s):
    """NIR's CubaLIF in continuous time (input held per tick, reset at the exact crossing):
    SciPy's event location."""
    n = W.shape[0]
    y = np.zeros(2 * n)
    times = []
    for k, x in enumerate(x_ticks):
        s = W @ x
        t0, t1 = k * dt_s, (k + 1) * dt_s
        while True:
            crossing = [lambda t, y, m=m: y[n + m] - node["v_threshold"][m] for m in range(n)]
            for c in crossing:
                c.terminal, c.direction = True, 1
            sol = solve_ivp(derivative(node, s), (t0, t1), y, method="DOP853", rtol=1e-12,
                            atol=1e-14, events=crossing)
            y = sol.y[:, -1]
            hit = [m for m in range(n) if len(sol.t_events[m])]
            if not hit:
                break
            m = hit[0]
            times.append((m, sol.t_events[m][0]))
            y = sol.y_events[m][0].copy()
            y[n + m] = node["v_reset"][m]
            t0 = sol.t_events[m][0]
    return times


def test_cubalif_spike_times_within_one_tick_of_continuous_time(tmp_path):
    cuba = {"type": "CubaLIF", "tau_syn": np.array([2e-3, 4e-3]),
            "tau_mem": np.array([10e-3, 6e-3]), "r": np.array([1.0, 1.5]),
            "v_leak": np.zeros(2), "v_threshold": np.array([0.25, 0.3]),
            "v_reset": np.zeros(2), "w_in": np.array([1.0, 0.8])}
    W = np.array([[3.0, 1.0], [0.5, 2.5]])
    nodes = {"input": {"type": "Input", "shape": shape(2)},
             "w": {"type": "Linear", "weight": W}, "lif": cuba,
             "output": {"type": "Output", "shape": shape(2)}}
    path = write_nir(tmp_path / "cuba.nir", nodes,
                     [("input", "w"), ("w", "lif"), ("lif", "output")])
    dt_ms = 0.25
    x = input_spikes(200, 2, rate=0.4)
    _, _, s = run_egret(path, x, dt_ms)
    exact = continuous_spike_times(cuba, W, x, dt_ms / 1000.0)
    assert len(exact) > 10
    for m in range(2):
        egret_t = (np.nonzero(s[0][:, m])[0] + 1) * dt_ms
        exact_t = np.array([t for u, t in exact if u == m]) * 1000.0
        # egret resets at the tick's end, so a train can slip; compare the first spikes, where
        # both start from the same state, and the counts.
        assert 0 <= egret_t[0] - exact_t[0] < dt_ms
        assert abs(len(egret_t) - len(exact_t)) <= len(exact_t) // 5 + 1


# ---- Export and import back --------------------------------------------------------------------

def trained_lif_checkpoint(egret_bin, tmp_path):
    out = tmp_path / "trained"
    r = run([egret_bin, "train", "--config", ROOT / "examples" / "delay_copy_lif.json",
             "--epochs", "3", "--out", out])
    assert r.returncode == 0, r.stderr
    return out / "checkpoint.h5"


def nir_datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()])
                     if isinstance(obj, h5py.Dataset) else None)
    return out


def test_trained_lif_round_trip_is_bit_for_bit(egret_bin, tmp_path):
    """Export of a trained LIF network (egret train, 3 epochs) and import back: the same
    parameters and the same events bit for bit; exporting the imported configuration writes the
    same graph."""
    ckpt = trained_lif_checkpoint(egret_bin, tmp_path)
    r = run([egret_bin, "export-nir", ckpt, tmp_path / "lif.nir"])
    assert r.returncode == 0, r.stderr
    r = run([egret_bin, "import-nir", tmp_path / "lif.nir", tmp_path / "lif.json"])
    assert r.returncode == 0, r.stderr
    original = egret.Network.load_checkpoint(str(ckpt))
    imported = egret.Network((tmp_path / "lif.json").read_text())
    assert imported.layer_types == ["lif"] and imported.precision == original.precision
    p, q = original.parameters(), imported.parameters()
    assert p.keys() == q.keys()
    for name in p:
        a, b = np.asarray(p[name], dtype=float), np.asarray(q[name], dtype=float)
        assert a.tobytes() == b.tobytes(), name
    for sample in egret.delay_copy_trials(8, 5):
        x, y = (net.simulate(sample.t, sample.channel, sample.value, end_time=60.0,
                             readout_times=[50.0]) for net in (original, imported))
        for key in ("time", "layer", "unit", "value"):
            assert np.asarray(x[key]).tobytes() == np.asarray(y[key]).tobytes()
        assert np.asarray(x["logits"]).tobytes() == np.asarray(y["logits"]).tobytes()
    egret.export_nir(str(tmp_path / "lif.json"), str(tmp_path / "again.nir"))
    first, again = nir_datasets(tmp_path / "lif.nir"), nir_datasets(tmp_path / "again.nir")
    assert first.keys() == again.keys()
    for name in first:
        a, b = np.asarray(first[name]), np.asarray(again[name])
        if a.dtype == object:  # strings
            assert a.tolist() == b.tolist(), name
        else:
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name


def test_a_network_object_exports_its_current_parameters(tmp_path):
    """egret.export_nir(Network): the parameters set from Python, not the configuration's."""
    net = egret.Network((ROOT / "examples" / "delay_copy_lif.json").read_text())
    p = net.parameters()
    net.set_parameters({"layer0.theta": p["layer0.theta"] * 1.5})
    egret.export_nir(net, str(tmp_path / "net.nir"))
    back = egret.Network(egret.import_nir(str(tmp_path / "net.nir")))
    assert np.asarray(back.parameters()["layer0.theta"]).tobytes() == \
        np.asarray(net.parameters()["layer0.theta"]).tobytes()


def test_exported_lif_graph_is_nir_layout(tmp_path):
    """What egret writes is NIR's layout: types and edges as strings, LI + Threshold with the
    soft reset as a Scale of -theta, the readout as an LI trace and an Affine."""
    egret.export_nir(str(ROOT / "examples" / "delay_copy_lif.json"), str(tmp_path / "g.nir"))
    with h5py.File(tmp_path / "g.nir", "r") as f:
        assert f["version"][()].decode() and f["node/type"][()] == b"NIRGraph"
        nodes = f["node/nodes"]
        types = {k: nodes[k]["type"][()].decode() for k in nodes}
        assert types == {"input": "Input", "layer0.input": "Affine", "layer0.membrane": "LI",
                         "layer0.spikes": "Threshold", "layer0.reset": "Scale",
                         "layer0.recurrent": "Linear", "readout.trace": "LI",
                         "readout": "Affine", "output": "Output"}
        theta = nodes["layer0.spikes/threshold"][()]
        np.testing.assert_array_equal(nodes["layer0.reset/scale"][()], -theta)
        tau = nodes["layer0.membrane/tau"][()]
        np.testing.assert_array_equal(tau, 20.0 / 1000)  # tau_mem 20 ms in seconds
        np.testing.assert_array_equal(nodes["layer0.membrane/r"][()],
                                      1 / (1 - np.exp(-1.0 / 20.0)))
        edges = {tuple(e.decode() for e in row) for row in f["node/edges"][()]}
        assert ("layer0.spikes", "layer0.reset") in edges and ("readout", "output") in edges


@pytest.mark.parametrize("synapse,leak", [(True, True), (False, True), (False, False)])
def test_cuba_layers_round_trip(synapse, leak, tmp_path):
    """cuba_lif into cuba_li with a readout: export and import give the same network (time
    constants bit for bit; a leak-free r in 1/s may come back one unit in the last place off),
    and the graph uses NIR's own node for each combination."""
    cfg = {"input_channels": 3, "precision": "double", "readout_classes": 2,
           "layers": [{"type": "cuba_lif", "units": 4, "dt": 0.5, "synapse": synapse,
                       "leak": leak, "tau_syn": 3.3, "tau_mem": 7.7, "tau_o": 4.0,
                       "params": {"r": [0.3, 1.7, 2.9, 123.456], "v_reset": [0, -0.1, 0, 0.2]}},
                      {"type": "cuba_li", "units": 2, "dt": 0.5, "synapse": synapse,
                       "leak": leak}]}
    egret.export_nir(cfg, str(tmp_path / "cuba.nir"))
    with h5py.File(tmp_path / "cuba.nir", "r") as f:
        types = [f[f"node/nodes/layer{i}.neuron/type"][()].decode() for i in (0, 1)]
    assert types == {(True, True): ["CubaLIF", "CubaLI"], (False, True): ["LIF", "LI"],
                     (False, False): ["IF", "I"]}[(synapse, leak)]
    back = egret.import_nir(str(tmp_path / "cuba.nir"))
    a, b = egret.Network(cfg), egret.Network(back)
    assert b.layer_types == ["cuba_lif", "cuba_li"]
    for name, value in a.parameters().items():
        x, y = np.asarray(value, dtype=float), np.asarray(b.parameters()[name], dtype=float)
        if leak or not name.endswith(".r"):
            assert x.tobytes() == y.tobytes(), name
        else:
            assert np.all(np.abs(x - y) <= np.spacing(np.abs(x))), name
    for trial in egret.delay_copy_trials(3, 4):
        ra, rb = (n.simulate(trial.t, trial.channel, trial.value, end_time=trial.end_time,
                             readout_windows=trial.readout_windows) for n in (a, b))
        if leak:
            assert np.asarray(ra["time"]).tobytes() == np.asarray(rb["time"]).tobytes()
        else:
            np.testing.assert_allclose(ra["logits"], rb["logits"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("family", ["continuous_egru", "discrete_egru", "bmru", "surnn",
                                   "sugru", "ds_gru", "spiking_gated", "evnn_egru"])
def test_families_nir_cannot_express_are_refused_or_extension_nodes(family, egret_bin, tmp_path):
    cfg = {"input_channels": 3, "precision": "double",
           "layers": [{"type": family, "units": 4}], "readout_classes": 2}
    (tmp_path / "net.json").write_text(json.dumps(cfg))
    r = run([egret_bin, "export-nir", tmp_path / "net.json", tmp_path / "x.nir"])
    assert r.returncode == 1 and f"layer 0 ({family}): NIR cannot express it exactly: NIR has no" \
        in r.stderr, r.stderr
    assert "--extension" in r.stderr and not (tmp_path / "x.nir").exists()
    r = run([egret_bin, "export-nir", tmp_path / "net.json", tmp_path / "x.nir", "--extension"])
    assert r.returncode == 0, r.stderr
    with h5py.File(tmp_path / "x.nir", "r") as f:
        assert f["node/nodes/layer0.egret/type"][()].decode() == "egret." + family
    back = egret.import_nir(str(tmp_path / "x.nir"))
    a, b = egret.Network(cfg), egret.Network(back)
    for name, value in a.parameters().items():
        assert np.asarray(value).tobytes() == np.asarray(b.parameters()[name]).tobytes(), name


def test_su_snn_exports_as_lif_only_when_its_gates_never_close(tmp_path):
    base = {"input_channels": 2, "precision": "double",
            "layers": [{"type": "su_snn", "units": 3, "gate": {"amplitude": 0.1, "bias": 1.0}}]}
    egret.export_nir(base, str(tmp_path / "open.nir"))
    back = egret.Network(egret.import_nir(str(tmp_path / "open.nir")))
    assert back.layer_types == ["lif"]
    original = egret.Network(base)
    for t in (egret.delay_copy_trials(3, 1)):
        ch = np.minimum(t.channel, 1)
        a, b = (n.simulate(t.t, ch, t.value, end_time=60.0) for n in (original, back))
        assert np.asarray(a["time"]).tobytes() == np.asarray(b["time"]).tobytes()
    closing = json.loads(json.dumps(base))
    closing["layers"][0]["gate"]["bias"] = 0.0
    with pytest.raises(ValueError, match="rhythmic gate.*gate can close"):
        egret.export_nir(closing, str(tmp_path / "closing.nir"))


# ---- Hostile files -----------------------------------------------------------------------------

def base_graph():
    nodes = {"input": {"type": "Input", "shape": shape(2)},
             "w": {"type": "Affine", "weight": np.ones((3, 2)), "bias": np.zeros(3)},
             "lif": {"type": "LIF", "tau": np.full(3, 0.01), "r": np.ones(3),
                     "v_leak": np.zeros(3), "v_threshold": np.ones(3)},
             "output": {"type": "Output", "shape": shape(3)}}
    return nodes, [("input", "w"), ("w", "lif"), ("lif", "output")]


def hostile_graphs():
    """(name, nodes, edges, what the error must say)."""
    out = []

    def variant(name, what, change):
        nodes, edges = base_graph()
        changed = change(nodes, edges)
        edges = changed if isinstance(changed, list) else edges
        out.append((name, nodes, edges, what))

    variant("bias_shape", "'bias' has shape [4], expected [3]",
            lambda n, e: n["w"].update(bias=np.zeros(4)))
    variant("missing_tau", "missing dataset 'tau'", lambda n, e: n["lif"].pop("tau"))
    variant("nan_weight", "'weight' holds nan at index 3",
            lambda n, e: n["w"]["weight"].__setitem__((1, 1), np.nan))
    variant("inf_threshold", "'v_threshold' holds inf",
            lambda n, e: n["lif"]["v_threshold"].__setitem__(0, np.inf))
    variant("parameter_shapes_differ", "'r' has shape [2], 'tau' [3]",
            lambda n, e: n["lif"].update(r=np.ones(2)))
    variant("edge_to_nowhere", "names node 'ghost', which this graph does not have",
            lambda n, e: e + [("lif", "ghost")])
    variant("weights_do_not_fit", "its weights are 3 x 2, but it connects 3 values",
            lambda n, e: n.update(input={"type": "Input", "shape": shape(3)}))

    def loop(n, e):
        n["a"] = {"type": "Linear", "weight": np.eye(3)}
        n["b"] = {"type": "Linear", "weight": np.eye(3)}
        return e + [("a", "b"), ("b", "a")]
    variant("instantaneous_loop", "has no neuron in it: an instantaneous loop", loop)

    def delay(n, e):
        n["d"] = {"type": "Delay", "delay": np.full(3, 1e-3)}
        n["r"] = {"type": "Linear", "weight": np.eye(3)}
        return e + [("lif", "d"), ("d", "r"), ("r", "lif")]
    variant("delay_in_cycle", "egret has no delay on an edge", delay)
    variant("unknown_type", "'Quux' is not a NIR node type",
            lambda n, e: n.update(lif={"type": "Quux", "tau": np.ones(3)}))
    variant("conv_node", "egret cannot run a Conv2d node",
            lambda n, e: n.update(w={"type": "Conv2d", "weight": np.ones((3, 2, 1, 1)),
                                     "stride": 1, "padding": 0, "dilation": 1, "groups": 1,
                                     "bias": np.zeros(3)}))
    variant("two_inputs", "2 Input nodes",
            lambda n, e: n.update(input2={"type": "Input", "shape": shape(2)}))
    variant("tau_too_small", "node 'lif' (LIF): egret cannot run the imported network: layer 0 "
            "(cuba_lif): cuba_lif layer: tau_mem[0]: 1e-06 is outside [0.001, inf)",
            lambda n, e: n["lif"]["tau"].__setitem__(0, 1e-9))
    variant("huge_input_shape", "claims more than 1e9 elements",
            lambda n, e: n.update(input={"type": "Input", "shape": np.array([1 << 40])}))
    variant("negative_shape", "expected integers >= 1",
            lambda n, e: n.update(input={"type": "Input", "shape": np.array([-2])}))
    variant("unexpected_dataset", "unexpected dataset 'v_rest'",
            lambda n, e: n["lif"].update(v_rest=np.zeros(3)))
    return out


def write_hostile(path, nodes, edges):
    write_nir(path, nodes, edges)


HOSTILE = hostile_graphs()


@pytest.mark.parametrize("name,nodes,edges,what", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_graph_gives_a_clear_error(name, nodes, edges, what, egret_bin, tmp_path):
    path = write_nir(tmp_path / f"{name}.nir", nodes, edges)
    r = run([egret_bin, "import-nir", path, tmp_path / "out.json", "--dt", "1"])
    assert r.returncode == 1, (name, r.stdout)
    assert str(path) in r.stderr and what in r.stderr, (name, r.stderr)
    assert not (tmp_path / "out.json").exists()
    # The same file is kept in the fuzz corpus (tests/fuzz/make_seeds.py writes it).
    assert (REGRESSIONS / f"{name}.nir").exists(), name


def test_the_subgraph_file_nir_itself_rejects_is_refused_by_name(egret_bin, tmp_path):
    path = NIR_DATA / "braille_noDelay_bias_zero_subgraph.nir"
    r = run([egret_bin, "import-nir", path, tmp_path / "out.json", "--dt", "0.1"])
    assert r.returncode == 1
    assert f"{path}:/node/nodes/lif1/edges[0]: the edge (input, lif) names node 'lif', which " \
        "this graph does not have (its nodes: input, lif1, lin, output)" in r.stderr, r.stderr


def test_nested_graph_is_read_through_its_input_and_output(tmp_path):
    """A recurrent layer as a nested NIRGraph (NIR's subgraph form, with correct names) runs as
    the flat graph does."""
    src = NIR_DATA / "braille_noDelay_bias_zero_subgraph.nir"
    fixed = tmp_path / "subgraph_fixed.nir"
    shutil.copy(src, fixed)
    with h5py.File(fixed, "r+") as f:
        edges = f["node/nodes/lif1/edges"][()]
        del f["node/nodes/lif1/edges"]
        f["node/nodes/lif1"].create_dataset(
            "edges", data=np.array([[b"lif1" if e == b"lif" else e for e in row]
                                    for row in edges], dtype=object),
            dtype=h5py.string_dtype())
    nested = egret.import_nir(str(fixed), dt=0.1)
    flat = egret.import_nir(str(NIR_DATA / "braille_noDelay_bias_zero.nir"), dt=0.1)
    assert nested == flat


def test_every_regression_file_gives_a_clear_error(egret_bin, tmp_path):
    files = sorted(REGRESSIONS.glob("*.nir"))
    assert len(files) >= len(HOSTILE)
    for path in files:
        r = run([egret_bin, "import-nir", path, tmp_path / "out.json", "--dt", "1"])
        assert r.returncode == 1 and str(path) in r.stderr, (path, r.stderr)


def test_graph_from_another_tool_needs_a_time_step(egret_bin, tmp_path):
    r = run([egret_bin, "import-nir", NIR_DATA / "lif_rockpool.nir", tmp_path / "x.json"])
    assert r.returncode == 1
    assert "does not say egret's time step (no egret_dt_ms metadata): give the tick interval " \
        "(egret import-nir --dt MS)" in r.stderr
    r = run([egret_bin, "import-nir", NIR_DATA / "lif_rockpool.nir", tmp_path / "x.json", "--dt",
             "0.1"])
    assert r.returncode == 0, r.stderr
    cfg = json.loads((tmp_path / "x.json").read_text())
    # Linear 0.04 into r = 24.019737 (float32 in the file), tau 2.5 ms (float32).
    assert cfg["layers"][0]["params"]["W"] == [[float(np.float32(0.04))]]
    assert cfg["layers"][0]["params"]["r"] == [float(np.float32(24.019737))]
