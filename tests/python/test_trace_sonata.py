"""egret's HDF5 traces opened with h5py, checked against the SONATA spike-file layout
(docs/formats.md) and egret's own additions; and the HDF5 checkpoints of `egret train`."""
import json

import h5py
import numpy as np
import pytest

from conftest import run


@pytest.fixture(scope="module")
def trace(egret_bin, root, tmp_path_factory):
    d = tmp_path_factory.mktemp("trace")
    cfg = json.loads((root / "examples" / "two_layer.json").read_text())
    cfg["simulation"]["snapshot_times"] = [50, 100, 150]
    (d / "net.json").write_text(json.dumps(cfg))
    out = d / "run.h5"
    r = run([egret_bin, "simulate", "--config", d / "net.json", "--input",
             root / "examples" / "events.csv", "--trace", out])
    assert r.returncode == 0, r.stderr
    n_written = int(r.stdout.split("trace: ")[1].split(" events")[0])
    return out, cfg, n_written


def test_root_attributes(trace):
    path, _, _ = trace
    with h5py.File(path, "r") as f:
        assert f.attrs["magic"] == 0x0A7A
        assert f.attrs["magic"].dtype == np.uint32
        assert np.asarray(f.attrs["version"]).dtype == np.uint32
        assert list(f.attrs["version"]) == [0, 1]
        assert f.attrs["egret_format"] == "egret-trace"
        assert f.attrs["egret_format_version"] == 2


def test_sonata_spike_groups(trace):
    path, cfg, n_written = trace
    total = 0
    with h5py.File(path, "r") as f:
        assert sorted(f["spikes"].keys()) == [f"layer{i}" for i in range(len(cfg["layers"]))]
        for i, layer in enumerate(cfg["layers"]):
            g = f[f"spikes/layer{i}"]
            ts, ids = g["timestamps"], g["node_ids"]
            assert ts.dtype == np.float64
            assert ids.dtype == np.uint64
            assert ts.attrs["units"] == "ms"
            assert ts.shape == ids.shape and ts.ndim == 1
            # sorting: an HDF5 enum over uint8 with SONATA's names and values
            sort_type = g.attrs.get_id("sorting").dtype
            mapping = h5py.check_enum_dtype(sort_type)
            assert mapping == {"none": 0, "by_id": 1, "by_time": 2}
            assert sort_type == np.uint8
            assert g.attrs["sorting"] == mapping["by_time"]
            t = ts[()]
            assert np.all(np.diff(t) >= 0), "timestamps not sorted by time although sorting = by_time"
            assert np.all((ids[()] >= 0) & (ids[()] < layer["units"]))
            assert t.size == 0 or (t[0] >= 0 and t[-1] <= cfg["simulation"]["end_time"])
            # large tables are chunked and compressed
            assert ts.chunks is not None and ts.compression == "gzip" and ts.shuffle
            assert f[f"egret/events/layer{i}/values"].shape == ts.shape
            total += ts.shape[0]
    assert total == n_written


def test_samples_metrics_snapshots_provenance(trace):
    path, cfg, _ = trace
    with h5py.File(path, "r") as f:
        s = f["egret/samples"]
        assert list(s["start_time"][()]) == [0.0]
        assert list(s["duration"][()]) == [cfg["simulation"]["end_time"]]
        for i in range(len(cfg["layers"])):
            off = s[f"offsets/layer{i}"][()]
            assert off[0] == 0 and off[-1] == f[f"spikes/layer{i}/timestamps"].shape[0]
            m = f[f"egret/metrics/layer{i}"].attrs
            assert m["events"] == f[f"spikes/layer{i}/timestamps"].shape[0]
            assert m["units"] == cfg["layers"][i]["units"]
            assert 0 < m["Effective_MACs"] + m["Effective_ACs"] <= m["Dense"]
            per = f[f"egret/metrics/layer{i}/per_sample"]
            assert per["events"][()].tolist() == [m["events"]]
            assert per["synaptic_macs"][()][0] + per["gate_products"][()][0] == m["Effective_MACs"]
        assert f["egret/metrics/layer1"].attrs["type"] == "discrete_egru"
        assert 0 <= f["egret/metrics/layer1"].attrs["ActivationSparsity"] <= 1
        assert list(f["egret/snapshots/time"][()]) == [50.0, 100.0, 150.0]
        assert f["egret/snapshots/layer0/c"].shape == (3, cfg["layers"][0]["units"])
        p = f["egret/provenance"].attrs
        assert json.loads(p["configuration"])["seed"] == cfg["seed"]
        assert p["seed"] == cfg["seed"]
        assert "simulate" in p["command_line"]
        assert p["utc_time"].endswith("Z")
        assert p["egret_version"] and p["git_revision"]


