#!/usr/bin/env bash
# The whole test suite: sets up, builds, runs the C++ tests (ctest), the Python tests (pytest) and
# the README's tour (scripts/tour.py --quick), then builds and runs the C++ tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer, builds the fuzz targets (clang), replays their
# corpora and fuzzes each target briefly (docs/fuzzing.md), and runs the parallel batch and
# training tests under ThreadSanitizer. The two instrumented builds (scripts/test_builds.sh) compile in
# the background while the Python tests run. `--quick` skips the sanitizer, fuzz and ThreadSanitizer
# passes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
quick=0
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    *) echo "usage: bash scripts/test.sh [--quick]" >&2; exit 2 ;;
  esac
done
jobs="$(nproc 2>/dev/null || echo 2)"
# Each stage's header says when it started, so a slow CI run shows where its time went.
stage() { printf '== %s (at %dm%02ds)\n' "$1" $((SECONDS / 60)) $((SECONDS % 60)); }
sanitize_pid=""
# A failing stage ends the run: the background builds (below) end with it.
finish() {
  local status=$?
  if [ -n "$sanitize_pid" ] && kill -0 "$sanitize_pid" 2>/dev/null; then
    kill -- "-$sanitize_pid" 2>/dev/null || kill "$sanitize_pid" 2>/dev/null || true
  fi
  stage "end (exit status $status)"
}
trap finish EXIT

stage "setup (scripts/setup.sh: the Debian packages, when any is missing)"
bash "$root/scripts/setup.sh"

stage "style (clang-format, the repository's .clang-format)"
if git -C "$root" rev-parse >/dev/null 2>&1; then
  mapfile -t sources < <(cd "$root" && git ls-files '*.cpp' '*.hpp')
else
  mapfile -t sources < <(cd "$root" && find events models sim adjoint io cli bench tests examples \
    python -name '*.cpp' -o -name '*.hpp' 2>/dev/null)
fi
(cd "$root" && clang-format --dry-run --Werror "${sources[@]}")

# With ccache (scripts/setup.sh installs it) the release build's compiler output is kept in
# build/.ccache. The `pip install .` test (tests/python/test_pip_install.py) builds the same files
# with the same flags in build-pip/ (setup.py); CCACHE_BASEDIR makes the paths in the two builds'
# commands relative to their folders, which sit at the same depth, so the commands are equal and
# that build takes seconds instead of about 4 minutes of both cores (the niced sanitizer build
# gets them). The instrumented builds below run without ccache: nothing of theirs is shared.
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_DIR="$root/build/.ccache" CCACHE_BASEDIR="$root" CCACHE_MAXSIZE=2G
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi

stage "build (release)"
bash "$root/scripts/build.sh" "$root/build"
stage "C++ tests (release)"
ctest --test-dir "$root/build" --output-on-failure -j "$jobs"

# The sanitizer and ThreadSanitizer builds compile in the background (niced) while the Python
# tests and the tour run: those mostly keep one core busy, and the builds take the other. On the
# 2-core CI machine this saves about a quarter of the run.
if [ "$quick" -eq 0 ]; then
  sanitize_log="$(mktemp)"
  stage "build (in the background, niced, until the tour has run): clang with AddressSanitizer + UndefinedBehaviorSanitizer and the libFuzzer targets, then ThreadSanitizer"
  # In a process group of its own (set -m), so that finish() can end the compilers too.
  set -m
  env -u CMAKE_C_COMPILER_LAUNCHER -u CMAKE_CXX_COMPILER_LAUNCHER \
    nice -n 10 bash "$root/scripts/test_builds.sh" "$root" >"$sanitize_log" 2>&1 &
  sanitize_pid=$!
  set +m
fi

stage "Python tests (pytest with Debian's /usr/bin/python3: the HDF5 files through h5py)"
EGRET_BIN="$root/build/egret" /usr/bin/python3 -m pytest -q -p no:cacheprovider "$root/tests/python"

stage "README tour (scripts/tour.py --quick: every command of the tour, as written)"
/usr/bin/python3 "$root/scripts/tour.py" --quick --build "$root/build"

if [ "$quick" -eq 0 ]; then
  stage "the background builds: their output"
  build_status=0
  wait "$sanitize_pid" || build_status=$?
  sanitize_pid=""
  cat "$sanitize_log"
  rm -f "$sanitize_log"
  if [ "$build_status" -ne 0 ]; then
    echo "test.sh: the sanitizer or ThreadSanitizer build failed (exit status $build_status)" >&2
    exit "$build_status"
  fi

  export EGRET_FUZZ_BUILD="$root/build-sanitize"
  stage "C++ tests (AddressSanitizer + UndefinedBehaviorSanitizer)"
  # On a fresh build ctest knows no test's duration: tests/sanitizer_test_costs.txt tells it
  # which to start first.
  costs="$EGRET_FUZZ_BUILD/Testing/Temporary/CTestCostData.txt"
  if [ ! -f "$costs" ]; then
    mkdir -p "$(dirname "$costs")"
    { grep -v '^#' "$root/tests/sanitizer_test_costs.txt" | awk 'NF == 2 { print $1, 1, $2 }'
      echo "---"; } >"$costs"
  fi
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$EGRET_FUZZ_BUILD" --output-on-failure -j "$jobs"

  stage "fuzz targets (libFuzzer, same build): replay the corpora, 10 s each"
  bash "$root/scripts/fuzz.sh" replay
  FUZZ_JOBS="$jobs" bash "$root/scripts/fuzz.sh" campaign 10

  stage "ThreadSanitizer tests"
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$root/tests/tsan.supp" \
    "$root/build-tsan/tests/egret_tsan_tests" --gtest_brief=1 \
    --gtest_filter='Determinism.*:Training.SameResultForOneAndTwoThreads:Training.ResumedRunEqualsUninterruptedRun:Training.DelayCopyExampleReachesFullHeldOutAccuracy'
fi
