"""Event-camera functions from Python: the readers on the real sample files (counts given with
the files), tonic-style structured arrays, transforms against numpy computations, the engine's
input against a hand count, AEDAT 3.1 round trips, the gesture layout with a synthetic set, and
errors naming the problem."""
import numpy as np
import pytest

import egret
from conftest import ROOT

DATA = ROOT.parent / "shared" / "data"


def tonic_events(n=5000, w=40, h=30, seed=0):
    """Events as tonic stores them: int64 x, y, bool p, int64 t (microseconds)."""
    rng = np.random.default_rng(seed)
    ev = np.zeros(n, dtype=[("x", "<i8"), ("y", "<i8"), ("p", "?"), ("t", "<i8")])
    ev["x"] = rng.integers(0, w, n)
    ev["y"] = rng.integers(0, h, n)
    ev["p"] = rng.integers(0, 2, n).astype(bool)
    ev["t"] = np.sort(rng.integers(0, 200_000, n))
    return ev


def test_readers_on_the_shared_sample_files():
    ev, size = egret.read_events(str(DATA / "prophesee" / "evt2_sample.raw"))
    assert len(ev) == 539481 and size == (640, 480)  # the count documented with the file
    assert ev.dtype == egret.CAMERA_EVENT_DTYPE and np.all(np.diff(ev["t"]) >= 0)
    assert ev["x"].max() < 640 and ev["y"].max() < 480
    ev, size = egret.read_events(str(DATA / "tonic" / "sample.aedat4"))
    assert len(ev) == 111954 and size == (320, 240)
    ev, size = egret.read_events(str(DATA / "tonic" / "sample_nmnist.bin"))
    assert len(ev) == (DATA / "tonic" / "sample_nmnist.bin").stat().st_size // 5
    with pytest.raises(RuntimeError, match="no_such_file.aedat4"):
        egret.read_events(str(DATA / "no_such_file.aedat4"))


