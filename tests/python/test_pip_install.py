"""`pip install .` works offline with Debian's pip: a virtual environment that sees the system
packages (numpy, torch), `pip install --no-build-isolation` of the repository (setup.py builds
the extension with the project's CMake), then egret imports from the installed location and
simulates the same events as the in-tree build. Under scripts/test.sh the compiler runs through
ccache, so the build's files, compiled with the same flags as the release build's, come from the
cache; run alone, the test compiles them (about 4 minutes on 2 cores)."""
import json
import subprocess
import sys

import numpy as np

import egret
from conftest import ROOT


def test_pip_install_offline(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    r = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-build-isolation", "--no-index",
                        str(ROOT)], capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    cfg = json.loads((ROOT / "examples" / "two_layer.json").read_text())
    code = (
        "import json, sys, numpy as np, egret, egret.torch\n"
        "assert 'site-packages' in egret.__file__, egret.__file__\n"
        f"net = egret.Network({json.dumps(json.dumps(cfg))})\n"
        "r = net.simulate(np.array([1.0, 2.0, 5.0]), np.array([0, 1, 0]), end_time=50.0)\n"
        "print(json.dumps(r['time'].tolist()))\n")
    out = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    installed = json.loads(out.stdout)
    here = egret.Network(cfg).simulate(np.array([1.0, 2.0, 5.0]), np.array([0, 1, 0]), end_time=50.0)
    assert installed == here["time"].tolist() and len(installed) > 0
