#!/usr/bin/env bash
# Stores kvsweep may not or must not write (issue 15 item 10). Usage: KVSWEEP FIXTURES STORE
# WORKDIR CASE, STORE being the tiny sweep's store (cli-tiny).
#   read_only_directory: `runs` and `report` on a store in a directory the user cannot write
#     (as root, the commands run as uid 65534, since root ignores permissions) work, and leave
#     the directory without -wal or -shm files and the store's bytes unchanged.
#   foreign_database: another program's SQLite file with a table named `cells` is refused by
#     `run`, `runs` and `report` with exit status 2, saying what it is, its bytes unchanged and
#     no -wal file made.
set -euo pipefail
kvsweep=$1
fixtures=$2
store=$3
work=$4
case_name=$5
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

case "$case_name" in
read_only_directory)
  ro="$work/archive"
  mkdir "$ro"
  sqlite3 "$store" ".backup '$ro/s.db'"   # a clean copy: no -wal beside it
  before=$(sha256sum "$ro/s.db" | cut -d' ' -f1)
  chmod 444 "$ro/s.db"
  chmod 555 "$ro"
  chmod 755 "$work"
  as_reader=()
  if [ "$(id -u)" -eq 0 ]; then as_reader=(setpriv --reuid=65534 --regid=65534 --clear-groups); fi
  # The directory really is read-only for the reader.
  if "${as_reader[@]}" touch "$ro/probe" 2>/dev/null; then fail "the reader can write in $ro"; fi
  "${as_reader[@]}" "$kvsweep" --db "$ro/s.db" runs >"$work/runs.out" 2>"$work/runs.err" ||
    fail "runs: $(cat "$work/runs.err")"
  grep -q "cli-tiny .* done *4/4" "$work/runs.out" || fail "runs printed: $(cat "$work/runs.out")"
  "${as_reader[@]}" "$kvsweep" --db "$ro/s.db" runs cli-tiny >"$work/cells.out" 2>&1 ||
    fail "runs cli-tiny: $(cat "$work/cells.out")"
  grep -q "prefix-hash" "$work/cells.out" || fail "runs cli-tiny printed: $(cat "$work/cells.out")"
  "${as_reader[@]}" "$kvsweep" --db "$ro/s.db" report --out - >"$work/report.md" 2>"$work/report.err" ||
    fail "report: $(cat "$work/report.err")"
  grep -q "^# kvsweep report: cli-tiny" "$work/report.md" || fail "report printed: $(head -3 "$work/report.md")"
  "${as_reader[@]}" "$kvsweep" --db "$ro/s.db" report --format html --out - >"$work/report.html" ||
    fail "report --format html"
  left=$(ls -A "$ro" | tr '\n' ' ')
  [ "$left" = "s.db " ] || fail "files in the read-only directory: $left"
  [ "$(sha256sum "$ro/s.db" | cut -d' ' -f1)" = "$before" ] || fail "the store changed"
  chmod 755 "$ro"
  echo "runs and report read $ro/s.db from a read-only directory"
  ;;
foreign_database)
  db="$work/budget.db"
  sqlite3 "$db" "create table cells (id integer primary key, formula text); create table sheets (name text); insert into cells (formula) values ('=A1+1');"
  before=$(sha256sum "$db" | cut -d' ' -f1)
  want="kvsweep: error: $db: not a kvsweep store: a SQLite database of another program (tables: cells, sheets). kvsweep wrote nothing to it; give --db a kvsweep store or a new file name."
  for command in "run $fixtures/tiny_sweep.yaml --no-print --reports-dir $work/reports" runs report; do
    status=0
    # shellcheck disable=SC2086
    "$kvsweep" --db "$db" $command >"$work/out" 2>"$work/err" || status=$?
    [ "$status" -eq 2 ] || fail "$command exited $status, want 2: $(cat "$work/err")"
    grep -qxF "$want" "$work/err" || fail "$command said: $(cat "$work/err")"
    [ "$(sha256sum "$db" | cut -d' ' -f1)" = "$before" ] || fail "$command changed the file"
    [ ! -e "$db-wal" ] || fail "$command made a -wal file"
  done
  echo "$want"
  ;;
*)
  fail "unknown case $case_name"
  ;;
esac
echo "PASS"
