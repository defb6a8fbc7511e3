#!/usr/bin/env bash
# The nightly CronJob's own script (taken out of deploy/cronjob.yaml), run three "nights" on
# the embedded fleet with the real kvsweep: the first passes with nothing to compare, the
# second (same speed) passes, the third (a slower profile under the same name) fails with the
# regression, as the Job would. Two real runs of one scenario differ by noise, so the nights
# compare with --min-change 50 (COMPARE_ARGS): noise passes, a 70B profile does not. A night
# is 24 requests a level: too few for a p95 (200 are needed, 10 beyond it), which compare calls
# "insufficient data" instead of once failing night 2 on "ttft_p95_ms 3.60 -> 6.84 ms". Every
# night ends with a prune that keeps the raw rows of the last night only (history still shows
# every night) and a backup of the store, which opens with every night stored so far.
# Usage: nightly_loop_test.sh KVSWEEP SOURCE_DIR WORK_DIR
set -u
kvsweep=$1 source=$2 work=$3
rm -rf "$work" && mkdir -p "$work/bin" || exit 2
fail() { echo "FAIL: $*"; exit 1; }
ln -s "$kvsweep" "$work/bin/kvsweep"
/usr/bin/python3 -c '
import sys, yaml
cron = yaml.safe_load(open(sys.argv[1]))
print(cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"][0])
' "$source/deploy/cronjob.yaml" >"$work/nightly.sh" || fail "cannot read the script out of cronjob.yaml"

night() {  # $1: scenario file
  PATH="$work/bin:$PATH" KVSWEEP_DB="$work/kvsweep.db" REPORTS_DIR="$work/reports" \
    BACKUP_DB="$work/backup/kvsweep.db" PRUNE_ARGS="--keep-last 1" \
    SCENARIO="$1" SCENARIO_NAME=compare-cli COMPARE_ARGS="--min-change 50" /bin/sh "$work/nightly.sh" >"$work/out" 2>&1
}
fixtures=$source/tests/reports/fixtures
night "$fixtures/compare_fast.yaml"; status=$?
cat "$work/out"
[ $status -eq 0 ] || fail "night 1 exited $status, want 0"
grep -q "first night of compare-cli" "$work/out" || fail "night 1 does not say there is nothing to compare"
night "$fixtures/compare_fast.yaml"; status=$?
cat "$work/out"
[ $status -eq 0 ] || fail "night 2 (same speed) exited $status, want 0"
grep -q "ttft_p95_ms" "$work/out" || fail "night 2 printed no history"
[ "$(grep -cE "^(random|prefix-hash) +1 +ttft_p95_ms .*\(n=24/24, need 200\) +insufficient data$" "$work/out")" -eq 2 ] ||
  fail "night 2 calls a p95 of 24 requests a side (want insufficient data, n=24/24, need 200)"
grep -q "backed up to $work/backup/kvsweep.db" "$work/out" || fail "night 2 made no backup"
backed_up=$("$kvsweep" --db "$work/backup/kvsweep.db" runs | grep -c compare-cli)
[ "$backed_up" -eq 2 ] || fail "the backup after night 2 holds $backed_up nights, want 2"
grep -q "^pruned experiment 1 " "$work/out" || fail "night 2 did not prune night 1's raw rows"
night "$fixtures/compare_slow.yaml"; status=$?
cat "$work/out"
[ $status -eq 1 ] || fail "night 3 (slower profile) exited $status, want 1"
grep -Eq "ttft_mean_ms .* regression" "$work/out" || fail "night 3 does not name the regression"
grep -q "kvsweep compare exited 1" "$work/out" || fail "night 3 does not say why the Job failed"
points=$("$kvsweep" --db "$work/kvsweep.db" history compare-cli --metric ttft_p95_ms -f json |
  python3 -c 'import json, sys; print(len({p["experiment_id"] for s in json.load(sys.stdin)["series"] for p in s["points"] if p.get("value") is not None}))')
[ "$points" -eq 3 ] || fail "history after two prunes shows $points nights, want 3"
echo "PASS: three nights: first passes, same speed passes, slower fails the Job"
