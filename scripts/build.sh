#!/usr/bin/env bash
# Configures and builds egret into build/ (or the folder given as $1, with extra CMake flags
# after it). Incremental: a second run only rebuilds what changed. EGRET_TARGETS (space-separated)
# builds only those targets instead of all. Shows the build's progress (a line about every 15 s:
# the percentage, the time so far and what it is compiling), compiler warnings and errors, and how
# long the build took.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
shift || true
bash "$root/scripts/setup.sh"
jobs="$(nproc 2>/dev/null || echo 2)"
start=$SECONDS

# "6 min 12 s" since the start of the build.
elapsed() {
  local s=$((SECONDS - start))
  if [ "$s" -ge 60 ]; then echo "$((s / 60)) min $((s % 60)) s"; else echo "$s s"; fi
}

# CMake's output, made readable: its progress lines ("[ 45%] Building CXX object ...", or
# Ninja's "[12/80] ...") become one line about every `every` seconds, also while one long file
# compiles and nothing arrives; its own chatter is dropped; everything else (warnings, errors)
# passes through.
show_progress() {
  local every=15 last=$SECONDS line percent="0 %" doing="" status wait_for
  while true; do
    wait_for=$((last + every - SECONDS))  # until the next line is due
    if IFS= read -r -t "$((wait_for > 0 ? wait_for : 1))" line; then
      if [[ $line =~ ^\[\ *([0-9]+)%\]\ (.*)$ ]]; then
        percent="${BASH_REMATCH[1]} %"
        [[ ${BASH_REMATCH[2]} == Built\ target* ]] || doing="${BASH_REMATCH[2]}"
      elif [[ $line =~ ^\[([0-9]+)/([0-9]+)\]\ (.*)$ ]]; then
        percent="${BASH_REMATCH[1]} of ${BASH_REMATCH[2]} steps"
        doing="${BASH_REMATCH[3]}"
      elif [[ ! $line =~ ^(--\ |Consolidate\ compiler|Built\ target) ]]; then
        printf '%s\n' "$line"
      fi
    else
      status=$?
      [ "$status" -gt 128 ] || break  # end of the output; > 128: the timeout
    fi
    if [ $((SECONDS - last)) -ge "$every" ]; then
      # "Building CXX object models/CMakeFiles/egret_models.dir/Unity/unity_1_cxx.cxx.o" ->
      # "compiling egret_models: Unity/unity_1_cxx.cxx"
      if [[ $doing =~ ^Building\ [A-Z]+\ object\ (.*/)?CMakeFiles/([^/]+)\.dir/(.*)\.o$ ]]; then
        doing="compiling ${BASH_REMATCH[2]}: ${BASH_REMATCH[3]}"
      fi
      printf 'egret build: %s, %s (%s)\n' "$percent" "$(elapsed)" "$doing"
      last=$SECONDS
    fi
  done
}

if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "egret build: a first build into $build: it takes several minutes (about 10 min on 2" \
    "cores); progress about every 15 s"
  echo "egret build: configuring (CMake)"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
else
  cmake -S "$root" -B "$build" "$@" >/dev/null
fi
targets=()
for t in ${EGRET_TARGETS:-}; do targets+=(--target "$t"); done
set +e
cmake --build "$build" -j "$jobs" "${targets[@]}" 2>&1 | show_progress
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "egret build: FAILED after $(elapsed) (exit status $status; the errors are above)" >&2
  exit "$status"
fi
echo "egret build: built in $(elapsed) (${EGRET_TARGETS:-all targets}, $build)"