def test_to_input_equals_a_numpy_count():
    ev = tonic_events()
    t, ch, v, channels = egret.to_input(ev, (40, 30), 5000)
    assert channels == 2 * 30 * 40
    expected = {}
    for e in ev:  # channel (p, y, x), bin of 5 ms from t0 = 0, value = count
        key = ((int(e["p"]) * 30 + int(e["y"])) * 40 + int(e["x"]), int(e["t"]) // 5000)
        expected[key] = expected.get(key, 0) + 1
    got = {(int(c), int(round(tt / 5.0)) - 1): val for tt, c, val in zip(t, ch, v)}
    assert got == expected
    assert v.sum() == len(ev)
    # binary coalescing: one event of value 1 per occupied (channel, bin)
    _, _, vb, _ = egret.to_input(ev, (40, 30), 5000, coalesce="binary")
    assert len(vb) == len(expected) and np.all(vb == 1)
    s = egret.camera_sample(ev, (40, 30), bin_length=5000, end_time=200.0,
                            readout_windows=[(40.0, 200.0)], labels=3)
    assert len(s) == len(t) and s.channels == channels and s.labels == [3]


def test_transforms_match_numpy():
    ev = tonic_events()
    ds, size = egret.downsample(ev, (40, 30), 0.25)
    assert size == (10, 8)
    assert np.array_equal(ds["x"], ev["x"] // 4) and np.array_equal(ds["y"], ev["y"] // 4)
    cut = egret.crop_time(ev, 50_000, 120_000)
    assert np.array_equal(cut["t"], ev["t"][(ev["t"] >= 50_000) & (ev["t"] < 120_000)])
    cr, size = egret.crop(ev, (40, 30), 5, 10, 20, 15)
    keep = (ev["x"] >= 5) & (ev["x"] < 25) & (ev["y"] >= 10) & (ev["y"] < 25)
    assert size == (20, 15) and np.array_equal(cr["x"], ev["x"][keep] - 5)
    t0 = ev["t"][0]  # frames and slices start at the first event (tonic)
    assert t0 > 0
    frames = egret.to_frames(ev, (40, 30), 50_000)
    assert frames.shape == (4, 2, 30, 40) and frames.sum() == len(ev)
    for b, p, x, y in ((1, 1, ev["x"][0], ev["y"][0]), (3, 0, ev["x"][-1], ev["y"][-1])):
        assert frames[b, p, y, x] == np.sum(
            (ev["t"] >= t0 + b * 50_000) & (ev["t"] < t0 + (b + 1) * 50_000) & (ev["p"] == p)
            & (ev["x"] == x) & (ev["y"] == y))
    assert np.all(egret.merge_polarities(ev)["p"] == 0)
    windows = egret.slice_by_time(ev, 100_000)
    assert [len(w) for w in windows] == [np.sum(ev["t"] < t0 + 100_000),
                                         np.sum(ev["t"] >= t0 + 100_000)]
    # refractory period by hand on one pixel
    px = np.zeros(4, dtype=egret.CAMERA_EVENT_DTYPE)
    px["t"] = [0, 300, 1200, 1500]
    assert list(egret.refractory_period(px, (1, 1), 1000)["t"]) == [0, 1200]
    # denoise: an event survives only with a neighbour event less than filter_time before it
    pair = np.zeros(3, dtype=egret.CAMERA_EVENT_DTYPE)
    pair["x"], pair["t"] = [0, 1, 5], [10_000, 10_500, 11_000]
    assert list(egret.denoise(pair, (8, 1), 1000)["t"]) == [10_500]


def test_aedat31_round_trip(tmp_path):
    ev = egret.as_camera_events(tonic_events(w=128, h=128))
    egret.write_aedat31(str(tmp_path / "x.aedat"), ev, (128, 128))
    back, size = egret.read_events(str(tmp_path / "x.aedat"))
    assert np.array_equal(back, ev) and size == (128, 128)


def test_synthetic_gesture_dataset(tmp_path):
    d = str(tmp_path / "gestures")
    s = egret.write_synthetic_gesture_dataset(d, train_users=1, test_users=1, lightings=["led"],
                                              gesture_us=200_000, gap_us=50_000)
    assert s["trials"] == 2 and s["events"] > 0
    train = egret.load_gesture_split(d, "train")
    assert sorted(g["label"] for g in train) == list(range(11))
    assert all(g["events"]["t"].min() >= 0 and g["events"]["t"].max() < 200_000 for g in train)
    assert len(egret.GESTURE_CLASSES) == 11 and egret.GESTURE_CLASSES[0] == "hand_clapping"
    sliced = egret.load_gesture_split(d, "test", slice_us=100_000)
    assert len(sliced) == 22
    with pytest.raises(Exception, match="trials_to_train.txt|already"):
        egret.write_synthetic_gesture_dataset(d, train_users=1, test_users=1)


def test_camera_errors():
    ev = tonic_events(10)
    with pytest.raises(ValueError, match="'p' is missing"):
        egret.to_input(ev[["x", "y", "t"]], (40, 30), 5000)
    bad = ev.copy()
    bad["t"][4] = 0
    with pytest.raises(ValueError, match="event 4 is earlier than event 3"):
        egret.downsample(bad, (40, 30), 0.5)
    pol = np.zeros(2, dtype=[("x", "<i4"), ("y", "<i4"), ("p", "<i4"), ("t", "<i8")])
    pol["p"] = [1, 2]
    with pytest.raises(ValueError, match="event 1 has polarity 2"):
        egret.as_camera_events(pol)
    pol["p"] = [1, -1]  # -1/1 polarity is accepted as OFF/ON
    assert list(egret.as_camera_events(pol)["p"]) == [1, 0]
    with pytest.raises(ValueError, match="structured array"):
        egret.to_input(np.zeros(4), (40, 30), 5000)
    with pytest.raises(ValueError, match=r"outside the 10x10 sensor"):
        egret.to_input(ev, (10, 10), 5000)
    with pytest.raises(ValueError, match="coalesce must be 'sum' or 'binary'"):
        egret.to_input(ev, (40, 30), 5000, coalesce="max")
    with pytest.raises(ValueError, match="factor must be in"):
        egret.downsample(ev, (40, 30), 2.0)


def fashion_mnist(count):
    """The first `count` test images and labels of Debian's dataset-fashion-mnist (IDX, gzip)."""
    import gzip
    root = "/usr/share/datasets/fashion-mnist"
    with gzip.open(f"{root}/t10k-images-idx3-ubyte.gz", "rb") as f:
        images = np.frombuffer(f.read(), dtype=np.uint8, offset=16).reshape(-1, 28, 28)
    with gzip.open(f"{root}/t10k-labels-idx1-ubyte.gz", "rb") as f:
        labels = np.frombuffer(f.read(), dtype=np.uint8, offset=8)
    return images[:count].copy(), [int(x) for x in labels[:count]]


def test_fashion_mnist_in_saccades_reads_as_nmnist(tmp_path):
    """Real Fashion-MNIST images moved in N-MNIST's three saccades: N-MNIST's layout and format,
    read back by the same reader and transforms as any recording; an image sends ten times or more
    the events of a blank screen's noise."""
    images, labels = fashion_mnist(12)
    s = egret.write_saccade_dataset(str(tmp_path), "Test", images, labels, seed=2)
    assert s["samples"] == 12
    total = 0
    for i, label in enumerate(labels):
        path = tmp_path / "Test" / str(label) / f"{i:05d}.bin"
        ev, size = egret.read_events(str(path))
        assert size == (34, 34)
        assert len(ev) > 3000, (i, len(ev))  # 6,000-16,000 for these 12 images
        assert ev["t"].min() >= 0 and ev["t"].max() <= 300_000
        assert 0.3 < ev["p"].mean() < 0.7  # edges pass both ways over three saccades
        total += len(ev)
        t, ch, val, channels = egret.to_input(ev, size, 10_000)
        assert channels == 34 * 34 * 2 and val.sum() == len(ev)
    assert total == s["events"]
    blank = np.zeros((1, 28, 28), np.uint8)
    egret.write_saccade_dataset(str(tmp_path / "blank"), "Test", blank, [0], seed=2)
    ev, _ = egret.read_events(str(tmp_path / "blank" / "Test" / "0" / "00000.bin"))
    # Shot noise only: 0.2 Hz per pixel, times 1 / (0.1 + 0.1) = 5 on the black screen, over
    # 34 x 34 pixels and 0.3 s: 347 expected (Poisson, sd 19).
    assert 270 < len(ev) < 425
    with pytest.raises(ValueError, match="uint8 of shape"):
        egret.write_saccade_dataset(str(tmp_path / "x"), "Test", images[:, :27], labels)
    with pytest.raises(ValueError, match="outside 0-9"):
        egret.write_saccade_dataset(str(tmp_path / "x"), "Test", images[:1], [10])
