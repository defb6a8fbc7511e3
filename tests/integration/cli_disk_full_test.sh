#!/usr/bin/env bash
# A full disk mid-sweep (issue 15 item 9), on real small filesystems: tmpfs mounts in a private
# mount namespace (as root `unshare --mount`, else also a user namespace), gone with the test.
# 1. The store fills up on its own during a cell, at several disk sizes (250-280 KB is where
#    the status write itself once failed; 270 KB since schema 10's table, 290 KB since schema
#    12's arm_searches): kvsweep exits 1 saying "experiment 1 failed: disk
#    full: ...", prints the "to continue" line, the experiment's status says the same (not
#    "running"), the finished cells are whole, and nothing but the store's files is left.
# 2. A disk filled to its last byte by another program after the first cell: the same, then a
#    resume on the still-full disk is refused before it touches anything, and once there is
#    room the "to continue" line finishes the experiment on that disk, each cell measured once.
# 3. A store moved to a roomy disk: that line finishes it there too.
# 4. A report into a full directory fails with "No space left on device" and leaves the old
#    report as it was, no new empty file and no temporary file.
# 5. `kvsweep load` whose store's disk fills up: the run is measured and nothing of it is lost:
#    its summary is printed and its result file written, the store keeps nothing of it (no
#    experiment left "running"), and it exits 1 saying the run was not stored.
set -euo pipefail
if [ "${KVSWEEP_IN_MOUNT_NAMESPACE:-}" != 1 ]; then
  if [ "$(id -u)" -eq 0 ]; then ns=(unshare --mount); else ns=(unshare --mount --map-root-user); fi
  if ! "${ns[@]}" true 2>/dev/null; then
    echo "SKIP: cannot make a mount namespace here (no unshare, or user namespaces disabled)"
    exit 77
  fi
  KVSWEEP_IN_MOUNT_NAMESPACE=1 exec "${ns[@]}" "$0" "$@"
fi
kvsweep=$1
scenario=$2
here=$(dirname "$0")
dir=$(mktemp -d)
pid=""
sim_pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; [ -z "$sim_pid" ] || kill "$sim_pid" 2>/dev/null; umount "$dir/store" "$dir/reports" 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.err; do echo "== $f"; cat "$f"; done; exit 1; }
. "$here/store_checks.sh"
mkdir "$dir/store" "$dir/reports" "$dir/roomy"
mount -t tmpfs -o size=64k tmpfs "$dir/reports"

# What a run on a full disk must leave: exit 1, the disk-full error and the hint, the status,
# whole finished cells, an undamaged store, and in its directory only the store's files (and
# `extra`). Sets done_cells.
check_failed_run() {
  local db=$1 status=$2 extra=${3:-} err=$4 experiment whole left
  [ "$status" -eq 1 ] || fail "the sweep on a full disk exited $status, want 1"
  grep -q "^kvsweep: error: experiment 1 failed: disk full: $db: .*database or disk is full" "$err" ||
    fail "no disk-full error line"
  grep -qxF "to continue: kvsweep --db $db run --resume $scenario" "$err" || fail "no line: to continue: ..."
  ! grep -q "could not be stored" "$err" || fail "$(grep "could not be stored" "$err")"
  experiment=$(sql "$db" "select status from experiments")
  [[ "$experiment" == "failed: disk full: $db: "*"database or disk is full" ]] ||
    fail "the experiment's status is \"$experiment\""
  done_cells=$(sql "$db" "select count(*) from cells where status = 'done'")
  [ "$done_cells" -lt 4 ] || fail "all 4 cells done on a full disk"
  whole=$(sql "$db" "select count(*) from cells c where status = 'done' and (select count(*) from requests r where r.cell_id = c.id) = 302")
  [ "$whole" -eq "$done_cells" ] || fail "a finished cell lost requests"
  [ "$(sql "$db" "pragma integrity_check")" = ok ] || fail "the store is damaged"
  left=$(ls -A "$(dirname "$db")" | grep -vxE "s\.db|s\.db-wal|s\.db-shm${extra:+|$extra}" || true)
  [ -z "$left" ] || fail "left beside the store: $left"
}

# 1. The store's disk fills up mid-sweep, at several sizes.
kept=""
# The smallest: a disk with just room to create the store (schema 13) and its experiment; at
# 280 KB the experiment itself cannot be created, a plain "disk is full" error with nothing run.
for size in 290 300 320 400 480; do
  mount -t tmpfs -o size=${size}k tmpfs "$dir/store"
  db="$dir/store/s.db"
  status=0
  "$kvsweep" --db "$db" run "$scenario" --reports-dir "$dir/roomy/reports" --no-print \
    >"$dir/full.out" 2>"$dir/full-$size.err" || status=$?
  check_failed_run "$db" "$status" "" "$dir/full-$size.err"
  # A reader on the disk as the run left it (its WAL maybe not copied into the file for want of
  # room) sees the status.
  "$kvsweep" --db "$db" runs >"$dir/runs.out" 2>"$dir/runs-$size.err" || fail "runs on the full disk failed"
  grep -q "failed: disk full" "$dir/runs.out" || fail "runs does not show the status: $(cat "$dir/runs.out")"
  kept="$kept $size KB: $done_cells;"
  [ "$size" = 480 ] && cp "$dir/store/"s.db* "$dir/roomy/"
  umount "$dir/store"
  rm -f "$dir"/full-*.err "$dir"/runs-*.err
done
[ "$done_cells" -ge 1 ] || fail "no cell finished on the largest disk (480 KB)"
echo "1. cells kept per disk size:$kept every status \"failed: disk full: ...\""

