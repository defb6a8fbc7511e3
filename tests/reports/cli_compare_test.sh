#!/usr/bin/env bash
# kvsweep compare on the real binary: a run against itself is "no change" (exit 0); against
# the same scenario on a slower profile it is "regression" (exit 1). Also report --format.
# Usage: cli_compare_test.sh KVSWEEP FIXTURE_DIR WORK_DIR
set -u
kvsweep=$1 fixtures=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
db=$work/cli.db
fail() { echo "FAIL: $*"; exit 1; }

"$kvsweep" --db "$db" run "$fixtures/compare_fast.yaml" --no-print >/dev/null 2>&1 || fail "fast run"
"$kvsweep" --db "$db" run "$fixtures/compare_slow.yaml" --no-print >/dev/null 2>&1 || fail "slow run"

out=$("$kvsweep" --db "$db" compare 1 1); status=$?
echo "$out"
[ $status -eq 0 ] || fail "compare 1 1 exited $status, want 0"
grep -q "regression" <<<"$(grep -v '^[0-9]* regression' <<<"$out")" && fail "self-compare shows a regression"
grep -q "no change" <<<"$out" || fail "self-compare does not say no change"

out=$("$kvsweep" --db "$db" compare 1 2); status=$?
echo "$out"
[ $status -eq 1 ] || fail "compare 1 2 exited $status, want 1"
grep -Eq "ttft_mean_ms .* regression" <<<"$out" || fail "no TTFT regression reported"

"$kvsweep" --db "$db" compare 1:1 2:1 --format json | grep -q '"regression": true' || fail "cell compare json"
"$kvsweep" --db "$db" report 1 --format json | grep -q '"schema_version": 1' || fail "report --format json"
"$kvsweep" --db "$db" report 1 --format csv | head -1 | grep -q '^mode,prefix_regime,concurrency' || fail "csv"
"$kvsweep" --db "$db" report 1 --format html --out "$work/r.html" 2>/dev/null && grep -q "<svg" "$work/r.html" || fail "html"
"$kvsweep" --db "$db" history compare-cli --metric ttft_mean_ms | grep -q "prefix-hash" || fail "history"
"$kvsweep" --db "$db" export 1 --dir "$work/export" 2>/dev/null || fail "export"
ls "$work/export" | grep -q "llmd-br-v0.2.json" || fail "export files"
echo "PASS"
