#!/usr/bin/env bash
# The whole test suite: sets up, builds, runs the C++ tests (ctest), the Python tests (pytest) and
# the README's tour (scripts/tour.py --quick), then builds and runs the C++ tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer, builds the fuzz targets (clang), replays their
# corpora and fuzzes each target briefly (docs/fuzzing.md), and runs the parallel batch and
# training tests under ThreadSanitizer. `--quick` skips the sanitizer, fuzz and ThreadSanitizer passes.
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
trap 'stage "end (exit status $?)"' EXIT

stage "style (clang-format, the repository's .clang-format)"
if git -C "$root" rev-parse >/dev/null 2>&1; then
  mapfile -t sources < <(cd "$root" && git ls-files '*.cpp' '*.hpp')
else
  mapfile -t sources < <(cd "$root" && find events models sim adjoint io cli bench tests examples \
    python -name '*.cpp' -o -name '*.hpp' 2>/dev/null)
fi
(cd "$root" && clang-format --dry-run --Werror "${sources[@]}")

stage "build (release)"
bash "$root/scripts/build.sh" "$root/build"
stage "C++ tests (release)"
ctest --test-dir "$root/build" --output-on-failure -j "$jobs"

stage "Python tests (pytest with Debian's /usr/bin/python3: the HDF5 files through h5py)"
EGRET_BIN="$root/build/egret" /usr/bin/python3 -m pytest -q -p no:cacheprovider "$root/tests/python"

stage "README tour (scripts/tour.py --quick: every command of the tour, as written)"
/usr/bin/python3 "$root/scripts/tour.py" --quick --build "$root/build"

if [ "$quick" -eq 0 ]; then
  # One clang build serves the sanitizer tests and the fuzz targets: EGRET_FUZZ implies
  # ASan + UBSan and only adds coverage instrumentation, so the tests run the same checks.
  stage "build (clang, AddressSanitizer + UndefinedBehaviorSanitizer, libFuzzer targets)"
  export EGRET_FUZZ_BUILD="$root/build-sanitize"
  # -O1 with line tables only: ASan's usual level, file:line in its reports, and about 10 % less
  # compile time than -O2 -g.
  CC=clang CXX=clang++ EGRET_TARGETS="egret egret_tests egret_fuzz" bash "$root/scripts/build.sh" \
    "$EGRET_FUZZ_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEGRET_FUZZ=ON -DEGRET_BUILD_TESTS=ON \
    -DEGRET_BUILD_BENCH=OFF -DEGRET_BUILD_PYTHON=OFF \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG"
  stage "C++ tests (AddressSanitizer + UndefinedBehaviorSanitizer)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$EGRET_FUZZ_BUILD" --output-on-failure -j "$jobs"

  stage "fuzz targets (libFuzzer, same build): replay the corpora, 10 s each"
  bash "$root/scripts/fuzz.sh" replay
  FUZZ_JOBS="$jobs" bash "$root/scripts/fuzz.sh" campaign 10

  stage "build (ThreadSanitizer: the parallel batch and training tests)"
  # -g1 (line tables only) is enough for file:line in TSan's reports and compiles in 2m41s
  # instead of 3m59s with -g on the 2-core CI machine.
  EGRET_TARGETS="egret_tsan_tests" bash "$root/scripts/build.sh" "$root/build-tsan" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEGRET_TSAN=ON -DEGRET_BUILD_BENCH=OFF \
    -DEGRET_BUILD_PYTHON=OFF "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
  stage "ThreadSanitizer tests"
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$root/tests/tsan.supp" \
    "$root/build-tsan/tests/egret_tsan_tests" --gtest_brief=1 \
    --gtest_filter='Determinism.*:Training.SameResultForOneAndTwoThreads:Training.ResumedRunEqualsUninterruptedRun:Training.DelayCopyExampleReachesFullHeldOutAccuracy'
fi