def test_inspect_summarises_and_rejects_foreign_files(egret_bin, trace, tmp_path):
    path, _, _ = trace
    r = run([egret_bin, "inspect", path])
    assert r.returncode == 0, r.stderr
    assert "layer0" in r.stdout and "by_time" in r.stdout
    foreign = tmp_path / "foreign.h5"
    with h5py.File(foreign, "w") as f:
        f["x"] = np.arange(3)
    r = run([egret_bin, "inspect", foreign])
    assert r.returncode != 0 and "not an egret trace" in r.stderr
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"\x00" * 100)
    r = run([egret_bin, "inspect", bad])
    assert r.returncode != 0 and "not an HDF5 file" in r.stderr
    r = run([egret_bin, "inspect", tmp_path / "missing.h5"])
    assert r.returncode != 0 and "missing or unreadable" in r.stderr


def test_train_writes_hdf5_checkpoint_and_trace(egret_bin, root, tmp_path):
    r = run([egret_bin, "train", "--config", root / "examples" / "delay_copy.json", "--out",
             tmp_path, "--epochs", "3"])
    assert r.returncode == 0, r.stderr
    with h5py.File(tmp_path / "checkpoint.h5", "r") as f:
        assert f.attrs["egret_format"] == "egret-checkpoint"
        assert f.attrs["epoch"] == 3
        cfg = json.loads((root / "examples" / "delay_copy.json").read_text())
        steps_per_epoch = -(-cfg["task"]["train_trials"] // cfg["training"]["batch_size"])
        assert f.attrs["optimizer_steps"] == 3 * steps_per_epoch
        n = f["training/values"].shape[0]
        assert f["training/adam_m"].shape == (n,) and f["training/adam_v"].shape == (n,)
        assert f["parameters/layer0/U_z"].shape == (2, 3)
        assert f["parameters/readout/W_o"].shape == (2, 2)
        assert json.loads(f.attrs["configuration"])["task"]["name"] == "delay_copy"
        assert len(f.attrs["rng_state"]) > 100
    with h5py.File(tmp_path / "trace.h5", "r") as f:
        labels = f["egret/samples/label"][()]
        assert labels.size == 64 and set(labels) == {0, 1, 2, 3}
        assert np.all(np.diff(f["spikes/layer0/timestamps"][()]) >= 0)


def read_log(path):
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    return [dict(zip(header, line.split(","))) for line in lines[1:]]


def test_cli_resume_gives_the_same_losses_as_an_uninterrupted_run(egret_bin, root, tmp_path):
    cfg = root / "examples" / "delay_copy.json"
    full, first, second = tmp_path / "full", tmp_path / "first", tmp_path / "second"
    assert run([egret_bin, "train", "--config", cfg, "--out", full, "--epochs", "6"]).returncode == 0
    assert run([egret_bin, "train", "--config", cfg, "--out", first, "--epochs", "3"]).returncode == 0
    r = run([egret_bin, "train", "--resume", first / "checkpoint.h5", "--out", second, "--epochs", "6"])
    assert r.returncode == 0, r.stderr
    a, b = read_log(full / "training_log.csv"), read_log(second / "training_log.csv")
    assert [row["epoch"] for row in b] == ["4", "5", "6"]
    for key in ("train_loss", "train_accuracy", "test_loss", "test_accuracy"):
        assert [row[key] for row in a[3:]] == [row[key] for row in b], key
    with h5py.File(full / "checkpoint.h5", "r") as f, h5py.File(second / "checkpoint.h5", "r") as g:
        assert np.array_equal(f["training/values"][()], g["training/values"][()])
        assert np.array_equal(f["training/adam_v"][()], g["training/adam_v"][()])


def test_resume_rejects_a_foreign_file(egret_bin, tmp_path):
    bad = tmp_path / "x.h5"
    with h5py.File(bad, "w") as f:
        f.attrs["egret_format"] = "egret-trace"
    r = run([egret_bin, "train", "--resume", bad])
    assert r.returncode != 0 and "not an egret checkpoint" in r.stderr
