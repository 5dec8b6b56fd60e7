"""`egret estimate` and egret.estimate: energy per sample recomputed here from the trace's exact
counts (h5py) and the profile file's constants (json), with the charging rules of
docs/metrics.md written out independently; the CLI's JSON, the Python function and the group
added to the trace all agree with it."""
import json
import math

import h5py
import numpy as np
import pytest

import egret
from conftest import ROOT, run

PROFILES = ROOT / "profiles"


@pytest.fixture(scope="module")
def trace(tmp_path_factory, egret_bin):
    out = tmp_path_factory.mktemp("estimate") / "two_layer.h5"
    r = run([egret_bin, "simulate", "--config", ROOT / "examples" / "two_layer.json",
             "--input", ROOT / "examples" / "events.csv", "--trace", out])
    assert r.returncode == 0, r.stderr
    return out


def by_hand(trace_path, profile):
    """Energy [J] of the trace's single sample, per the rules of docs/metrics.md."""
    cost = lambda op: profile["costs"].get(op, {}).get("energy_pj", 0.0) * 1e-12
    with h5py.File(trace_path, "r") as f:
        layers = sorted(f["egret/metrics"].keys())
        attrs = [f[f"egret/metrics/{l}"].attrs for l in layers]
        per = [{k: int(v[0]) for k, v in f[f"egret/metrics/{l}/per_sample"].items()}
               for l in layers]
        units = [int(a["units"]) for a in attrs]
        mapping = profile.get("mapping")
        cores = [math.ceil(n / mapping["neurons_per_core"]) if mapping else 1 for n in units]
        assert all(c == 1 for c in cores)  # one core per layer: no hops between tiles
        tile = lambda core: core // mapping["cores_per_tile"] if mapping else core
        total = 0.0
        for l, (a, p) in enumerate(zip(attrs, per)):
            unit_steps = units[l] * p["steps"]
            if profile["synapses"] == "dense":
                mac, ac, gates = int(a["dense_operations_per_step"]) * p["steps"], 0, 0
            else:
                mac, ac, gates = p["synaptic_macs"], p["synaptic_acs"], p["gate_products"]
            if profile["neurons"] == "all":
                active, inactive = unit_steps, 0
            else:
                active = p["membrane_updates"]
                inactive = unit_steps - active if a["clocked"] else 0
            destinations = [l] + ([l + 1] if l + 1 < len(layers) else [])
            hops_ew = sum(abs(tile(l) % mapping["mesh_width"] - tile(d) % mapping["mesh_width"])
                          for d in destinations) if mapping else 0
            e = (mac * cost("synaptic_mac") + ac * cost("synaptic_ac")
                 + gates * cost("gate_product") + active * cost("neuron_update_active")
                 + inactive * cost("neuron_update_inactive")
                 + p["events"] * cost("spike_generation")
                 + p["events"] * len(destinations) * cost("spike_packet")
                 + p["events"] * hops_ew * cost("hop_east_west")
                 + (mac + ac) * int(a["scalar_bytes"]) / 8 * cost("weight_read_64bit")
                 + 2 * active * int(a["state_words_per_unit"]) * int(a["scalar_bytes"]) / 8
                 * cost("state_access_64bit"))
            total += e
    return total


@pytest.mark.parametrize("name", ["loihi_davies2018", "loihi_sanafe2025", "cmos45_horowitz2014",
                                  "kerasspiking_cpu", "kerasspiking_loihi"])
