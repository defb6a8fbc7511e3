#!/usr/bin/env bash
# A dead run's claims are taken over once their heartbeat lapses, not before (issue 15 item 1).
# A run is killed (-9) mid-sweep; its claims are then made to look like another host's with a
# heartbeat 30 s old. `run --resume --claim-timeout 1h` refuses (exit 4) naming that owner and
# changes nothing; `run --resume --claim-timeout 10s` takes the cells over, says from whom, and
# finishes the experiment with every cell measured once. (A kill -9 on this host needs no
# wait: cli_kill9_then_resume_runs_the_rest resumes at once, the owner's pid being gone.)
set -euo pipefail
kvsweep=$1
scenario=$2
here=$(dirname "$0")
dir=$(mktemp -d)
killed=
trap '[ -n "$killed" ] && kill -KILL "$killed" 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.err; do echo "== $f"; cat "$f"; done; exit 1; }
. "$here/store_checks.sh"
db="$dir/s.db"

"$kvsweep" --db "$db" run "$scenario" --reports-dir "$dir/reports" --no-print \
  >"$dir/killed.out" 2>"$dir/killed.err" &
killed=$!
wait_for "$db" "select count(*) from cells where status = 'done'"
{ kill -KILL "$killed"; wait "$killed"; } 2>/dev/null || true
killed=
sql "$db" "update cell_claims set host = 'gone-host', pid = 1, heartbeat_s = strftime('%s', 'now') - 30"
claimed=$(sql "$db" "select count(*) from cell_claims")
[ "$claimed" -ge 1 ] || fail "no claims after the kill"
before=$(sql "$db" "select group_concat(status || ':' || (select count(*) from requests r where r.cell_id = c.id), ',') from cells c")

status=0
"$kvsweep" --db "$db" run --resume "$scenario" --claim-timeout 1h --reports-dir "$dir/reports" \
  --no-print >"$dir/refused.out" 2>"$dir/refused.err" || status=$?
[ "$status" -eq 4 ] || fail "a resume before the heartbeat lapsed exited $status, want 4"
grep -q "is being run by another kvsweep: pid 1 on gone-host (run [0-9a-f]*), last heartbeat [0-9]* s ago; not resuming it" "$dir/refused.err" ||
  fail "the refusal does not name the owner"
after=$(sql "$db" "select group_concat(status || ':' || (select count(*) from requests r where r.cell_id = c.id), ',') from cells c")
[ "$after" = "$before" ] || fail "the refused resume changed the cells: $before -> $after"
[ "$(sql "$db" "select count(*) from cell_claims where host = 'gone-host'")" -eq "$claimed" ] ||
  fail "the refused resume changed the claims"
echo "refused: $(grep -m1 'being run by' "$dir/refused.err")"

status=0
"$kvsweep" --db "$db" run --resume "$scenario" --claim-timeout 10s --reports-dir "$dir/reports" \
  --no-print >"$dir/takeover.out" 2>"$dir/takeover.err" || status=$?
[ "$status" -eq 0 ] || fail "the takeover exited $status, want 0"
grep -q "taking over from a run that is gone: pid 1 on gone-host (run [0-9a-f]*), last heartbeat [0-9]* s ago" "$dir/takeover.err" ||
  fail "the takeover does not say from whom"
[ "$(sql "$db" "select count(*) from experiments")" -eq 1 ] || fail "the takeover made an experiment"
[ "$(sql "$db" "select status from experiments")" = done ] || fail "experiment not done"
check_measured_once "$db" 2
echo "took over: $(grep -m1 'taking over' "$dir/takeover.err")"
echo "PASS"
