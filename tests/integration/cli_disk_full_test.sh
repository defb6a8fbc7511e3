#!/usr/bin/env bash
# A full disk mid-sweep (issue 15 item 9), on real small filesystems: tmpfs mounts in a private
# mount namespace (as root `unshare --mount`, else also a user namespace), gone with the test.
# 1. The store fills up during a later cell: kvsweep exits 1 saying "experiment 1 failed: disk
#    full: ...", prints the "to continue" line, the experiment's status says the same (not
#    "running"), and the finished cells are whole.
# 2. The store moved to a roomy disk, that very line finishes the experiment, each cell
#    measured once.
# 3. A report into a full directory fails with "No space left on device" and leaves the old
#    report as it was, no new empty file and no temporary file.
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
trap 'umount "$dir/store" "$dir/reports" 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.err; do echo "== $f"; cat "$f"; done; exit 1; }
. "$here/store_checks.sh"
mkdir "$dir/store" "$dir/reports" "$dir/roomy"
mount -t tmpfs -o size=320k tmpfs "$dir/store"
mount -t tmpfs -o size=64k tmpfs "$dir/reports"

# 1. The store's disk fills up mid-sweep.
db="$dir/store/s.db"
status=0
"$kvsweep" --db "$db" run "$scenario" --reports-dir "$dir/roomy/reports" --no-print \
  >"$dir/full.out" 2>"$dir/full.err" || status=$?
[ "$status" -eq 1 ] || fail "the sweep on a full disk exited $status, want 1"
grep -q "^kvsweep: error: experiment 1 failed: disk full: $db: .*database or disk is full" "$dir/full.err" ||
  fail "no disk-full error line"
hint="to continue: kvsweep --db $db run --resume $scenario"
grep -qxF "$hint" "$dir/full.err" || fail "no line: $hint"
experiment=$(sql "$db" "select status from experiments")
[[ "$experiment" == "failed: disk full: $db: "*"database or disk is full" ]] ||
  fail "the experiment's status is \"$experiment\""
done_cells=$(sql "$db" "select count(*) from cells where status = 'done'")
[ "$done_cells" -ge 1 ] && [ "$done_cells" -lt 4 ] || fail "$done_cells cells done before the disk filled"
whole=$(sql "$db" "select count(*) from cells c where status = 'done' and (select count(*) from requests r where r.cell_id = c.id) = 302")
[ "$whole" -eq "$done_cells" ] || fail "a finished cell lost requests"
[ "$(sql "$db" "pragma integrity_check")" = ok ] || fail "the store is damaged"
echo "1. $(grep -m1 'disk full' "$dir/full.err"); $done_cells cells kept"

# 2. The hint, on a disk with room.
cp "$dir/store/"s.db* "$dir/roomy/"
status=0
"$kvsweep" --db "$dir/roomy/s.db" run --resume "$scenario" --reports-dir "$dir/roomy/reports" \
  --no-print >"$dir/resume.out" 2>"$dir/resume.err" || status=$?
[ "$status" -eq 0 ] || fail "the resume exited $status"
[ "$(sql "$dir/roomy/s.db" "select status from experiments")" = done ] || fail "not done after the resume"
check_measured_once "$dir/roomy/s.db" 2
echo "2. resumed: $(grep -m1 '^experiment' "$dir/resume.err")"

# 3. Reports into a full directory.
report="$dir/reports/fill-the-disk.md"
echo "the report of last night" >"$report"
dd if=/dev/zero of="$dir/reports/filler" bs=4k 2>/dev/null || true
for target in "$report" "$dir/reports/new.md"; do
  status=0
  "$kvsweep" --db "$dir/roomy/s.db" report --out "$target" >/dev/null 2>"$dir/report.err" || status=$?
  [ "$status" -eq 1 ] || fail "report into a full directory exited $status, want 1"
  grep -qF "kvsweep: error: cannot write $target: No space left on device" "$dir/report.err" ||
    fail "report error: $(cat "$dir/report.err")"
done
[ "$(cat "$report")" = "the report of last night" ] || fail "the old report changed: $(head -c 80 "$report")"
left=$(ls -A "$dir/reports" | LC_ALL=C sort | tr '\n' ' ')
[ "$left" = "fill-the-disk.md filler " ] || fail "files left in the full directory: $left"
echo "3. $(cat "$dir/report.err")"
echo "PASS"
