#!/usr/bin/env bash
# libFuzzer targets for every reader and parser (docs/fuzzing.md).
#
#   scripts/fuzz.sh build                        clang, ASan + UBSan, into build-fuzz/
#   scripts/fuzz.sh list                         the targets
#   scripts/fuzz.sh replay [TARGET...]           every corpus file through its target once;
#                                                fails on any crash, hang or excess allocation
#   scripts/fuzz.sh run TARGET SECONDS           one time-boxed run
#   scripts/fuzz.sh campaign SECONDS [TARGET...] time-boxed runs in parallel (FUZZ_JOBS, default
#                                                nproc), then the figures per target
#
# Corpora (tests/fuzz/corpus/): seeds/<target>/ (small valid files), regressions/<target>/
# (inputs that once broke a reader) and found/<target>/ (minimized reproducers of findings not
# yet fixed). A run fuzzes a working copy in build-fuzz/corpus/<target>/ that starts from those
# and from the first kilobytes of the real recordings in ../shared/data when present; what it
# finds goes to build-fuzz/findings/<target>/ (crash-*, timeout-*, oom-*, leak-*), emptied at
# the start of each run of that target.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EGRET_FUZZ_BUILD:-$root/build-fuzz}"
corpus_src="$root/tests/fuzz/corpus"
shared_data="$root/../shared/data"
# The limits every input must stay within: 5 s, 256 MB resident, no single allocation > 256 MB.
limits=(-rss_limit_mb=256 -malloc_limit_mb=256 -timeout=5)
# ASan's quarantine of freed memory (256 MB by default) would count against the RSS limit.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0:quarantine_size_mb=32}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# libhdf5 1.10 leaks small blocks on its own error paths for corrupt files (H5F_open,
# H5D__layout_oh_read; not reachable from egret), so leak detection is off for the HDF5 targets.
# egret's handles are RAII (io/hdf5/hdf5.hpp); a handle it failed to close stays reachable through
# libhdf5's id tables and would not show as a leak anyway.
target_flags() {
  case "$1" in
    hdf5_events | hdf5_trace | checkpoint | nir_graph) echo "-detect_leaks=0" ;;
  esac
}

targets() {
  sed -n '/^set(EGRET_FUZZ_TARGETS$/,/)/p' "$root/tests/fuzz/CMakeLists.txt" |
    sed '1d;s/)//' | tr -s ' \n' '\n' | sed '/^$/d'
}

