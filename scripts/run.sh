#!/usr/bin/env bash
# The main job: sets up, builds, and runs `egret` (with no arguments: DVS gesture classification
# on the built-in synthetic set, then the figures). Any arguments are passed to egret instead,
# e.g. `bash scripts/run.sh --dataset /path/to/DvsGesture` or `bash scripts/run.sh demo`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Only the egret command and the Python package (build/python/egret): the tests and benchmarks
# are built by scripts/test.sh or a plain scripts/build.sh, and a first run.sh takes minutes less.
EGRET_TARGETS="${EGRET_TARGETS:-egret _egret}" bash "$root/scripts/build.sh" "$root/build"
cd "$root"
if [ $# -eq 0 ]; then
  "$root/build/egret"
  /usr/bin/python3 "$root/scripts/plot_gesture.py" out/dvs_gesture
else
  exec "$root/build/egret" "$@"
fi
