"""A trained network on a camera recording, from the CLI and from Python: `egret simulate --input
RECORDING --dump-input` and egret.prepare_recording give the same input events on the real
DVXplorer (AEDAT 4.0, 320x240 cropped to 128x128) and Prophesee EVT 2.0 (640x480) recordings, and
both equal the pipeline spelled out with egret's transforms; `egret classify` and
egret.classify_recording give the same predictions per labelled window of a synthetic AEDAT 3.1
gesture recording, equal to simulating the prepared samples directly, with the accuracy the
gesture job printed for the same held-out recording; errors name the numbers; `egret --help`
names every camera format the readers accept; every command has its help (options with defaults,
an example that runs), and the parser accepts exactly the options the help names."""
import json
import pathlib
import re

import numpy as np
import pytest

import egret
from conftest import ROOT, run

DATA = ROOT.parent / "shared" / "data"
AEDAT4 = DATA / "tonic" / "sample.aedat4"
EVT2 = DATA / "prophesee" / "evt2_sample.raw"


def gesture_network(path, precision="double"):
    """A network with the gesture job's 2048 inputs (32x32 pooled pixels x 2) and 11 classes."""
    layer = json.loads((ROOT / "examples" / "networks" / "dvs_gesture_layer.json").read_text())
    layer["units"] = 16
    cfg = {"input_channels": 2048, "layers": [layer], "readout_classes": 11, "seed": 3,
           "precision": precision}
    path.write_text(json.dumps(cfg))
    return path


def dumped(path):
    d = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return d[:, 0], d[:, 1].astype(np.int64), d[:, 2]


def assert_same_input(path, sample):
    t, ch, v = dumped(path)
    assert len(t) == len(sample) > 0
    assert np.array_equal(t, sample.t)
    assert np.array_equal(ch, sample.channel)
    assert np.array_equal(v, sample.value)


def test_simulate_and_prepare_recording_agree_on_the_real_aedat4(egret_bin, tmp_path):
    net_path = gesture_network(tmp_path / "net.json")
    ev, size = egret.read_events(str(AEDAT4))
    assert size == (320, 240)
    r = run([egret_bin, "simulate", "--config", net_path, "--input", AEDAT4, "--crop",
             "96,56,128,128", "--dump-input", tmp_path / "in.csv", "--trace", tmp_path / "t.csv"])
    assert r.returncode == 0, r.stderr
    # The summary gives the recording's own first timestamp (Unix time in us here).
    first = int(ev["t"][0])
    assert first > 1_600_000_000_000_000
    assert f"first event at {first} us" in r.stdout
    assert f"window: {first} .. {first + 1500000} us (from the recording's first event)" in r.stdout
    # The recording lasts 0.59 s: the 1.5 s window's end is silent, and both say so.
    assert "ends 0.910082 s after the recording's last event" in r.stdout
    with pytest.warns(UserWarning, match="ends 0.910082 s after the recording's last event"):
        s = egret.prepare_recording(ev, size, None, crop=(96, 56, 128, 128))
    assert_same_input(tmp_path / "in.csv", s)
    assert s.channels == 2048 and s.end_time == 1500.0 and s.readout_windows == [(300.0, 1500.0)]
    # Both equal the pipeline spelled out with egret's transforms: the window from the first
    # event shifted to 0, the crop, pooling by 4, 5 ms bins of counts.
    w = egret.crop_time(ev, first, first + 1500000)
    w["t"] -= first
    w, box = egret.crop(w, size, 96, 56, 128, 128)
    w, pooled = egret.downsample(w, box, 0.25)
    t, ch, v, channels = egret.to_input(w, pooled, 5000)
    assert pooled == (32, 32) and channels == 2048
    assert np.array_equal(t, s.t) and np.array_equal(ch, s.channel) and np.array_equal(v, s.value)
    assert v.sum() == len(w) and len(w) > 10000  # every cropped event, counted once
    # The CLI's run is the Python run of the same sample.
    net = egret.Network(net_path.read_text())
    py = net.simulate(s.t, s.channel, s.value, end_time=s.end_time,
                      readout_windows=s.readout_windows)
    cli = np.loadtxt(tmp_path / "t.csv", delimiter=",", skiprows=1, ndmin=2)
    assert len(cli) == len(py["time"]) > 0
    assert np.array_equal(cli[:, 0], py["time"]) and np.array_equal(cli[:, 2], py["unit"])