usage() {
  sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

cmd_build() {
  bash "$root/scripts/setup.sh"
  local jobs
  jobs="$(nproc 2>/dev/null || echo 2)"
  if [ ! -f "$build/CMakeCache.txt" ]; then
    CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DEGRET_FUZZ=ON -DEGRET_BUILD_TESTS=OFF -DEGRET_BUILD_BENCH=OFF -DEGRET_BUILD_PYTHON=OFF \
      >/dev/null
  fi
  cmake --build "$build" --target egret_fuzz -j "$jobs" 2>&1 |
    grep -Ev '^\[|^-- |Consolidate compiler|Built target' || true
  test "${PIPESTATUS[0]}" -eq 0
}

binary() {
  local b="$build/fuzz/fuzz_$1"
  if [ ! -x "$b" ]; then
    echo "fuzz: no target '$1' in $build (scripts/fuzz.sh build; targets: $(targets | tr '\n' ' '))" >&2
    exit 2
  fi
  echo "$b"
}

# First bytes of the real recordings in ../shared/data (not in the repository: their licences
# are the datasets'), written into the working corpus of their target.
add_shared_prefixes() {
  local t="$1" dir="$2" src
  [ -d "$shared_data" ] || return 0
  if [ "$t" = nir_graph ]; then  # whole files: the real NIR graphs are small
    for src in "$shared_data"/nir/*.nir; do
      [ -f "$src" ] && cp "$src" "$dir/shared-$(basename "$src")"
    done
    return 0
  fi
  case "$t" in
    evt2) src=prophesee/evt2_sample.raw ;;
    evt3) src=prophesee/evt3_sample.raw ;;
    prophesee_dat) src=tonic/sample_ncars.dat ;;
    nmnist_bin) src=tonic/sample_nmnist.bin ;;
    aedat2) src=tonic/sample_aedat_header.aedat ;;
    aedat4) src=tonic/sample.aedat4 ;;
    gesture_labels) src=dvsgesture/user01_natural_labels.csv ;;
    frame_list) src=davis_frames/images.txt ;;
    png) src=davis_frames/images/frame_00000000.png ;;
    *) return 0 ;;
  esac
  [ -f "$shared_data/$src" ] || return 0
  local n
  for n in 1024 4096 16384 65536; do
    head -c "$n" "$shared_data/$src" >"$dir/shared-$(basename "$src")-$n"
  done
}

# The working corpus of a target: seeds, regressions, found reproducers, shared prefixes. A file
# that still fails (a finding not yet fixed; `replay` reports it) is left out: libFuzzer would
# stop on it while loading the corpus.
prepare_corpus() {
  local t="$1" dir="$build/corpus/$1" kind f bin
  bin="$(binary "$t")"
  mkdir -p "$dir" "$build/findings/$t"
  for kind in seeds regressions found; do
    [ -d "$corpus_src/$kind/$t" ] || continue
    while IFS= read -r -d '' f; do
      if "$bin" "${limits[@]}" $(target_flags "$t") -runs=1 "$f" >/dev/null 2>&1; then
        cp -f "$f" "$dir/"
      else
        rm -f "$dir/$(basename "$f")"
        echo "fuzz: $t: left out of the working corpus (fails): ${f#"$root"/}" >&2
      fi
    done < <(find "$corpus_src/$kind/$t" -maxdepth 1 -type f -print0)
  done
  add_shared_prefixes "$t" "$dir"
  echo "$dir"
}

cmd_replay() {
  local -a list
  if [ $# -gt 0 ]; then list=("$@"); else mapfile -t list < <(targets); fi
  local t kind f bin failed=0 files total=0
  for t in "${list[@]}"; do
    bin="$(binary "$t")"
    files=0
    for kind in seeds regressions found; do
      [ -d "$corpus_src/$kind/$t" ] || continue
      while IFS= read -r -d '' f; do
        files=$((files + 1))
        if ! "$bin" "${limits[@]}" $(target_flags "$t") -runs=1 "$f" >"$build/replay.log" 2>&1; then
          echo "REPLAY FAILURE: $t: ${f#"$root"/}"
          grep -E 'ERROR: |runtime error:|invariant violated|out-of-memory|timeout|SUMMARY' \
            "$build/replay.log" | head -5 | sed 's/^/    /'
          failed=$((failed + 1))
        fi
      done < <(find "$corpus_src/$kind/$t" -maxdepth 1 -type f -print0 | sort -z)
    done
    total=$((total + files))
    printf '%-16s %4d files\n' "$t" "$files"
  done
  echo "replay: $total files, $failed failures"
  [ "$failed" -eq 0 ]
}

# One time-boxed run of a target; restarts after a finding until the time is used (at most 20
# findings). Writes build-fuzz/logs/<target>.log and a figures line to .../<target>.figures.
cmd_run() {
  [ $# -ge 2 ] || usage
  local t="$1" seconds="$2"
  shift 2
  local bin dir findings log start now left execs=0 restarts=0 rc
  bin="$(binary "$t")"
  dir="$(prepare_corpus "$t")"
  findings="$build/findings/$t"  # this run's findings only: copy them away to keep them
  rm -rf "$findings"
  mkdir -p "$findings" "$build/logs"
  log="$build/logs/$t.log"
  : >"$log"
  start=$(date +%s)
  while :; do
    now=$(date +%s)
    left=$((seconds - (now - start)))
    [ "$left" -gt 0 ] || break
    rc=0
    "$bin" "${limits[@]}" $(target_flags "$t") -max_total_time="$left" -print_final_stats=1 \
      -artifact_prefix="$findings/" "$@" "$dir" >>"$log" 2>&1 || rc=$?
    execs=$((execs + $(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 |
      grep -o '[0-9]*$' || echo 0)))
    [ "$rc" -ne 0 ] || break
    restarts=$((restarts + 1))
    [ "$restarts" -lt 20 ] || break
  done
  local last cov ft crashes corpus_files
  last="$(grep -E '^#[0-9]+' "$log" | tail -1 || true)"
  cov="$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*' || echo 0)"
  ft="$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*' || echo 0)"
  corpus_files="$(find "$dir" -maxdepth 1 -type f | wc -l)"
  crashes="$(find "$findings" -maxdepth 1 -type f | wc -l)"
  printf '%-16s %6ss %10d execs %8d exec/s cov %6s ft %6s corpus %5d findings %3d\n' \
    "$t" "$seconds" "$execs" $((execs / (seconds > 0 ? seconds : 1))) "${cov:-0}" "${ft:-0}" \
    "$corpus_files" "$crashes" | tee "$build/logs/$t.figures"
}

cmd_campaign() {
  [ $# -ge 1 ] || usage
  local seconds="$1"
  shift
  local -a list
  if [ $# -gt 0 ]; then list=("$@"); else mapfile -t list < <(targets); fi
  local jobs="${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}" t
  for t in "${list[@]}"; do binary "$t" >/dev/null; done
  echo "campaign: ${#list[@]} targets x ${seconds} s, $jobs in parallel; logs in $build/logs"
  printf '%s\n' "${list[@]}" |
    xargs -P "$jobs" -I{} bash "${BASH_SOURCE[0]}" run {} "$seconds" >/dev/null
  local total=0 n
  for t in "${list[@]}"; do
    cat "$build/logs/$t.figures"
    n="$(find "$build/findings/$t" -maxdepth 1 -type f | wc -l)"
    total=$((total + n))
  done
  echo "campaign: $total findings in $build/findings/"
  [ "$total" -eq 0 ]
}

[ $# -ge 1 ] || usage
command="$1"
shift
case "$command" in
  build) cmd_build ;;
  list) targets ;;
  replay) cmd_replay "$@" ;;
  run) cmd_run "$@" ;;
  campaign) cmd_campaign "$@" ;;
  *) usage ;;
esac