def test_cli_estimate_equals_a_calculation_from_the_profile(trace, egret_bin, tmp_path, name):
    profile = json.loads((PROFILES / f"{name}.json").read_text())
    out = tmp_path / "estimate.json"
    r = run([egret_bin, "estimate", trace, "--profile", name, "--json", out])
    assert r.returncode == 0, r.stderr
    assert "per sample: energy" in r.stdout
    est = json.loads(out.read_text())
    expected = by_hand(trace, profile)
    assert est["energy_j_per_sample"] == pytest.approx(expected, rel=1e-12)
    assert est["per_sample"]["energy_j"] == pytest.approx([expected], rel=1e-12)
    assert set(est["sources"]) >= set(profile["costs"])
    if any("time_ns" in c or "time_ns_by_tiles" in c for c in profile["costs"].values()):
        assert est["latency_s_per_sample"] > 0
    else:
        assert est["latency_s_per_sample"] is None
    with h5py.File(trace, "r") as f:
        g = f[f"egret/estimates/{name}"]
        assert g.attrs["energy_j_per_sample"] == pytest.approx(expected, rel=1e-12)
        assert json.loads(g.attrs["json"])["profile"] == name


def test_python_estimate_and_user_profiles(trace, tmp_path):
    assert "loihi_davies2018" in egret.hardware_profiles()
    est = egret.estimate(str(trace), "loihi_davies2018", write=False)
    profile = json.loads((PROFILES / "loihi_davies2018.json").read_text())
    assert est["energy_j_per_sample"] == pytest.approx(by_hand(trace, profile), rel=1e-12)
    assert len(est["layers"]) == 2 and est["cores"] == 2
    # A user's own file loads the same way; its errors name the file and the key.
    mine = dict(profile, name="mine")
    mine["costs"] = {"synaptic_ac": {"energy_pj": 1.0, "source": "my lab"},
                     "synaptic_mac": {"energy_pj": 2.0, "source": "my lab"}}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(mine))
    est = egret.estimate(str(trace), str(path), write=False)
    with h5py.File(trace, "r") as f:
        ops = sum(int(f[f"egret/metrics/{l}/per_sample/synaptic_acs"][0])
                  + 2 * int(f[f"egret/metrics/{l}/per_sample/synaptic_macs"][0])
                  for l in ("layer0", "layer1"))
    assert est["energy_j_per_sample"] == pytest.approx(ops * 1e-12, rel=1e-12)
    mine["costs"]["synaptic_ac"] = {"energy_pj": 1.0}
    path.write_text(json.dumps(mine))
    with pytest.raises(ValueError, match=r"mine\.json: costs\.synaptic_ac\.source: missing"):
        egret.estimate(str(trace), str(path))


def test_a_float_run_reads_its_weights_at_4_bytes(trace, egret_bin, tmp_path):
    """examples/two_layer.json runs in float (the default precision): its trace, Python's counts of
    the same run and the CMOS estimate all charge 4-byte weights and state words."""
    config = (ROOT / "examples" / "two_layer.json").read_text()
    events = np.loadtxt(ROOT / "examples" / "events.csv", delimiter=",", skiprows=1)
    net = egret.Network(config)
    assert net.precision == "float"
    r = net.simulate(events[:, 0], events[:, 1].astype(np.int64), events[:, 2], end_time=200.0)
    with h5py.File(trace, "r") as f:
        for l, counts in enumerate(r["layer_counts"]):
            a = f[f"egret/metrics/layer{l}"].attrs
            per = {k: int(v[0]) for k, v in f[f"egret/metrics/layer{l}/per_sample"].items()}
            assert int(a["scalar_bytes"]) == 4
            weight_bytes = (per["synaptic_macs"] + per["synaptic_acs"]) * 4
            assert per["synaptic_macs"] == counts["synaptic_macs"] > 0
            assert (float(a["weight_bytes_read"]) == counts["metrics"]["weight_bytes_read"]
                    == weight_bytes)
    out = tmp_path / "cmos.json"
    res = run([egret_bin, "estimate", trace, "--profile", "cmos45_horowitz2014", "--json", out])
    assert res.returncode == 0, res.stderr
    profile = json.loads((PROFILES / "cmos45_horowitz2014.json").read_text())
    est = json.loads(out.read_text())
    # by_hand reads scalar_bytes from the trace, asserted to be 4 above
    assert est["energy_j_per_sample"] == pytest.approx(by_hand(trace, profile), rel=1e-12)