def test_options_override_and_agree(egret_bin, tmp_path):
    net_path = gesture_network(tmp_path / "net.json")
    ev, size = egret.read_events(str(AEDAT4))
    start = int(ev["t"][0]) + 100_000
    opts = {"pooling": 0.5, "bin_us": 2000, "window_us": 300_000, "denoise_us": 5000,
            "coalesce": "binary"}
    r = run([egret_bin, "simulate", "--config", net_path, "--input", AEDAT4, "--crop",
             "128,88,64,64", "--pooling", "0.5", "--bin-us", "2000", "--window-us", "300000",
             "--denoise-us", "5000", "--coalesce", "binary", "--start-us", start,
             "--dump-input", tmp_path / "in.csv"])
    assert r.returncode == 0, r.stderr
    assert "(from --start-us)" in r.stdout
    assert "--bin-us 2000 (was 5000)" in r.stdout and "--coalesce binary (was sum)" in r.stdout
    s = egret.prepare_recording(ev, size, opts, start_us=start, crop="128,88,64,64")
    assert_same_input(tmp_path / "in.csv", s)
    assert np.all(s.value == 1) and s.end_time == 300.0
    # Denoising dropped events: without it, more (channel, bin) pairs are occupied.
    plain = egret.prepare_recording(ev, size, dict(opts, denoise_us=0), start_us=start,
                                    crop="128,88,64,64")
    assert len(plain) > len(s)


def test_simulate_and_prepare_recording_agree_on_the_real_evt2(egret_bin, tmp_path):
    net_path = gesture_network(tmp_path / "net.json")
    ev, size = egret.read_events(str(EVT2))
    assert size == (640, 480)
    # The recording lasts 50 ms: windows of 50 ms, 1 ms bins.
    r = run([egret_bin, "simulate", "--config", net_path, "--input", EVT2, "--crop",
             "256,176,128,128", "--window-us", "50000", "--bin-us", "1000", "--dump-input",
             tmp_path / "in.csv"])
    assert r.returncode == 0, r.stderr
    assert "(evt2, 640x480 sensor), 539481 events" in r.stdout
    s = egret.prepare_recording(ev, size, {"window_us": 50000, "bin_us": 1000},
                                crop=(256, 176, 128, 128))
    assert_same_input(tmp_path / "in.csv", s)
    inside = ((ev["x"] >= 256) & (ev["x"] < 384) & (ev["y"] >= 176) & (ev["y"] < 304)
              & (ev["t"] < ev["t"][0] + 50000))
    assert s.value.sum() == inside.sum() > 1000


@pytest.fixture(scope="module")
def gesture_run(tmp_path_factory, egret_bin):
    """A synthetic DVS128 Gesture-style set (one training and one held-out user) and a gesture
    job checkpoint trained on it for 3 epochs: its held-out set is user24_led's 11 gestures."""
    d = tmp_path_factory.mktemp("gestures")
    egret.write_synthetic_gesture_dataset(str(d / "set"), train_users=1, test_users=1,
                                          lightings=["led"], seed=5)
    r = run([egret_bin, "gesture", "--dataset", d / "set", "--models", "egret,paper", "--seeds", "3",
             "--epochs", "3", "--threads", "2", "--out", d / "job"])
    assert r.returncode == 0, r.stderr
    job = json.loads((d / "job" / "results.json").read_text())["runs"][0]
    assert f"egret, seed 3: held-out accuracy {100 * job['accuracy']:.1f}% " \
        f"({job['correct']} of {job['total']})" in r.stdout
    return d, job["correct"], job["total"]


