"""Shared fixtures: the egret binary (EGRET_BIN, default build/egret) and the repository root."""
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The compiled package lives beside the egret binary: <build>/python/egret.
BUILD = pathlib.Path(os.environ.get("EGRET_BIN", ROOT / "build" / "egret")).resolve().parent
sys.path.insert(0, str(BUILD / "python"))


@pytest.fixture(scope="session")
def egret_bin():
    path = pathlib.Path(os.environ.get("EGRET_BIN", ROOT / "build" / "egret"))
    if not path.exists():
        pytest.fail(f"egret binary not found at {path}; build first (bash scripts/build.sh) or set EGRET_BIN")
    return path


@pytest.fixture(scope="session")
def root():
    return ROOT


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
