#!/usr/bin/env bash
# Runs each libFuzzer target of the fuzz build for SECONDS (default 600), one after another, one process
# each; builds nothing (first: cmake --preset fuzz && cmake --build --preset fuzz). For each target it
# prints the final coverage (cov: edges, ft: features), the executions and the corpus size, and keeps the
# full log in BUILD/tests/fuzz/<target>.log; a finding is written as BUILD/tests/fuzz/<target>-crash-<hash>
# (or -timeout-, -oom-, -leak-). Exit status 1 when any target found something.
#   tests/fuzz/run_fuzzers.sh [SECONDS] [BUILD_DIR] [TARGET...]     (targets: scenario obj checkpoint)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-600}
build=${2:-$root/build/fuzz}
shift $(( $# < 2 ? $# : 2 ))
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(scenario obj checkpoint)
bin=$build/tests/fuzz

# the scenario seeds are the .toml files of scenarios/ and tests/scenarios/bad/ (and regressions/), copied
# into one folder: libFuzzer reads folders recursively and would take scenarios/meshes/*.obj too
mkdir -p "$bin/seeds_scenario"
rm -f "$bin/seeds_scenario"/*
cp "$root"/scenarios/*.toml "$root"/tests/scenarios/bad/*.toml "$bin/seeds_scenario/"
[ -d "$here/regressions" ] && cp "$here"/regressions/* "$bin/seeds_scenario/"
declare -A seeds=(
  [scenario]="$bin/seeds_scenario"
  [obj]="$here/corpus/obj"
  [checkpoint]="$here/corpus/checkpoint"
)

status=0
for t in "${targets[@]}"; do
  exe=$bin/fuzz_$t
  [ -x "$exe" ] || { echo "run_fuzzers: $exe missing (cmake --build --preset fuzz)" >&2; exit 2; }
  corpus=$bin/corpus_$t
  log=$bin/$t.log
  mkdir -p "$corpus"
  echo "== fuzz_$t: ${seconds} s, log $log"
  # the leak suppressions are those of the asan preset (HDF5 loses buffers on damaged files)
  # allocator_may_return_null: an absurd allocation (HDF5 trusts sizes in a damaged file) fails as it does
  # with glibc, and HDF5 reports an error, instead of ASan stopping the run
  (cd "$root" && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 OMP_NUM_THREADS=1 \
     LSAN_OPTIONS=suppressions=$root/tests/lsan_suppressions.txt \
     UBSAN_OPTIONS=print_stacktrace=1 \
     "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -dict="$here/$t.dict" -artifact_prefix="$bin/$t-" "$corpus" "${seeds[$t]}") > "$log" 2>&1
  rc=$?
  [ $rc -ne 0 ] && status=1
  final=$(grep -E '^#[0-9]+' "$log" | tail -1)
  echo "   exit $rc; last status line: $final"
  grep -E '^(Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" | sed 's/^/   /'
  echo "   corpus: $(find "$corpus" -type f | wc -l) files, $(du -sk "$corpus" | cut -f1) KiB in $corpus"
  if [ $rc -ne 0 ]; then
    grep -E 'ERROR: |SUMMARY: |runtime error|Test unit written' "$log" | head -5 | sed 's/^/   /'
  fi
done
exit $status
