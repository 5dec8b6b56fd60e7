#!/usr/bin/env bash
# The main job: sets up, builds, and runs `egret` (with no arguments: the built-in default run).
# Any arguments are passed to egret, e.g. `bash scripts/run.sh simulate --config net.json ...`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/build.sh" "$root/build"
exec "$root/build/egret" "$@"
