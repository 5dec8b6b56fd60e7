"""Event arrays written by numpy and h5py (independent writers) read by egret: .npy structured
arrays and HDF5 files (compound dataset or group of x, y, p, t), and their errors."""
import h5py
import numpy as np

from conftest import run


def inspect(egret_bin, path):
    r = run([egret_bin, "inspect", path])
    return r.returncode, r.stdout + r.stderr


def events_line(out):
    return int(out.split(" events (")[0].split()[-1])


def random_events(n, seed=0):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.integers(0, 1_000_000, n))
    return rng.integers(0, 128, n), rng.integers(0, 128, n), rng.integers(0, 2, n), t


def test_npy_structured_arrays(egret_bin, tmp_path):
    x, y, p, t = random_events(5000)
    for dtype in ([("x", "<i2"), ("y", "<i2"), ("p", "?"), ("t", "<i8")],
                  [("t", ">u8"), ("x", ">u2"), ("y", "<u2"), ("p", "i1")],
                  [("x", "<f8"), ("y", "<f4"), ("p", "<i8"), ("t", "<f8")]):
        a = np.zeros(len(t), dtype=dtype)
        a["x"], a["y"], a["p"], a["t"] = x, y, p, t
        path = tmp_path / "events.npy"
        np.save(path, a)
        code, out = inspect(egret_bin, path)
        assert code == 0, out
        assert events_line(out) == 5000
        assert f"ON share {p.mean():.3f}" in out


def test_hdf5_event_arrays(egret_bin, tmp_path):
    # 200,000 events: read in several blocks of 65,536 (bounded memory).
    x, y, p, t = random_events(200_000, seed=1)
    grouped = tmp_path / "grouped.h5"
    with h5py.File(grouped, "w") as f:
        g = f.create_group("events")
        g["x"], g["y"], g["p"], g["t"] = x.astype(np.uint16), y.astype(np.uint16), p.astype(np.int8), t
    compound = tmp_path / "compound.h5"
    a = np.zeros(len(t), dtype=[("t", "<i8"), ("x", "<u2"), ("y", "<u2"), ("p", "i1")])
    a["x"], a["y"], a["p"], a["t"] = x, y, 2 * p - 1, t  # polarity as -1 / 1
    with h5py.File(compound, "w") as f:
        f["events"] = a
    for path in (grouped, compound):
        code, out = inspect(egret_bin, path)
        assert code == 0, out
        assert events_line(out) == 200_000
        assert f"ON share {p.mean():.3f}" in out


def test_bad_event_arrays_are_named_errors(egret_bin, tmp_path):
    a = np.zeros(3, dtype=[("x", "<i2"), ("y", "<i2"), ("t", "<i8")])
    np.save(tmp_path / "nop.npy", a)
    code, out = inspect(egret_bin, tmp_path / "nop.npy")
    assert code != 0 and "no field 'p'" in out
    b = np.zeros(3, dtype=[("x", "<i2"), ("y", "<i2"), ("p", "<i2"), ("t", "<i8")])
    b["t"] = [5, 3, 9]
    np.save(tmp_path / "unsorted.npy", b)
    code, out = inspect(egret_bin, tmp_path / "unsorted.npy")
    assert code != 0 and "not sorted by time" in out and "byte " in out
    b["t"] = [1, 2, 3]
    b["p"] = [0, 7, 1]
    np.save(tmp_path / "pol.npy", b)
    code, out = inspect(egret_bin, tmp_path / "pol.npy")
    assert code != 0 and "polarity 7" in out
    b["p"] = [0, 1, 1]
    np.save(tmp_path / "ok.npy", b)
    raw = (tmp_path / "ok.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(raw[:-5])
    code, out = inspect(egret_bin, tmp_path / "cut.npy")
    assert code != 0 and "truncated npy record" in out
    with h5py.File(tmp_path / "short.h5", "w") as f:
        g = f.create_group("events")
        g["x"], g["y"], g["p"], g["t"] = np.arange(3), np.arange(3), np.ones(2), np.arange(3)
    code, out = inspect(egret_bin, tmp_path / "short.h5")
    assert code != 0 and "differ in length" in out
