#!/usr/bin/env bash
# Installs the Debian packages egret needs to build and test. Idempotent and quick when
# everything is present: apt is only touched for missing packages. Needs root (or sudo) the
# first time on a fresh Debian bookworm machine.
set -euo pipefail

PACKAGES=(
  cmake g++ make pkg-config            # toolchain
  ccache                               # scripts/test.sh: the pip-install test reuses the build
  libeigen3-dev                        # dense linear algebra (Eigen 3.4)
  libtbb-dev                           # parallel batches (oneTBB 2021)
  libboost-dev                         # Boost.Odeint (reference integrator, exp kernel), Math
  nlohmann-json3-dev                   # configuration files
  libhdf5-dev                          # traces and checkpoints (HDF5 C API)
  liblz4-dev                           # AEDAT 4.0 event files
  libpng-dev                           # frames for the DVS sensor model
  libgtest-dev                         # C++ tests
  clang-format                         # style check in the test script
  clang libclang-rt-14-dev             # fuzz targets (scripts/fuzz.sh: libFuzzer, ASan, UBSan)
  python3 python3-numpy python3-matplotlib  # figures (scripts/plot_*.py, Debian's /usr/bin/python3)
  python3-h5py python3-pytest          # Python-side tests of the HDF5 files
  pybind11-dev python3-dev             # the Python module (build/python/egret)
  python3-torch python3-tqdm           # egret.torch, distributed training, Python examples
  dataset-fashion-mnist                # bench/compare_cells.py (sequential Fashion-MNIST)
  python3-pip python3-venv python3-setuptools python3-wheel  # `pip install .` (offline)
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

start=$SECONDS
echo "egret setup: installing ${#missing[@]} Debian packages: ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "egret setup: missing packages (${missing[*]}) and not root; run as root or install them" >&2
    exit 1
  fi
fi

# apt-get's output as a line about every 10 s (its latest line and the time so far), also while it
# unpacks one large package and prints nothing; its errors (stderr) pass through.
show_progress() {
  local every=10 last=$SECONDS line latest="" status wait_for
  while true; do
    wait_for=$((last + every - SECONDS))  # until the next line is due
    if IFS= read -r -t "$((wait_for > 0 ? wait_for : 1))" line; then
      latest="$line"
    else
      status=$?
      [ "$status" -gt 128 ] || break  # end of the output; > 128: the timeout
    fi
    if [ $((SECONDS - last)) -ge "$every" ]; then
      echo "egret setup: $((SECONDS - start)) s: ${latest:-working}" >&2
      last=$SECONDS
    fi
  done
}

export DEBIAN_FRONTEND=noninteractive
echo "egret setup: apt-get update (the package lists)" >&2
$SUDO apt-get update -q | show_progress
echo "egret setup: apt-get install (download, then unpack and configure each package)" >&2
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" | show_progress
echo "egret setup: done in $((SECONDS - start)) s" >&2
