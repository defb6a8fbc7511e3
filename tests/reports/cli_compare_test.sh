#!/usr/bin/env bash
# kvsweep compare on the real binary: a run against itself is "no change" (exit 0); against
# the same scenario on a slower profile it is "regression" (exit 1); against a sweep with no
# level in common, or with too few samples for every metric, "nothing compared" (exit 3).
# Also report --format, and the answer first in what `report` and `run` print.
# Usage: cli_compare_test.sh KVSWEEP FIXTURE_DIR WORK_DIR
set -u
kvsweep=$1 fixtures=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
db=$work/cli.db
fail() { echo "FAIL: $*"; exit 1; }

"$kvsweep" --db "$db" run "$fixtures/compare_fast.yaml" --no-print >/dev/null 2>&1 || fail "fast run"
"$kvsweep" --db "$db" run "$fixtures/compare_slow.yaml" --no-print >/dev/null 2>&1 || fail "slow run"
"$kvsweep" --db "$db" run "$fixtures/compare_other.yaml" --no-print >/dev/null 2>&1 || fail "other run"

out=$("$kvsweep" --db "$db" compare 1 1); status=$?
echo "$out"
[ $status -eq 0 ] || fail "compare 1 1 exited $status, want 0"
grep -q "regression" <<<"$(grep -v '^[0-9]* regression' <<<"$out")" && fail "self-compare shows a regression"
grep -q "no change" <<<"$out" || fail "self-compare does not say no change"

out=$("$kvsweep" --db "$db" compare 1 2); status=$?
echo "$out"
[ $status -eq 1 ] || fail "compare 1 2 exited $status, want 1"
grep -Eq "ttft_mean_ms .* regression" <<<"$out" || fail "no TTFT regression reported"

out=$("$kvsweep" --db "$db" compare 1 3); status=$?
echo "$out"
[ $status -eq 3 ] || fail "compare 1 3 (no level in common) exited $status, want 3"
grep -q "regression(s)" <<<"$out" && fail "nothing in common still prints a verdict count"
grep -q "^nothing compared: no (strategy, concurrency) level in common" <<<"$out" ||
  fail "compare 1 3 does not say why nothing was compared"
out=$("$kvsweep" --db "$db" compare 1 3 --format json 2>/dev/null); status=$?
[ $status -eq 3 ] || fail "compare 1 3 --format json exited $status, want 3"
grep -q '"compared": false' <<<"$out" || fail "json does not say nothing was compared"
out=$("$kvsweep" --db "$db" compare 1 2 --min-samples 1000); status=$?
echo "$out"
[ $status -eq 3 ] || fail "compare 1 2 --min-samples 1000 exited $status, want 3"
grep -q "^nothing compared: .*fewer than 1000" <<<"$out" || fail "all-insufficient reason missing"
"$kvsweep" compare --help | grep -q "Exit status: 0 .* 3 nothing compared" ||
  fail "compare --help does not document the exit status"

"$kvsweep" --db "$db" compare 1:1 2:1 --format json | grep -q '"regression": true' || fail "cell compare json"
"$kvsweep" --db "$db" report 1 --format json | grep -q '"schema_version": 1' || fail "report --format json"
"$kvsweep" --db "$db" report 1 --format csv | head -1 | grep -q '^mode,prefix_regime,concurrency' || fail "csv"
"$kvsweep" --db "$db" report 1 --format html --out "$work/r.html" 2>/dev/null && grep -q "<svg" "$work/r.html" || fail "html"
"$kvsweep" --db "$db" history compare-cli --metric ttft_mean_ms | grep -q "prefix-hash" || fail "history"
"$kvsweep" --db "$db" export 1 --dir "$work/export" 2>/dev/null || fail "export"
ls "$work/export" | grep -q "llmd-br-v0.2.1.json" || fail "export files"
# The answer first in the terminal: where the figures come from, then the verdict per level,
# before the setup and the details; `run` ends its console output with the verdict again.
check_answer_first() {  # $1: what was printed, $2: which command printed it
  sed -n 1p <<<"$1" | grep -qx "# kvsweep report: compare-cli" || fail "$2: first line"
  sed -n 3p <<<"$1" | grep -q "^Simulated: these figures come from kvsweep's embedded fleet (target kind sim, profile demo, 2 replicas)" \
    || fail "$2: line 3 does not say the figures are simulated"
  sed -n 5p <<<"$1" | grep -qx "## Verdict" || fail "$2: the verdict is not first"
  sed -n 7p <<<"$1" | grep -q "^- Concurrency 1: " || fail "$2: no verdict line"
  [ "$(grep -n -m1 '^| concurrency | strategy |' <<<"$1" | cut -d: -f1)" -lt \
    "$(grep -n -m1 '^## Setup' <<<"$1" | cut -d: -f1)" ] || fail "$2: the compact table is not before the setup"
}
check_answer_first "$("$kvsweep" --db "$db" report 1 --out -)" "report"
out=$("$kvsweep" --db "$work/run.db" run "$fixtures/compare_fast.yaml" --reports-dir "$work/reports" 2>"$work/run.err") \
  || fail "printing run"
check_answer_first "$out" "run"
tail -1 "$work/run.err" | grep -q "^  Concurrency 1: " || fail "run: the console does not end with the verdict"
echo "PASS"
