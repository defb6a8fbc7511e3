#!/usr/bin/env bash
# Runs every libFuzzer target of a `make fuzz` build for a bounded time, seeded from
# fuzz/corpus/<target>/ and the test fixtures that fit it. Exits non-zero on the first target
# that finds a crash, a leak or a sanitizer report; the input is kept in BUILD/findings/.
# Usage: scripts/run-fuzzers.sh BUILD_DIR SECONDS_EACH
set -uo pipefail
build=$1 seconds=$2
repo=$(cd "$(dirname "$0")/.." && pwd)
findings=$build/findings
mkdir -p "$findings"

# Seed directories per target: its own corpus, plus real files of the format it reads.
seeds_of() {
  local name=$1
  echo "$repo/fuzz/corpus/$name"
  case $name in
    fuzz_scenario_loader) echo "$repo/scenarios" "$repo/tests/fixtures" ;;
    fuzz_profile_loader) echo "$repo/profiles" ;;
    fuzz_outside_result) echo "$repo/tests/fixtures/seeds" ;;
    fuzz_dataset_sharegpt) echo "$repo/tests/fixtures/datasets/sharegpt.json" ;;
    fuzz_dataset_chat_threads) echo "$repo/tests/fixtures/datasets/chat_threads.json" ;;
    fuzz_dataset_jsonl) echo "$repo/tests/fixtures/datasets/prompts.jsonl" ;;
    fuzz_dataset_mooncake) echo "$repo/tests/fixtures/datasets/mooncake.jsonl" ;;
  esac
}

status=0
for fuzzer in "$build"/fuzz/fuzz_*; do
  [ -x "$fuzzer" ] || continue
  name=$(basename "$fuzzer")
  corpus=$build/corpus/$name
  seeds=$build/seeds/$name
  rm -rf "$seeds" && mkdir -p "$corpus" "$seeds"
  # libFuzzer reads seed directories; single fixture files are copied into one.
  for s in $(seeds_of "$name"); do
    if [ -d "$s" ]; then
      find "$s" -maxdepth 1 -type f -size -256k -exec cp {} "$seeds/" \;
    elif [ -f "$s" ]; then
      cp "$s" "$seeds/"
    fi
  done
  echo "== $name: ${seconds}s, $(ls "$seeds" | wc -l) seeds"
  if ! "$fuzzer" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$findings/$name-" "$corpus" "$seeds" \
      >"$build/$name.log" 2>&1; then
    echo "FAIL: $name found a problem; input in $findings/, log $build/$name.log"
    tail -40 "$build/$name.log"
    status=1
  else
    grep -E '^stat::(number_of_executed_units|new_units_added):' "$build/$name.log" | tr '\n' ' '
    echo
  fi
done
exit $status
