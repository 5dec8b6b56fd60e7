"""Writes the fuzz seed corpora, tests/fuzz/corpus/seeds/<target>/: small valid files (< 80 KB)
per format, built to the formats' specifications by hand or with egret's own writers (the Python
module's write_evt3, write_aedat31, Network.write_trace and Network.save_checkpoint).

    PYTHONPATH=build/python /usr/bin/python3 tests/fuzz/make_seeds.py

The AEDAT 4.0 target has no seed here: scripts/fuzz.sh adds the first kilobytes of the shared
sample recording, and its regression files give the container's structure.
"""
import json
import pathlib
import struct
import zlib

import h5py
import numpy as np

import egret

ROOT = pathlib.Path(__file__).resolve().parents[2]
SEEDS = ROOT / "tests" / "fuzz" / "corpus" / "seeds"


def out(target, name):
    d = SEEDS / target
    d.mkdir(parents=True, exist_ok=True)
    return d / name


def events(n, w, h, seed, t_max=20_000):
    rng = np.random.default_rng(seed)
    ev = np.zeros(n, dtype=[("x", "<i8"), ("y", "<i8"), ("p", "?"), ("t", "<i8")])
    ev["x"] = rng.integers(0, w, n)
    ev["y"] = rng.integers(0, h, n)
    ev["p"] = rng.integers(0, 2, n).astype(bool)
    ev["t"] = np.sort(rng.integers(0, t_max, n))
    return ev


def evt2():
    ev = events(40, 64, 48, 1, t_max=300)
    for name, header in (
        ("geometry.raw", "% evt 2.0\n% geometry 64x48\n% end\n"),
        ("format_line.raw", "% evt 2.0\n% format EVT2;height=48;width=64\n"),
    ):
        words = [0x8 << 28 | 0]  # TIME_HIGH 0
        high = 0
        for e in ev:
            if e["t"] >> 6 != high:
                high = int(e["t"]) >> 6
                words.append(0x8 << 28 | high)
            words.append(int(e["p"]) << 28 | (int(e["t"]) & 0x3F) << 22 | int(e["x"]) << 11 | int(e["y"]))
        words.append(0xA << 28 | 1)  # an external trigger (skipped)
        out("evt2", name).write_bytes(header.encode() + struct.pack(f"<{len(words)}I", *words))


def evt3():
    egret.write_evt3(str(out("evt3", "small.raw")), events(60, 64, 48, 2), (64, 48))
    egret.write_evt3(str(out("evt3", "wide_times.raw")), events(30, 1280, 720, 3, 50_000_000),
                     (1280, 720))


def prophesee_dat():
    ev = events(40, 64, 48, 4)
    recs = b"".join(struct.pack("<II", int(e["t"]), int(e["p"]) << 28 | int(e["y"]) << 14 | int(e["x"]))
                    for e in ev)
    header = b"% Data file containing Event2D events.\n% Version 2\n% Height 48\n% Width 64\n"
    out("prophesee_dat", "v2.dat").write_bytes(header + bytes([0x00, 0x08]) + recs)
    out("prophesee_dat", "no_header.dat").write_bytes(recs)


def nmnist_bin():
    ev = events(60, 34, 34, 5)
    out("nmnist_bin", "small.bin").write_bytes(b"".join(
        bytes([int(e["x"]), int(e["y"]), int(e["p"]) << 7 | (int(e["t"]) >> 16) & 0x7F,
               (int(e["t"]) >> 8) & 0xFF, int(e["t"]) & 0xFF]) for e in ev))


def aedat2():
    ev = events(40, 128, 128, 6)
    dvs = [int(e["y"]) << 8 | int(e["x"]) << 1 | int(e["p"]) for e in ev] + [0x8000]  # + special
    times = [int(e["t"]) for e in ev] + [int(ev["t"][-1])]
    head = b"#!AER-DAT2.0\r\n# This is a raw AE data file\r\n#AEChip: ch.unizh.ini.jaer.chip.retina.DVS128\r\n"
    out("aedat2", "dvs128.aedat").write_bytes(
        head + b"".join(struct.pack(">II", a, t) for a, t in zip(dvs, times)))
    ev = events(40, 346, 260, 7)
    davis = [int(e["y"]) << 22 | int(e["x"]) << 12 | int(e["p"]) << 11 for e in ev] + [1 << 31]
    times = [int(e["t"]) for e in ev] + [int(ev["t"][-1])]
    head = b"#!AER-DAT2.0\r\n#AEChip: eu.seebetter.ini.chips.davis.Davis346B\r\n"
    out("aedat2", "davis346.aedat").write_bytes(
        head + b"".join(struct.pack(">II", a, t) for a, t in zip(davis, times)))


