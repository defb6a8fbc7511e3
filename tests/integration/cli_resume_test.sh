#!/usr/bin/env bash
# kill -9 after 2 of 6 cells: the store keeps both finished cells whole, and `run --resume`
# continues the same experiment, runs exactly the 4 cells left and leaves the first 2 alone.
set -euo pipefail
kvsweep=$1
scenario=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
db="$dir/s.db"
sql() { sqlite3 -cmd '.timeout 5000' "$db" "$1"; }

"$kvsweep" --db "$db" run "$scenario" --reports-dir "$dir/reports" --no-print \
  >"$dir/out1" 2>"$dir/err1" &
pid=$!
done_cells=0
for _ in $(seq 1 600); do
  if [ -f "$db" ]; then
    done_cells=$(sql "select count(*) from cells where status = 'done'" 2>/dev/null || echo 0)
  fi
  [ "$done_cells" -ge 2 ] && break
  sleep 0.05
done
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
[ "$done_cells" -eq 2 ] || { cat "$dir/err1"; echo "FAIL: saw $done_cells done cells before the kill, expected 2"; exit 1; }

before=$(sql "select group_concat(id || ':' || status || ':' || finished_at, ',') from (select * from cells where status = 'done' order by ordinal)")
requests_before=$(sql "select count(*) from requests r join cells c on c.id = r.cell_id where c.status = 'done'")
echo "after kill -9: done cells $before; their requests $requests_before"
[ "$requests_before" -gt 0 ] || { echo "FAIL: the finished cells lost their requests"; exit 1; }

status=0
"$kvsweep" --db "$db" run --resume "$scenario" --reports-dir "$dir/reports" --no-print \
  >"$dir/out2" 2>"$dir/err2" || status=$?
cat "$dir/err2"
[ "$status" -eq 0 ] || { echo "FAIL: resume exited $status"; exit 1; }

ran=$(grep -c ' ok, mean TTFT' "$dir/err2" || true)
experiments=$(sql "select count(*) from experiments")
statuses=$(sql "select group_concat(status, ',') from (select status from cells order by ordinal)")
after=$(sql "select group_concat(id || ':' || status || ':' || finished_at, ',') from (select * from (select * from cells order by ordinal) limit 2)")
requests_first_two=$(sql "select count(*) from requests r join cells c on c.id = r.cell_id where c.ordinal < 2")
echo "resume ran $ran cells; experiments $experiments; cells $statuses"
[ "$ran" -eq 4 ] || { echo "FAIL: resume ran $ran cells, expected exactly 4"; exit 1; }
grep -q '2 already done before resuming' "$dir/err2" || { echo "FAIL: no resume summary"; exit 1; }
[ "$experiments" -eq 1 ] || { echo "FAIL: resume made a new experiment"; exit 1; }
[ "$statuses" = "done,done,done,done,done,done" ] || { echo "FAIL: cells $statuses"; exit 1; }
[ "$after" = "$before" ] || { echo "FAIL: the first 2 cells changed: $before -> $after"; exit 1; }
[ "$requests_first_two" -eq "$requests_before" ] || { echo "FAIL: the first 2 cells' requests changed"; exit 1; }
[ "$(sql "select status from experiments")" = "done" ] || { echo "FAIL: experiment not done"; exit 1; }

echo "PASS"