def test_classify_cli_python_and_direct_simulation_agree(egret_bin, gesture_run):
    d, correct, total = gesture_run
    ckpt, rec, labels = d / "job" / "checkpoint.h5", d / "set" / "user24_led.aedat", \
        d / "set" / "user24_led_labels.csv"
    r = run([egret_bin, "classify", "--checkpoint", ckpt, rec, "--labels", labels, "--json",
             d / "c.json"])
    assert r.returncode == 0, r.stderr
    assert "(aedat31, 128x128 sensor)" in r.stdout
    assert "preprocessing from the checkpoint's task section" in r.stdout
    # The held-out recording, one window per label: the accuracy the gesture job printed.
    assert total == 11
    assert f"accuracy: {100 * correct / 11:.1f}% ({correct} of 11 labelled windows)" in r.stdout
    report = json.loads((d / "c.json").read_text())
    assert report["correct"] == correct and report["labelled"] == 11
    task = json.loads(egret.Network.load_checkpoint(str(ckpt)).config)["task"]
    assert task["name"] == "dvs_gesture"
    assert report["preprocessing"] == egret.recording_preprocessing(task)
    assert report["preprocessing"]["window_us"] == task["window_us"] == 1500000
    windows = egret.classify_recording(ckpt, rec, labels)
    assert windows == report["windows"]
    names = [w["predicted_name"] for w in windows]
    assert names == [egret.GESTURE_CLASSES[w["predicted"]] for w in windows]
    for w in windows:
        assert w["predicted_name"] in r.stdout and w["label_name"] in r.stdout

    # Directly: the prepared samples through the checkpoint's network.
    ev, size = egret.read_events(str(rec))
    rows = np.loadtxt(labels, delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
    samples = [egret.prepare_recording(ev, size, str(ckpt), start_us=int(s), end_us=int(e),
                                       label=int(c) - 1) for c, s, e in rows]
    net = egret.Network.load_checkpoint(str(ckpt))
    res = net.simulate_batch(samples, threads=2)
    for w, x, (c, s, e), smp in zip(windows, res, rows, samples):
        assert w["start_us"] == s and w["end_us"] == min(e, s + 1500000)
        assert w["label"] == c - 1 and smp.labels == [c - 1]
        assert np.array_equal(np.asarray(w["logits"]), x["logits"][0])
        assert w["predicted"] == int(np.argmax(x["logits"][0]))
        assert w["input_events"] == len(smp)
        p = np.exp(x["logits"][0] - x["logits"][0].max())
        assert w["confidence"] == pytest.approx(p.max() / p.sum(), rel=1e-12)
    # ... and those samples are the gesture job's own held-out samples, prepared step by step.
    p = report["preprocessing"]
    for g, smp in zip(egret.load_gesture_split(str(d / "set"), "test"), samples):
        w = egret.crop_time(g["events"], 0, p["window_us"])
        if p["denoise_us"] > 0:
            w = egret.denoise(w, (128, 128), p["denoise_us"])
        w, pooled = egret.downsample(w, (128, 128), p["pooling"])
        t, ch, v, _ = egret.to_input(w, pooled, p["bin_us"], coalesce=p["coalesce"])
        end = p["window_us"] * 1e-3
        assert smp.end_time == end and smp.readout_windows == [(p["readout_from"] * end, end)]
        assert np.array_equal(t, smp.t) and np.array_equal(ch, smp.channel)
        assert np.array_equal(v, smp.value)


def test_classify_without_labels_takes_consecutive_windows(egret_bin, gesture_run):
    d, _, _ = gesture_run
    ckpt, full = d / "job" / "checkpoint.h5", d / "set" / "user24_led.aedat"
    # The recording without its last 0.7 s, so that it ends inside a window (the synthetic
    # recordings end with a gesture's last frame, 1.5 s windows from the first event can end
    # exactly there).
    ev, size = egret.read_events(str(full))
    ev = ev[ev["t"] < ev["t"][-1] - 700_000]
    rec = d / "cut.aedat"
    egret.write_aedat31(str(rec), ev, size)
    first, last = int(ev["t"][0]), int(ev["t"][-1])
    report = egret.classify_recording(ckpt, rec, summary=True)
    windows = report["windows"]
    assert report["first_us"] == first and report["last_us"] == last
    assert len(windows) == (last - first) // 1500000 + 1
    assert [w["start_us"] for w in windows] == [first + k * 1500000 for k in range(len(windows))]
    # Only the last window runs past the recording: partial, as a whole 5 ms bin or more of it
    # lies after the last event.
    assert first + len(windows) * 1500000 - (last + 1) >= 5000
    assert [w["partial"] for w in windows] == [False] * (len(windows) - 1) + [True]
    assert all(w["label"] is None for w in windows) and report["accuracy"] is None
    r = run([egret_bin, "classify", "--checkpoint", ckpt, rec])
    assert r.returncode == 0, r.stderr
    assert f"windows: consecutive, from the recording's first event ({first} us)" in r.stdout
    assert "(the recording ends inside this window)" in r.stdout


@pytest.mark.parametrize("model", ["egret", "paper"])
def test_main_job_checkpoint_on_a_real_recording_cli_equals_python(egret_bin, gesture_run,
                                                                   tmp_path, model):
    """A main-job checkpoint (egret's events in 5 ms bins, or the paper's 25 ms frames with the
    10 ms denoise) on the real DVXplorer recording, cropped to the DVS128's 128x128: the CLI and
    the Python path prepare the same input and the network emits the same events. (No real
    DVS128 recording is available here; the AEDAT 4.0 file is the real recording closest to it.)"""
    d, _, _ = gesture_run
    ckpt = d / "job" / model / "seed3" / "checkpoint.h5"
    task = json.loads(egret.Network.load_checkpoint(str(ckpt)).config)["task"]
    assert task["model"] == model and task["denoise_us"] == 10000
    r = run([egret_bin, "simulate", "--checkpoint", ckpt, "--input", AEDAT4, "--crop",
             "96,56,128,128", "--dump-input", tmp_path / "in.csv", "--trace", tmp_path / "t.csv"])
    assert r.returncode == 0, r.stderr
    ev, size = egret.read_events(str(AEDAT4))
    with pytest.warns(UserWarning, match="after the recording's last event"):
        s = egret.prepare_recording(ev, size, str(ckpt), crop=(96, 56, 128, 128))
    assert_same_input(tmp_path / "in.csv", s)
    assert len(s) > 1000
    net = egret.Network.load_checkpoint(str(ckpt))
    py = net.simulate(s.t, s.channel, s.value, end_time=s.end_time,
                      readout_windows=s.readout_windows)
    cli = np.loadtxt(tmp_path / "t.csv", delimiter=",", skiprows=1, ndmin=2)
    assert len(cli) == len(py["time"]) > 0
    assert np.array_equal(cli[:, 0], py["time"]) and np.array_equal(cli[:, 2], py["unit"])
    assert np.array_equal(cli[:, 1], py["layer"])


def test_simulate_with_a_checkpoint_uses_its_task_section(egret_bin, gesture_run, tmp_path):
    d, _, _ = gesture_run
    ckpt, rec = d / "job" / "checkpoint.h5", d / "set" / "user24_led.aedat"
    ev, size = egret.read_events(str(rec))
    r = run([egret_bin, "simulate", "--checkpoint", ckpt, "--input", rec, "--start-us", "4500000",
             "--dump-input", tmp_path / "a.csv"])
    assert r.returncode == 0, r.stderr
    assert "preprocessing from the checkpoint's task section\n" in r.stdout
    assert_same_input(tmp_path / "a.csv", egret.prepare_recording(ev, size, str(ckpt), 4500000))
    r = run([egret_bin, "simulate", "--checkpoint", ckpt, "--input", rec, "--start-us", "4500000",
             "--bin-us", "2500", "--dump-input", tmp_path / "b.csv"])
    assert r.returncode == 0, r.stderr
    assert "overridden: --bin-us 2500 (was 5000)" in r.stdout
    task = egret.recording_preprocessing(str(ckpt))
    assert_same_input(tmp_path / "b.csv",
                      egret.prepare_recording(ev, size, dict(task, bin_us=2500), 4500000))
    # The readout printed is the Python run's logits.
    net = egret.Network.load_checkpoint(str(ckpt))
    s = egret.prepare_recording(ev, size, str(ckpt), 4500000)
    logits = net.simulate(s.t, s.channel, s.value, end_time=s.end_time,
                          readout_windows=s.readout_windows)["logits"][0]
    r = run([egret_bin, "simulate", "--checkpoint", ckpt, "--input", rec, "--start-us", "4500000"])
    assert r.returncode == 0, r.stderr
    printed = [float(x) for x in re.search(r"readout at 1500 ms: .*; logits (.*)",
                                           r.stdout).group(1).split()]
    assert printed == pytest.approx(logits, rel=1e-3, abs=1e-4)


def test_errors_name_the_numbers(egret_bin, gesture_run, tmp_path):
    d, _, _ = gesture_run
    ckpt, rec = d / "job" / "checkpoint.h5", d / "set" / "user24_led.aedat"
    net_path = gesture_network(tmp_path / "net.json")
    ev, size = egret.read_events(str(AEDAT4))

    # The full 320x240 sensor pooled by 4 is not the network's 2048 inputs.
    for cmd in ([egret_bin, "simulate", "--config", net_path, "--input", AEDAT4],
                [egret_bin, "classify", "--checkpoint", ckpt, AEDAT4]):
        r = run(cmd)
        assert r.returncode == 1
        assert ("gives 80x60 pixels x 2 polarities = 9600 input channels, but the network has "
                "2048 input channels") in r.stderr, r.stderr
        assert "--crop X,Y,W,H" in r.stderr and "96,56,128,128" in r.stderr
    with pytest.raises(ValueError, match="pooled by 0.25, gives 80x60"):
        egret.classify_recording(ckpt, AEDAT4)

    # Timestamps: a window from 0 of a recording that starts in 2020 (Unix time), and one after
    # its last event.
    first, last = int(ev["t"][0]), int(ev["t"][-1])
    for start in (0, last + 1):
        r = run([egret_bin, "simulate", "--config", net_path, "--input", AEDAT4, "--crop",
                 "96,56,128,128", "--start-us", start])
        assert r.returncode == 1
        assert "holds none of its events: the recording's events span " \
            f"{first} .. {last} us" in r.stderr, r.stderr
        with pytest.raises(ValueError, match="holds none of its events"):
            egret.prepare_recording(ev, size, None, start, crop=(96, 56, 128, 128))
    with pytest.warns(UserWarning, match="after the recording's last event"):
        egret.prepare_recording(ev, size, None, last - 1000, crop=(96, 56, 128, 128))

    # An empty recording.
    empty = tmp_path / "empty.aedat"
    egret.write_aedat31(str(empty), np.zeros(0, dtype=egret.CAMERA_EVENT_DTYPE), (128, 128))
    for cmd in ([egret_bin, "simulate", "--config", net_path, "--input", empty],
                [egret_bin, "classify", "--checkpoint", ckpt, empty]):
        r = run(cmd)
        assert r.returncode == 1 and "the recording holds no events" in r.stderr, r.stderr

    # Labels that do not belong to the recording.
    far = tmp_path / "far_labels.csv"
    far.write_text("class,startTime_usec,endTime_usec\n1,300000,1800000\n"
                   "2,900000000,901500000\n")
    r = run([egret_bin, "classify", "--checkpoint", ckpt, rec, "--labels", far])
    assert r.returncode == 1
    assert "label 2 (class 2, 900000000 .. 901500000 us) lies outside the recording: the " \
        "recording's events span" in r.stderr, r.stderr

    # A checkpoint of another task (delay-copy) does not describe camera preprocessing.
    other = ROOT / "tests" / "data" / "checkpoint_v2_delay_copy.h5"
    r = run([egret_bin, "classify", "--checkpoint", other, rec])
    assert r.returncode == 1
    assert "the task 'delay_copy' is not one that reads camera recordings" in r.stderr, r.stderr

    # Recording options with CSV input; a window that is not a whole number of bins.
    r = run([egret_bin, "simulate", "--config", ROOT / "examples" / "two_layer.json", "--input",
             ROOT / "examples" / "events.csv", "--crop", "0,0,4,4"])
    assert r.returncode == 1 and "--crop applies to a camera recording" in r.stderr
    r = run([egret_bin, "simulate", "--config", net_path, "--input", AEDAT4, "--crop",
             "96,56,128,128", "--bin-us", "7000"])
    assert r.returncode == 1
    assert "window_us = 1500000 is not a multiple of bin_us = 7000" in r.stderr, r.stderr
    r = run([egret_bin, "simulate", "--config", net_path, "--input", AEDAT4, "--crop",
             "96,56,500,128"])
    assert r.returncode == 1
    assert "crop 96,56,500,128 (x, y, width, height) does not lie inside the 320x240 sensor" \
        in r.stderr, r.stderr
    with pytest.raises(ValueError, match="unknown key 'bins'"):
        egret.prepare_recording(ev, size, {"bins": 3})


def test_help_names_every_camera_format_and_the_new_commands(egret_bin):
    r = run([egret_bin, "--help"])
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    names = [name for _, name in egret.CAMERA_FORMATS]
    assert len(names) == 9
    for name in names:
        assert name in text, name
    assert "egret classify --checkpoint CKPT.h5 RECORDING" in text
    for option in ("--checkpoint CKPT.h5", "--dump-input", "--window-us", "--start-us", "--crop",
                   "--pooling", "--bin-us", "--denoise-us", "--coalesce sum|binary"):
        assert option in text, option
    # The train command names every registered family (models/cell_families.cmake's list).
    families = re.search(r"set\(EGRET_CELL_FAMILIES\s+([^)]*)\)",
                         (ROOT / "models" / "cell_families.cmake").read_text()).group(1).split()
    assert len(families) == 12, families
    listed = "Train a network of any cell family (" + ", ".join(families[:-1]) + " and " + \
        families[-1] + ") with a backward pass"
    assert listed in text


COMMANDS = ["gesture", "demo", "simulate", "classify", "emulate", "inspect", "estimate", "train",
            "export-nir", "import-nir"]
OPTION = re.compile(r"--[a-z][a-z-]*")


def command_help(egret_bin, command):
    """`egret COMMAND --help` in its parts: the usage (synopsis, description, the --precision
    note); the options as {option: (its value's placeholder or None for a flag, its text)}; the
    example."""
    r = run([egret_bin, command, "--help"])
    assert r.returncode == 0, (command, r.stderr)
    text, example = r.stdout.split("example (from the repository root):\n")
    usage, _, option_lines = text.partition("options:\n")
    heads, texts = {}, {}
    for line in option_lines.splitlines():
        if line.startswith("  --"):  # "  --name VALUE   text", the text maybe on the next line
            head, _, rest = line.strip().partition("  ")
            name, _, value = head.partition(" ")
            heads[name], texts[name] = value or None, rest
        else:
            texts[name] += " " + line
    options = {k: (heads[k], " ".join(texts[k].split())) for k in heads}
    return usage, options, example.strip()


def test_every_command_has_its_own_help(egret_bin):
    """`egret COMMAND --help` and `-h` print that command's part of the usage (and nothing of the
    others), then its options with their defaults and one example; exit 0 and do no work; an
    unknown command is named."""
    whole = run([egret_bin, "--help"]).stdout
    commands = COMMANDS
    for command in commands:
        for flag in ("--help", "-h"):
            r = run([egret_bin, command, flag])
            assert r.returncode == 0, (command, flag, r.stderr)
            lines = r.stdout.splitlines()
            assert lines[0] == "usage:"
            head = "  egret [gesture]" if command == "gesture" else f"  egret {command}"
            assert lines[1].startswith(head), (command, lines[1])
            for other in commands:
                if other != command:
                    assert f"  egret {other} " not in r.stdout, (command, other)
            # Every line of the usage part is one of the whole usage's; the synopsis and the
            # description are one block of it.
            usage, options, example = command_help(egret_bin, command)
            assert all(line in whole.splitlines() for line in usage.splitlines()[1:]), command
            block = usage[len("usage:\n"):].split("  --precision float|double")[0]
            assert "\n" + block in whole, command
            assert r.stdout == run([egret_bin, "help", command]).stdout
        assert ("--precision" in r.stdout) == ("[--precision P]" in r.stdout), command
        # The options section lists exactly the options the usage names, each with its default
        # or as required (or one of two required).
        assert set(options) == set(OPTION.findall(usage)) - {"--precision"} | (
            {"--precision"} if "[--precision P]" in usage else set()), command
        for option, (_, text) in options.items():
            assert "; default: " in text or "required" in text, \
                (command, option, text)
        # The example is one command line of this command, with its options only.
        words = example.split()
        assert words[0] == "build/egret", example
        assert command == "gesture" or words[1] == command, example
        assert set(OPTION.findall(example)) <= set(options), example
    r = run([egret_bin, "demo", "--help"])
    assert "  --samples S                   samples simulated in parallel; default: 8" in r.stdout
    assert "example (from the repository root):\n  build/egret demo --samples 4" in r.stdout
    # After other options too: the help, not the run (missing.json is never read).
    r = run([egret_bin, "train", "--config", "missing.json", "--help"])
    assert r.returncode == 0 and "egret train --config" in r.stdout
    r = run([egret_bin, "train", "--config", "--help"])
    assert r.returncode == 0 and "egret train --config" in r.stdout
    r = run([egret_bin, "bogus", "--help"])
    assert r.returncode == 1 and "unknown command 'bogus'" in r.stderr
    r = run([egret_bin, "help", "bogus"])
    assert r.returncode == 1 and "unknown command 'bogus'" in r.stderr
    assert run([egret_bin, "help"]).stdout == whole == run([egret_bin, "-h"]).stdout


def test_each_command_accepts_the_options_its_help_names_and_no_other(egret_bin):
    """The parser and the help are one list: every option a command's help names is accepted
    (`egret COMMAND OPTION VALUE --help` prints the help), every option of another command's help
    is refused naming the command, and every option the commands' code reads (a "--name" in
    cli/*.cpp) is in some command's help."""
    documented = {c: command_help(egret_bin, c)[1] for c in COMMANDS}
    everything = set().union(*documented.values())
    for command in COMMANDS:
        for option in sorted(everything):
            value = documented[command].get(option, (None,))[0]
            r = run([egret_bin, command, option] + ([] if value is None else ["1"]) + ["--help"])
            if option in documented[command]:
                assert r.returncode == 0 and r.stdout.startswith("usage:"), (command, option,
                                                                             r.stderr)
            else:
                assert r.returncode == 1, (command, option)
                assert f"unknown option '{option}' for egret {command} (see egret {command} " \
                    "--help)" in r.stderr, r.stderr
    read_by_code = set()
    for source in (ROOT / "cli").glob("*.cpp"):
        read_by_code |= set(re.findall(r'"(--[a-z][a-z-]*)"', source.read_text()))
    assert read_by_code - {"--help", "--version"} <= everything, \
        read_by_code - everything - {"--help", "--version"}
    # A positional argument only where the help shows one.
    r = run([egret_bin, "demo", "extra"])
    assert r.returncode == 1 and "unexpected argument 'extra' (see egret demo --help)" in r.stderr
    r = run([egret_bin, "inspect", "a.h5", "b.h5"])
    assert r.returncode == 1 and "unexpected argument 'b.h5'" in r.stderr


def test_camera_formats_agree_in_the_readers_the_help_and_the_readme(egret_bin):
    """The formats detect_camera_format tells apart are the ones read_camera_file dispatches,
    egret.CAMERA_FORMATS (kCameraFormats) lists, `egret --help` and `egret inspect --help` name
    and the README's tour lists, in the same order: a reader added without its name fails here."""
    source = (ROOT / "camera" / "formats" / "camera_readers.cpp").read_text()
    detect = source.split("std::string detect_camera_format(")[1].split("\n}\n")[0]
    dispatch = source.split("CameraFileInfo read_camera_file(")[1].split("\n}\n")[0]
    ids = [i for i, _ in egret.CAMERA_FORMATS]
    assert set(re.findall(r'return "(\w+)";', detect)) == set(ids)
    assert set(re.findall(r'format == "(\w+)"', dispatch)) == set(ids)
    names = [name for _, name in egret.CAMERA_FORMATS]
    listed = ", ".join(names[:-1]) + " and " + names[-1]
    for args in (["--help"], ["inspect", "--help"]):
        text = " ".join(run([egret_bin, *args]).stdout.split())
        assert f"found by header and extension: {listed} (fields x, y, p, t)." in text, args
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"summarises a recording in any of these formats: {listed} (fields x, y, p, t)" \
        in readme


def test_the_help_examples_run(egret_bin, tmp_path):
    """Every command's example runs as printed, in a folder laid out like the repository (its
    examples/ and build/), in the help's order so that inspect and estimate find the files
    emulate and simulate wrote; except the main job's and classify's (a minute each; the README
    tour runs both, scripts/tour.sh)."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "build").symlink_to(pathlib.Path(egret_bin).resolve().parent)
    order = ["demo", "simulate", "emulate", "inspect", "estimate", "train", "export-nir",
             "import-nir"]
    for command in order:
        example = command_help(egret_bin, command)[2]
        r = run(example.split(), cwd=tmp_path)
        assert r.returncode == 0, (example, r.stderr)
    assert (tmp_path / "estimate.json").stat().st_size > 0
    assert (tmp_path / "out" / "delay_copy" / "checkpoint.h5").stat().st_size > 0
    assert (tmp_path / "lif_imported.json").stat().st_size > 0


def test_export_nir_help_names_the_families_each_nir_neuron_takes(egret_bin):
    """The help's list comes from the family registry (NirDescription); it matches docs/nir.md's
    mapping table: lif and su_snn (whose gates never close) as LIF, cuba_lif and cuba_li as
    NIR's CubaLIF family of nodes."""
    usage, _, _ = command_help(egret_bin, "export-nir")
    text = " ".join(usage.split())
    assert ("lif layers and su_snn layers whose gates never close become LI + Threshold with "
            "the soft reset as a recurrent Scale;") in text, text
    assert "cuba_lif layers and cuba_li layers become CubaLIF, LIF, IF, CubaLI, LI or I;" in text
    table = (ROOT / "docs" / "nir.md").read_text()
    for row in ("| `su_snn` whose gates never close", "| `cuba_lif`", "| `cuba_li`", "| `lif`"):
        assert row in table, row
