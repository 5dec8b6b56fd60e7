#!/usr/bin/env bash
# The two instrumented builds of scripts/test.sh (which runs it in the background): ROOT/build-sanitize
# (clang, AddressSanitizer + UndefinedBehaviorSanitizer, the tests and the libFuzzer targets), then
# ROOT/build-tsan (ThreadSanitizer, the parallel batch and training tests).
# usage: bash scripts/test_builds.sh ROOT
set -euo pipefail
root="$1"
stage() { printf '== %s (at %dm%02ds of the background builds)\n' "$1" $((SECONDS / 60)) $((SECONDS % 60)); }

# One clang build serves the sanitizer tests and the fuzz targets: EGRET_FUZZ implies ASan +
# UBSan and only adds coverage instrumentation, so the tests run the same checks. Line tables
# only: file:line in the reports, about 10 % less compile time than -g. -O2 rather than ASan's
# usual -O1: clang took about as long per file, and the Eigen/Odeint code of the exp-kernel
# tests, which dominate the sanitizer stage, runs markedly faster (docs/speed.md, CI time).
stage "build (clang, AddressSanitizer + UndefinedBehaviorSanitizer, libFuzzer targets)"
CC=clang CXX=clang++ EGRET_TARGETS="egret egret_tests egret_fuzz" bash "$root/scripts/build.sh" \
  "$root/build-sanitize" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEGRET_FUZZ=ON -DEGRET_BUILD_TESTS=ON \
  -DEGRET_BUILD_BENCH=OFF -DEGRET_BUILD_PYTHON=OFF \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG"

# -g1 (line tables only) is enough for file:line in TSan's reports and compiles in 2m41s instead
# of 3m59s with -g on the 2-core CI machine.
stage "build (ThreadSanitizer: the parallel batch and training tests)"
EGRET_TARGETS="egret_tsan_tests" bash "$root/scripts/build.sh" "$root/build-tsan" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEGRET_TSAN=ON -DEGRET_BUILD_BENCH=OFF \
  -DEGRET_BUILD_PYTHON=OFF "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
stage "done"
