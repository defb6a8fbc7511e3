#!/usr/bin/env bash
# Two `kvsweep run --resume` on one store at once never measure a cell twice (issue 15 item 1).
# 1. A resume started while the first run still goes (a retried Kubernetes Job) is refused
#    with exit status 4, naming the first run's pid and host; the first run ends done (0).
# 2. After a kill -9, two resumes started at the same moment: one continues the experiment,
#    the other is refused (4), or, when it starts after the first finished, runs a new
#    experiment of its own (0).
# Either way every request index appears once per cell, each cell holds exactly its 2 warm-up
# requests and one "before" scrape per series, every cell ends done and no claim is left.
set -euo pipefail
kvsweep=$1
scenario=$2
here=$(dirname "$0")
dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.err; do echo "== $f"; cat "$f"; done; exit 1; }
. "$here/store_checks.sh"

run_resume() {  # name db: runs in the background, its exit status in $dir/name.rc
  local name=$1 db=$2
  ( status=0
    "$kvsweep" --db "$db" run --resume "$scenario" --reports-dir "$dir/reports-$name" --no-print \
      >"$dir/$name.out" 2>"$dir/$name.err" || status=$?
    echo "$status" >"$dir/$name.rc" ) &
  pids+=($!)
}

# 1. A resume while the first run still goes.
db1="$dir/one.db"
run_resume first "$db1"
first=${pids[-1]}
wait_for "$db1" "select count(*) from cells where status = 'done'"
owner=$(sql "$db1" "select distinct pid from cell_claims")
run_resume second "$db1"
wait "${pids[-1]}"
wait "$first"
[ "$(cat "$dir/second.rc")" -eq 4 ] || fail "the second run exited $(cat "$dir/second.rc"), want 4"
[ "$(cat "$dir/first.rc")" -eq 0 ] || fail "the first run exited $(cat "$dir/first.rc"), want 0"
grep -q "experiment 1 (resume-twice) is being run by another kvsweep: pid $owner on $(hostname) (run [0-9a-f]\{16\}), last heartbeat [0-9]* s ago; not resuming it" "$dir/second.err" ||
  fail "the refusal does not name the owner, pid $owner"
[ "$(sql "$db1" "select count(*) from experiments")" -eq 1 ] || fail "the refused run made an experiment"
[ "$(sql "$db1" "select status from experiments")" = done ] || fail "experiment not done"
check_measured_once "$db1" 2
echo "1. the resume during a run was refused: $(grep -m1 'being run by' "$dir/second.err")"

# 2. Two resumes at the same moment after a kill -9.
db2="$dir/two.db"
"$kvsweep" --db "$db2" run "$scenario" --reports-dir "$dir/reports-killed" --no-print \
  >"$dir/killed.out" 2>"$dir/killed.err" &
killed=$!
pids+=($killed)
wait_for "$db2" "select count(*) from cells where status = 'done'"
{ kill -KILL "$killed"; wait "$killed"; } 2>/dev/null || true
run_resume third "$db2"
third=${pids[-1]}
run_resume fourth "$db2"
wait "${pids[-1]}"
wait "$third"
rc3=$(cat "$dir/third.rc")
rc4=$(cat "$dir/fourth.rc")
echo "2. two resumes at once exited $rc3 and $rc4"
for rc in "$rc3" "$rc4"; do
  [ "$rc" -eq 0 ] || [ "$rc" -eq 4 ] || fail "a resume exited $rc, want 0 or 4"
done
[ "$rc3" -eq 0 ] || [ "$rc4" -eq 0 ] || fail "neither resume ran the experiment"
[ "$(sql "$db2" "select count(*) from experiments where id = 1 and status = 'done'")" -eq 1 ] ||
  fail "the killed experiment was not finished"
check_measured_once "$db2" 2
echo "PASS"