# 2. Another program fills the disk to its last byte after the first cell.
mount -t tmpfs -o size=2m tmpfs "$dir/store"
db="$dir/store/s.db"
"$kvsweep" --db "$db" run "$scenario" --reports-dir "$dir/roomy/reports" --no-print \
  >"$dir/filled.out" 2>"$dir/filled.err" &
pid=$!
wait_for "$db" "select count(*) from cells where status = 'done'"
dd if=/dev/zero of="$dir/store/filler" bs=4k 2>/dev/null || true
status=0
wait "$pid" || status=$?
pid=""
check_failed_run "$db" "$status" filler "$dir/filled.err"
[ "$done_cells" -ge 1 ] || fail "the cell finished before the disk filled was lost"
echo "2. filled to the last byte: $(grep -m1 'disk full' "$dir/filled.err"); $done_cells cells kept"
status=0
"$kvsweep" --db "$db" run --resume "$scenario" --reports-dir "$dir/roomy/reports" --no-print \
  >"$dir/refused.out" 2>"$dir/refused.err" || status=$?
[ "$status" -eq 1 ] || fail "a resume on the still-full disk exited $status, want 1"
grep -q "^kvsweep: error: $dir/store: cannot keep [0-9]* KiB free beside the store .*: No space left on device" \
  "$dir/refused.err" || fail "no refusal: $(cat "$dir/refused.err")"
[[ "$(sql "$db" "select status from experiments")" == "failed: disk full: "* ]] ||
  fail "the refused resume changed the status"
check_failed_run "$db" 1 filler "$dir/filled.err"
echo "   resume on the full disk: $(grep -m1 'cannot keep' "$dir/refused.err" | sed "s|$dir|DIR|")"
rm "$dir/store/filler"
status=0
"$kvsweep" --db "$db" run --resume "$scenario" --reports-dir "$dir/roomy/reports" --no-print \
  >"$dir/resume.out" 2>"$dir/resume.err" || status=$?
[ "$status" -eq 0 ] || fail "the resume once there was room exited $status"
[ "$(sql "$db" "select status from experiments")" = done ] || fail "not done after the resume"
check_measured_once "$db" 2
left=$(ls -A "$dir/store" | LC_ALL=C sort | tr '\n' ' ')
[ "$left" = "s.db " ] || fail "left beside the store after the resume: $left"
echo "   resumed once there was room: $(grep -m1 '^experiment' "$dir/resume.err")"
umount "$dir/store"

# 3. The store of the 480 KB disk, moved to a roomy disk.
status=0
"$kvsweep" --db "$dir/roomy/s.db" run --resume "$scenario" --reports-dir "$dir/roomy/reports" \
  --no-print >"$dir/resume.out" 2>"$dir/resume.err" || status=$?
[ "$status" -eq 0 ] || fail "the resume exited $status"
[ "$(sql "$dir/roomy/s.db" "select status from experiments")" = done ] || fail "not done after the resume"
check_measured_once "$dir/roomy/s.db" 2
echo "3. resumed on a roomy disk: $(grep -m1 '^experiment' "$dir/resume.err")"

# 4. Reports into a full directory.
report="$dir/reports/fill-the-disk.md"
echo "the report of last night" >"$report"
dd if=/dev/zero of="$dir/reports/filler" bs=4k 2>/dev/null || true
for target in "$report" "$dir/reports/new.md"; do
  status=0
  "$kvsweep" --db "$dir/roomy/s.db" report --out "$target" >/dev/null 2>"$dir/report.err" ||
    status=$?
  [ "$status" -eq 1 ] || fail "report into a full directory exited $status, want 1"
  grep -qF "kvsweep: error: cannot write $target: No space left on device" "$dir/report.err" ||
    fail "report error: $(cat "$dir/report.err")"
done
[ "$(cat "$report")" = "the report of last night" ] || fail "the old report changed: $(head -c 80 "$report")"
left=$(ls -A "$dir/reports" | LC_ALL=C sort | tr '\n' ' ')
[ "$left" = "fill-the-disk.md filler " ] || fail "files left in the full directory: $left"
echo "4. $(cat "$dir/report.err")"

# 5. `kvsweep load` whose store fills up while it measures.
"$kvsweep" sim serve --port 0 --replicas 1 --profile demo --model m >"$dir/sim.out" 2>&1 &
sim_pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -n 's/^router *\(http[^ ]*\).*/\1/p' "$dir/sim.out")
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || fail "sim serve did not start: $(cat "$dir/sim.out")"
mount -t tmpfs -o size=200k tmpfs "$dir/store"
db="$dir/store/load.db"
status=0
"$kvsweep" --db "$db" load --url "$url" --model m --num-prompts 2000 --concurrency 8 \
  --max-tokens 4 --conversations 50 -o "$dir/roomy/load.json" >"$dir/load.out" 2>"$dir/load.err" ||
  status=$?
[ "$status" -eq 1 ] || fail "load with a full store exited $status, want 1"
grep -q "^kvsweep: error: the run was measured but not stored in $db: .*full.*; its result file holds it" \
  "$dir/load.err" || fail "no error line saying the run was not stored"
grep -qE "^Successful requests: +2000 *$" "$dir/load.out" || fail "no summary: $(cat "$dir/load.out")"
grep -q '"completed": 2000,' "$dir/roomy/load.json" || fail "the result file lacks the run"
[ "$(sql "$db" "select count(*) from experiments")" -eq 0 ] || fail "the store kept part of the run"
[ "$(sql "$db" "pragma integrity_check")" = ok ] || fail "the store is damaged"
umount "$dir/store"
echo "5. $(grep -m1 'not stored' "$dir/load.err")"
echo "PASS"