def aedat31():
    egret.write_aedat31(str(out("aedat31", "small.aedat")), events(80, 128, 128, 8))


def npy_events():
    ev = events(50, 128, 128, 9)
    np.save(out("npy_events", "tonic_dtype.npy"), ev)
    a = np.zeros(30, dtype=[("t", "<u8"), ("x", "<u2"), ("y", "<u2"), ("p", "i1")])
    a["t"], a["x"], a["y"], a["p"] = ev["t"][:30], ev["x"][:30], ev["y"][:30], 2 * ev["p"][:30] - 1
    np.save(out("npy_events", "unsigned_signed_polarity.npy"), a)
    b = np.zeros(20, dtype=[("x", ">i2"), ("y", ">i2"), ("p", "u1"), ("t", ">f8")])
    b["x"], b["y"], b["p"], b["t"] = ev["x"][:20], ev["y"][:20], ev["p"][:20], ev["t"][:20]
    np.save(out("npy_events", "big_endian_float_times.npy"), b)


def hdf5_events():
    ev = events(50, 128, 128, 10)
    with h5py.File(out("hdf5_events", "group.h5"), "w") as f:
        g = f.create_group("events")
        g["x"], g["y"] = ev["x"].astype(np.uint16), ev["y"].astype(np.uint16)
        g["p"], g["t"] = ev["p"].astype(np.int8), ev["t"]
    a = np.zeros(50, dtype=[("t", "<i8"), ("x", "<u2"), ("y", "<u2"), ("p", "i1")])
    a["t"], a["x"], a["y"], a["p"] = ev["t"], ev["x"], ev["y"], 2 * ev["p"] - 1
    with h5py.File(out("hdf5_events", "compound.h5"), "w") as f:
        f["events"] = a


NET = json.loads((ROOT / "examples" / "two_layer.json").read_text())


def samples(n, channels):
    rng = np.random.default_rng(11)
    res = []
    for _ in range(n):
        t = np.sort(rng.uniform(0, 100, 20))
        res.append(egret.Sample(t, rng.integers(0, channels, 20), channels=channels, end_time=100.0,
                                readout_times=[100.0]))
    return res


def hdf5_trace_and_checkpoint():
    small = dict(NET, layers=[dict(NET["layers"][0], units=4), dict(NET["layers"][1], units=3)])
    net = egret.Network(small)
    net.write_trace(str(out("hdf5_trace", "two_samples.h5")), samples(2, net.input_channels),
                    labels=[0, 1])
    cont = dict(NET, layers=[dict(NET["layers"][0], units=4)])  # only continuous layers train
    egret.Network(cont).save_checkpoint(str(out("checkpoint", "one_layer.h5")), epoch=3)


def configs():
    (out("network_config", "two_layer.json")).write_text(json.dumps(NET))
    cont = {"seed": 2, "input_channels": 2, "layers": [
        {"type": "continuous_egru", "units": 2, "tau_m": 5, "tau_o": 5, "window_input": 2,
         "window_recurrent": "inf", "threshold": 0.5,
         "params": {"U_u": [[1, 0], [0, 1]], "b_z": [0.9, 0.2], "theta": 0.5, "c_init": [0.1, 0]}}],
        "readout_classes": 2, "readout": {"b_o": [0.5, -0.5]},
        "simulation": {"end_time": 50, "readout_times": [25, 50], "snapshot_times": [10],
                       "max_events": 100000}}
    (out("network_config", "params_readout.json")).write_text(json.dumps(cont))
    disc = {"input_channels": 3, "layers": [{"type": "discrete_egru", "units": 3, "dt": 0.5}],
            "simulation": {"end_time": 20}}
    (out("network_config", "discrete.json")).write_text(json.dumps(disc))
    evnn = {"precision": "double", "input_channels": 3, "layers": [
        {"type": "evnn_egru", "units": 4, "dt": 0.5, "thr_mean": 0.2,
         "params": {"thr": [0.1, 0.5, 0.9, 0.3]}}], "simulation": {"end_time": 20}}
    (out("network_config", "evnn_egru.json")).write_text(json.dumps(evnn))
    (out("train_config", "delay_copy.json")).write_text((ROOT / "examples" / "delay_copy.json").read_text())


