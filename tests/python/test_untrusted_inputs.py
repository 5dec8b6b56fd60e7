"""The regression corpus of untrusted files (tests/fuzz/corpus/regressions) through the CLI
(`egret inspect`, `egret simulate`) and the Python module, each run in a child process limited to
256 MB of address space and 5 s: a clear error naming the file and the problem. Also .npy event
arrays written by numpy with times that int64 microseconds cannot hold."""
import resource
import subprocess
import sys

import numpy as np
import pytest

from conftest import BUILD, ROOT

import egret  # noqa: E402  (conftest puts the build's module on the path)

CORPUS = ROOT / "tests" / "fuzz" / "corpus" / "regressions"
LIMIT = 256 * 1024 * 1024


def limited(cmd):
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))

    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=5,
                          preexec_fn=cap)


def python(code):
    return limited([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(BUILD / 'python')!r})\n"
                    "import egret\n" + code])


READ_ERRORS = {
    "aedat31/aedat31_tsoffset_overflow.aedat": "header without a #Format: RAW line",
    "aedat4/aedat4_1GiB_packet_claim.aedat4": "its size 1073741824 exceeds the 0 bytes left in the file",
    "evt3/evt3_format_overflow.raw": "header field 'height' is not a sensor size 1..65535",
    "npy_events/npy_descr_hang.npy": "npy header ends inside the descr (it never closes)",
}


@pytest.mark.parametrize("name", sorted(READ_ERRORS))
def test_corpus_file_is_a_clear_error_in_inspect_and_python(egret_bin, name):
    path = CORPUS / name
    r = limited([egret_bin, "inspect", path])
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"{path}: byte " in r.stderr and READ_ERRORS[name] in r.stderr, r.stderr
    r = python(f"""
try:
    egret.read_events({str(path)!r})
except RuntimeError as e:
    print(e)
""")
    assert r.returncode == 0, r.stderr
    assert f"{path}: byte " in r.stdout and READ_ERRORS[name] in r.stdout, r.stdout


def test_to_frames_over_two_to_the_49_microseconds_is_a_clear_error(egret_bin):
    path = CORPUS / "npy_events/to_frames_heap_overflow_t0_1_2p49.npy"
    r = limited([egret_bin, "inspect", path])
    assert r.returncode == 0 and "3 events" in r.stdout and "-0.000" not in r.stdout, r.stdout
    r = python(f"""
ev, _ = egret.read_events({str(path)!r})
assert list(ev["t"]) == [0, 1, 2**49]
try:
    egret.to_frames(ev, (128, 128), 1)
except ValueError as e:
    print(e)
""")
    assert r.returncode == 0, r.stderr
    assert ("to_frames: 562949953421313 bins of 1 us x 2 polarities x 128x128 pixels exceed the "
            "cap of 2^28 counts") in r.stdout, r.stdout


def test_events_csv_with_nan_first_line_is_refused(egret_bin):
    path = CORPUS / "event_csv/events_first_line_nan_dropped.csv"
    r = limited([egret_bin, "simulate", "--config", ROOT / "examples" / "two_layer.json",
                 "--input", path])
    assert r.returncode != 0
    assert f"{path}:1: time is not finite: 'nan,0'" in r.stderr, r.stderr


def save_events(path, t, dtype_t, p=None, p_dtype="<i1"):
    a = np.zeros(len(t), dtype=[("x", "<u2"), ("y", "<u2"), ("p", p_dtype), ("t", dtype_t)])
    a["t"] = t
    a["p"] = 1 if p is None else p
    np.save(path, a)


@pytest.mark.parametrize("bad", [1e300, 1e308, float("nan"), float("inf"), -float("inf")])
def test_npy_float_times_that_int64_cannot_hold_are_refused(egret_bin, tmp_path, bad):
    path = tmp_path / "times.npy"
    save_events(path, [5.0, bad], "<f8")
    r = limited([egret_bin, "inspect", path])
    assert r.returncode == 1 and "-0.000" not in r.stdout
    # Records of 2 + 2 + 1 + 8 bytes end the file: record 1 starts 13 bytes before its end.
    at = path.stat().st_size - 13
    assert f"{path}: byte {at}: record 1: field 't' = " in r.stderr, r.stderr
    assert "is not a whole number in the int64 range" in r.stderr
    with pytest.raises(RuntimeError, match="record 1: field 't'"):
        egret.read_events(str(path))


def test_npy_times_beyond_the_camera_range_and_uint64_max_are_refused(tmp_path):
    path = tmp_path / "times.npy"
    save_events(path, [0, 2**53 + 1], "<i8")
    with pytest.raises(RuntimeError, match=r"record 1: time 9007199254740993 us outside \[0, 2\^53\] us"):
        egret.read_events(str(path))
    save_events(path, [0, 2**64 - 1], "<u8")
    with pytest.raises(RuntimeError, match="record 1: field 't' = 18446744073709551615"):
        egret.read_events(str(path))
    save_events(path, [0, 1], "<i8", p=[1, 2**64 - 1], p_dtype="<u8")
    with pytest.raises(RuntimeError, match="record 1: field 'p' = 18446744073709551615"):
        egret.read_events(str(path))
    save_events(path, [0, 2**53], "<i8")
    ev, _ = egret.read_events(str(path))
    assert list(ev["t"]) == [0, 2**53]


def test_uint64_fields_beyond_int64_are_refused_not_wrapped():
    # 2^64 - 1 once wrapped to -1, which was accepted as polarity OFF.
    ev = np.zeros(2, dtype=[("x", "<u8"), ("y", "<u8"), ("p", "<u8"), ("t", "<u8")])
    ev["t"] = [0, 1]
    ev["p"] = [1, 2**64 - 1]
    with pytest.raises(ValueError, match="event 1 has field 'p' = 18446744073709551615"):
        egret.as_camera_events(ev)
    ev["p"] = [1, 0]
    assert list(egret.as_camera_events(ev)["p"]) == [1, 0]
