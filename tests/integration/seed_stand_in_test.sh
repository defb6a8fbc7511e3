#!/usr/bin/env bash
# A seed scenario whose dataset file cannot be shipped, run on the simulated fleet as shipped:
# the file is absent, so the run sends the scenario's generated stand-in and its report says
# so, naming the absent file. MODE predict runs `kvsweep predict` on the scenario (full size,
# virtual time); MODE report checks a report a `--target sim` rehearsal already wrote.
# Usage: seed_stand_in_test.sh KVSWEEP SCENARIO WORK_DIR predict KIND FILE
#        seed_stand_in_test.sh KVSWEEP REPORT.md - report KIND FILE
set -u
kvsweep=$1 input=$2 work=$3 mode=$4 kind=$5 file=$6
fail() { echo "FAIL: $*"; exit 1; }

case $mode in
predict)
  rm -rf "$work" && mkdir -p "$work" || exit 2
  out=$("$kvsweep" --db "$work/p.db" predict "$input" -o "$work" --no-print 2>&1) ||
    fail "predict exited $?: $(tail -5 <<<"$out")"
  grep -Eq "experiment [0-9]+ done: [0-9]+ cells done, 0 failed" <<<"$out" ||
    fail "not every cell done: $(tail -5 <<<"$out")"
  report=$(ls "$work"/*.md 2>/dev/null | head -1)
  [ -n "$report" ] || fail "no report written in $work"
  ;;
report) report=$input ;;
*) fail "unknown mode $mode" ;;
esac

[ -f "$report" ] || fail "no report $report"
grep -q "generated stand-in for the absent $kind file .*/$file: synthetic-multiturn: " "$report" ||
  fail "$report does not say the stand-in for $file was sent: $(grep -m3 -i dataset "$report")"
echo "PASS: $(grep -o "generated stand-in for the absent [^|]*" "$report" | head -1)"
