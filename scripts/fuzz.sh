#!/usr/bin/env bash
# Runs every fuzz target for longer than the test suite does (docs/reliability.md, "Fuzzing"):
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [OUT_DIR]      (default 300 s, build/fuzz-runs/<date>)
#   ACCEL_FUZZ_ONLY="dlpack selector" scripts/fuzz.sh 60  (only those targets; api_sequence is one of the names)
# Needs the asan build (cmake --workflow --preset asan, or scripts/test.sh). Each libFuzzer target starts from its
# seed corpus and a kept corpus in OUT_DIR/<target>/corpus (new inputs are added there; crashes go to
# OUT_DIR/<target>/), and the API-sequence fuzzer runs random sequences for the same time. Prints a table: execs,
# coverage (libFuzzer's cov and ft), corpus size and crashes per target; exits 1 when anything crashed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
out=${2:-build/fuzz-runs/$(date +%Y%m%d-%H%M%S)}
build=build/asan
list=$build/fuzzers.txt
if [[ ! -f $list || ! -x $build/bin/accel_api_fuzzer ]]; then
  echo "fuzz.sh: no fuzzers in $build; build them first: cmake --preset asan && cmake --build --preset asan" >&2
  exit 2
fi
mkdir -p "$out"
summary=$out/summary.txt
printf '%-12s %12s %10s %8s %8s %8s %8s\n' target execs exec/s cov ft corpus crashes | tee "$summary"
failed=0
only=" ${ACCEL_FUZZ_ONLY:-} "
wanted() { [[ $only == "  " || $only == *" $1 "* ]]; }
while read -r name binary max_len seeds; do
  wanted "$name" || continue
  dir=$out/$name
  mkdir -p "$dir/corpus"
  # shellcheck disable=SC2086  # the seed folders are separate arguments
  if ASAN_OPTIONS=detect_leaks=1 "$binary" -max_total_time="$seconds" -max_len="$max_len" -timeout=30 \
    -print_final_stats=1 -artifact_prefix="$dir/" "$dir/corpus" $seeds >"$dir/log.txt" 2>&1; then :; else failed=1; fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log.txt" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log.txt" | tail -1)
  last=$(grep -E '^#[0-9]+' "$dir/log.txt" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  crashes=$(find "$dir" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  corpus=$(find "$dir/corpus" -type f | wc -l)
  printf '%-12s %12s %10s %8s %8s %8s %8s\n' "$name" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$corpus" \
    "$crashes" | tee -a "$summary"
  [[ $crashes -eq 0 ]] || failed=1
done <"$list"

# The API-sequence fuzzer: random call sequences for the same time (its figures are inputs and API calls).
if ! wanted api_sequence; then
  echo "fuzz.sh: logs, corpora and crashes in $out"
  exit $failed
fi
dir=$out/api_sequence
mkdir -p "$dir"
if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 "$build/bin/accel_api_fuzzer" --seed "$RANDOM" \
  --seconds "$seconds" --max-len 4096 tests/fuzz/corpus/api_sequence >"$dir/log.txt" 2>&1; then
  crashes=0
else
  crashes=1
  failed=1
fi
line=$(grep '^api-sequence:' "$dir/log.txt" || true)
inputs=$(sed -n 's/.*replayed, \([0-9]*\) generated.*/\1/p' <<<"$line")
calls=$(sed -n 's/.* \([0-9]*\) API calls.*/\1/p' <<<"$line")
printf '%-12s %12s %10s %8s %8s %8s %8s   (%s API calls)\n' api_sequence "${inputs:-?}" - - - - "$crashes" \
  "${calls:-?}" | tee -a "$summary"
echo "fuzz.sh: logs, corpora and crashes in $out"
exit $failed
