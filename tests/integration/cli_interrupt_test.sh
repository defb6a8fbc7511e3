#!/usr/bin/env bash
# Ctrl-C (or SIGTERM, as Kubernetes stops a Job's pod) mid-sweep: kvsweep must exit 130, keep every finished request, mark the running cell
# interrupted and leave the cells it never reached pending.
set -euo pipefail
kvsweep=$1
scenario=$2
signal=${3:-INT}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

"$kvsweep" --db "$dir/s.db" run "$scenario" --reports-dir "$dir/reports" --no-print \
  >"$dir/out" 2>"$dir/err" &
pid=$!
# Wait until the first cell has finished (its summary line), so the interrupt lands mid-sweep.
for _ in $(seq 1 300); do
  grep -q 'cell 1/' "$dir/err" 2>/dev/null && grep -q ' ok,' "$dir/err" && break
  sleep 0.1
done
kill -"$signal" "$pid"
status=0
wait "$pid" || status=$?
cat "$dir/err"
[ "$status" -eq 130 ] || { echo "FAIL: exit status $status, expected 130"; exit 1; }

statuses=$(sqlite3 "$dir/s.db" "select group_concat(status, ',') from (select status from cells order by ordinal)")
experiment=$(sqlite3 "$dir/s.db" "select status from experiments")
done_requests=$(sqlite3 "$dir/s.db" "select count(*) from requests r join cells c on c.id = r.cell_id where c.status = 'done'")
echo "cells: $statuses; experiment: $experiment; requests in done cells: $done_requests"
[ "$experiment" = "interrupted" ] || { echo "FAIL: experiment status $experiment"; exit 1; }
case "$statuses" in
  done,interrupted,pending*|done,done,interrupted,pending*) ;;
  *) echo "FAIL: unexpected cell statuses $statuses"; exit 1 ;;
esac
[ "$done_requests" -gt 0 ] || { echo "FAIL: the finished cell lost its requests"; exit 1; }
[ -f "$dir/reports/interrupt-me.md" ] || { echo "FAIL: no report for the interrupted sweep"; exit 1; }
echo "PASS"
