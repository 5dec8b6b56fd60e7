"""The refusals a user meets on the command line (issue 38): each names the file (and key), in
one wording per kind, and nothing runs silently on nothing.
- a configuration value outside its key's documented range, whatever the value (-10, 0, below the
  floor);
- an empty events file (an error) or one with only a header (a run without input, said on
  stderr); a 0-byte recording is "empty" for inspect, simulate and egret.read_events;
- an output file in a folder that does not exist is an error naming the folder, which is not
  created (--trace, --dump-input, --json); a run directory (--out) is still created;
- a recording that does not record its sensor size says so instead of "0x0"."""
import json

import pytest

import egret
from conftest import ROOT, run

NCARS_DAT = ROOT.parent / "shared" / "data" / "tonic" / "sample_ncars.dat"


def network(path, **layer):
    cfg = {"input_channels": 2, "layers": [dict({"type": "continuous_egru", "units": 3}, **layer)]}
    path.write_text(json.dumps(cfg))
    return path


@pytest.mark.parametrize("tau_m", ["-10", "0", "0.0005"])
def test_a_time_constant_below_the_documented_minimum_is_refused_in_one_wording(
        egret_bin, tmp_path, tau_m):
    net = tmp_path / "net.json"
    net.write_text('{"input_channels": 2, "layers": [{"type": "continuous_egru", "units": 3, '
                   f'"tau_m": {tau_m}}}]}}')
    (tmp_path / "in.csv").write_text("0.5,0,1\n")
    r = run([egret_bin, "simulate", "--config", net, "--input", tmp_path / "in.csv"])
    assert r.returncode == 1
    assert r.stderr == (f"egret: error: {net}: layers[0].tau_m: {tau_m} is outside [0.001, inf) "
                        "(state time constant [ms])\n")


def test_an_empty_events_file_is_refused_and_a_header_only_one_warns(egret_bin, tmp_path):
    net = network(tmp_path / "net.json")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    r = run([egret_bin, "simulate", "--config", net, "--input", empty])
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == f"egret: error: {empty}: empty file (0 bytes): no events\n"
    header = tmp_path / "header.csv"
    header.write_text("t_ms,channel,value\n")
    r = run([egret_bin, "simulate", "--config", net, "--input", header])
    assert r.returncode == 0, r.stderr
    assert r.stderr == f"egret: warning: {header}: no events: the network runs without input\n"
    assert "external input events: 0" in r.stdout


def test_an_empty_recording_is_empty_everywhere(egret_bin, tmp_path):
    rec = tmp_path / "empty.aedat4"
    rec.write_bytes(b"")
    message = f"{rec}: byte 0: empty file (0 bytes): no events"
    r = run([egret_bin, "inspect", rec])
    assert r.returncode == 1 and r.stderr == f"egret: error: {message}\n"
    with pytest.raises(RuntimeError, match="empty file"):
        egret.read_events(str(rec))
    # simulate falls back to the CSV reader for a file no camera reader claims: still "empty".
    r = run([egret_bin, "simulate", "--config", network(tmp_path / "net.json"), "--input", rec])
    assert r.returncode == 1
    assert r.stderr == f"egret: error: {rec}: empty file (0 bytes): no events\n"


def test_an_output_file_in_a_missing_folder_is_refused_naming_the_folder(egret_bin, tmp_path):
    net = network(tmp_path / "net.json")
    (tmp_path / "in.csv").write_text("0.5,0,1\n")
    missing = tmp_path / "missing"
    for option, name in (("--trace", "t.csv"), ("--trace", "t.h5"), ("--dump-input", "in.csv")):
        r = run([egret_bin, "simulate", "--config", net, "--input", tmp_path / "in.csv", option,
                 missing / name])
        assert r.returncode == 1 and r.stdout == ""
        assert r.stderr == (f"egret: error: {option} {missing / name}: the folder {missing} does "
                            "not exist\n")
        assert not missing.exists()
    r = run([egret_bin, "simulate", "--config", net, "--input", tmp_path / "in.csv", "--trace",
             tmp_path / "t.h5"])
    assert r.returncode == 0, r.stderr
    r = run([egret_bin, "estimate", tmp_path / "t.h5", "--json", missing / "e.json"])
    assert r.returncode == 1
    assert r.stderr == f"egret: error: --json {missing / 'e.json'}: the folder {missing} does not exist\n"
    assert not missing.exists()


def test_a_recording_without_its_sensor_size_says_so(egret_bin):
    ev, size = egret.read_events(str(NCARS_DAT))
    assert size == (0, 0)
    r = run([egret_bin, "inspect", NCARS_DAT])
    assert r.returncode == 0, r.stderr
    assert "0x0" not in r.stdout
    reach = f"{int(ev['x'].max()) + 1}x{int(ev['y'].max()) + 1}"
    assert (f"{NCARS_DAT}: dat event-camera recording, sensor size not recorded in the file (the "
            f"events reach {reach}: inferred, a lower bound), {len(ev)} events") in r.stdout


def test_a_run_directory_is_still_created(egret_bin, tmp_path):
    out = tmp_path / "runs" / "first"
    cfg = {"seed": 3, "input_channels": 3, "layers": [{"type": "continuous_egru", "units": 6}],
           "readout_classes": 2,
           "task": {"name": "delay_copy", "bits": 2, "train_trials": 4, "test_trials": 2},
           "training": {"epochs": 1, "loss": "binary_cross_entropy"}, "output": {"dir": str(out)}}
    (tmp_path / "train.json").write_text(json.dumps(cfg))
    r = run([egret_bin, "train", "--config", tmp_path / "train.json"])
    assert r.returncode == 0, r.stderr
    assert (out / "checkpoint.h5").stat().st_size > 0
