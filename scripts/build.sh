#!/usr/bin/env bash
# Configures and builds egret into build/ (or the folder given as $1, with extra CMake flags
# after it). Incremental: a second run only rebuilds what changed. EGRET_TARGETS (space-separated)
# builds only those targets instead of all.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
shift || true
bash "$root/scripts/setup.sh"
jobs="$(nproc 2>/dev/null || echo 2)"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
else
  cmake -S "$root" -B "$build" "$@" >/dev/null
fi
targets=()
for t in ${EGRET_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "$jobs" "${targets[@]}" 2>&1 | grep -Ev '^\[|^-- |Consolidate compiler|Built target' || true
test "${PIPESTATUS[0]}" -eq 0
