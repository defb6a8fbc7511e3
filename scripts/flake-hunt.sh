#!/usr/bin/env bash
# Hunts flaky tests: runs the whole suite (`ctest -j2`) ROUNDS times (default 5) in an existing
# build directory while a CPU hog keeps one more core's worth of work runnable beside it, as a
# busy CI machine would. Prints each round's failures and, at the end, every test that failed
# in any round with how often; exits 1 when any did. Not part of .ci/run: five rounds of the
# suite take over an hour on a 2-core machine.
# Usage: scripts/flake-hunt.sh [BUILD_DIR] [ROUNDS]      (defaults: build 5)
# The hog is `nice`d busy loops (HOG_PROCESSES, default 1): it takes CPU time, not memory, and
# stops with the script (also on Ctrl-C). CTEST_ARGS narrows a hunt: CTEST_ARGS='-R Calibrate'.
set -uo pipefail
build=${1:-build}
rounds=${2:-5}
hogs=${HOG_PROCESSES:-1}
[ -f "$build/CTestTestfile.cmake" ] || {
  echo "flake-hunt: $build is not a configured build directory (run \`make build\` first)" >&2
  exit 2
}
case $rounds in '' | *[!0-9]*) echo "flake-hunt: ROUNDS must be a whole number" >&2; exit 2 ;; esac

hog_pids=()
stop_hogs() {
  for pid in "${hog_pids[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
}
trap 'stop_hogs; exit 130' INT TERM
trap stop_hogs EXIT
for ((i = 0; i < hogs; i++)); do
  nice -n 5 bash -c 'while :; do :; done' &
  hog_pids+=($!)
done

logs=$(mktemp -d)
declare -A failed_count=()
for ((round = 1; round <= rounds; round++)); do
  start=$(date +%s)
  # shellcheck disable=SC2086  # CTEST_ARGS is a list of ctest options, split on purpose
  (cd "$build" && ctest -j2 --output-on-failure ${CTEST_ARGS:-}) >"$logs/round-$round.log" 2>&1
  status=$?
  mapfile -t failures < <(sed -nE 's/^[[:space:]]*[0-9]+ - (.+) \((Failed|Timeout|SEGFAULT|Subprocess aborted|Exception|Child aborted|Not Run)\).*$/\1 (\2)/p' \
    "$logs/round-$round.log")
  echo "round $round of $rounds: exit $status, $(( $(date +%s) - start )) s, ${#failures[@]} failed"
  for f in "${failures[@]}"; do
    echo "  $f"
    failed_count["$f"]=$(( ${failed_count["$f"]:-0} + 1 ))
  done
done

echo "logs: $logs"
if [ "${#failed_count[@]}" -eq 0 ]; then
  echo "flake-hunt: no test failed in $rounds rounds beside $hogs CPU hog(s)"
  exit 0
fi
echo "flake-hunt: tests that failed (rounds of $rounds):"
for f in "${!failed_count[@]}"; do echo "  ${failed_count[$f]}  $f"; done | sort -rn
exit 1
