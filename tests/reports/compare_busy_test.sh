#!/usr/bin/env bash
# Two runs of one scenario on the same build compare as "no change" at every metric on a busy
# machine (issue 39, "Regressions that never cry wolf"): a CPU hog, a bounded busy loop started
# here and killed at the end, runs beside both runs on the embedded fleet, and `kvsweep
# compare` must call no metric anything but "no change" and exit 0.
# Usage: compare_busy_test.sh KVSWEEP FIXTURE_DIR WORK_DIR
set -u
kvsweep=$1 fixtures=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
db=$work/busy.db
fail() { echo "FAIL: $*"; exit 1; }

# The hog: one core's worth of busy loop, at most 5 minutes even if this script is killed.
timeout 300 /bin/sh -c 'while :; do :; done' &
hog=$!
trap 'kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null' EXIT
sleep 0.5
kill -0 "$hog" 2>/dev/null || fail "the CPU hog did not start"

for night in 1 2; do
  "$kvsweep" --db "$db" run "$fixtures/compare_busy.yaml" --no-print >"$work/run$night.out" 2>&1 ||
    { cat "$work/run$night.out"; fail "run $night"; }
done
kill -0 "$hog" 2>/dev/null || fail "the CPU hog ended before both runs did"

out=$("$kvsweep" --db "$db" compare 1 2); status=$?
echo "$out"
[ $status -eq 0 ] || fail "compare of two runs of one scenario exited $status, want 0"
metrics=$(grep -cE '^least-load +4 ' <<<"$out")
[ "$metrics" -eq 5 ] || fail "compare printed $metrics metric lines, want 5"
not_same=$(grep -E '^least-load +4 ' <<<"$out" | grep -vc 'no change')
[ "$not_same" -eq 0 ] || fail "$not_same metric(s) of two runs of one scenario are not 'no change'"
grep -q "^0 regression(s), 0 improvement(s), 5 no change, 0 insufficient data" <<<"$out" ||
  fail "the count line is not five times no change"
echo "PASS: two runs beside a CPU hog: no change at every metric"