def text_formats():
    lines = (ROOT / "examples" / "events.csv").read_text().splitlines()
    (out("event_csv", "header_30.csv")).write_text("\n".join(lines[:30]) + "\n")
    (out("event_csv", "comments_values.csv")).write_text(
        "# t_ms,channel,value\n0.5,0,1\n0.75,15,-0.5\n\n1.0,3\n2.5e1,7,2\n")
    (out("gesture_labels", "user01_natural_labels.csv")).write_text(
        "class,startTime_usec,endTime_usec\n1,80000,1500000\n2,1600000,3000000\n11,3100000,4200000\n")
    (out("trial_list", "trials_to_train.txt")).write_text(
        "user01_fluorescent.aedat\nuser01_natural.aedat\n\nuser02_lab.aedat\n")
    (out("frame_list", "images.txt")).write_text(
        "0.000000 images/frame_00000000.png\n0.049 images/frame_00000001.png\n"
        "0.1 images/frame_00000002.png\n")


def png(width, height, depth, pixels):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    fmt = ">" + ("B" if depth == 8 else "H") * width
    raw = b"".join(b"\x00" + struct.pack(fmt, *row) for row in pixels)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def pngs():
    g8 = [[(x * 31 + y * 17) % 256 for x in range(8)] for y in range(6)]
    g16 = [[(x * 8191 + y * 4099) % 65536 for x in range(5)] for y in range(4)]
    out("png", "gray8.png").write_bytes(png(8, 6, 8, g8))
    out("png", "gray16.png").write_bytes(png(5, 4, 16, g16))


def nir_graphs():
    """Seeds: egret's own exports (LIF with readout; cuba_lif and cuba_li; an extension node) and
    a graph in the layout NIR documents. Regressions: the hostile graphs of tests/python/test_nir.py
    (each must give a clear error)."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "python"))
    import test_nir

    egret.export_nir(str(ROOT / "examples" / "delay_copy_lif.json"),
                     str(out("nir_graph", "egret_lif_readout.nir")))
    egret.export_nir({"input_channels": 2, "precision": "double", "readout_classes": 2,
                      "layers": [{"type": "cuba_lif", "units": 3},
                                 {"type": "cuba_li", "units": 2, "synapse": False}]},
                     str(out("nir_graph", "egret_cuba.nir")))
    egret.export_nir({"input_channels": 2, "layers": [{"type": "bmru", "units": 3}]},
                     str(out("nir_graph", "egret_extension.nir")), extension=True)
    nodes, edges = test_nir.base_graph()
    test_nir.write_nir(out("nir_graph", "nir_layout_lif.nir"), nodes, edges)
    regressions = ROOT / "tests" / "fuzz" / "corpus" / "regressions" / "nir_graph"
    regressions.mkdir(parents=True, exist_ok=True)
    for name, nodes, edges, _ in test_nir.hostile_graphs():
        test_nir.write_nir(regressions / f"{name}.nir", nodes, edges)


if __name__ == "__main__":
    for make in (evt2, evt3, prophesee_dat, nmnist_bin, aedat2, aedat31, npy_events, hdf5_events,
                 hdf5_trace_and_checkpoint, configs, text_formats, pngs, nir_graphs):
        make()
    for f in sorted(SEEDS.rglob("*")):
        if f.is_file():
            assert f.stat().st_size < 64 * 1024, f
            print(f"{f.stat().st_size:7d} {f.relative_to(SEEDS)}")
