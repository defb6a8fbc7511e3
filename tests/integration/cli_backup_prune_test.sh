#!/usr/bin/env bash
# backup and prune as a careless user and a running sweep try them (issue 40 items 1, 2, 4, 10).
# Usage: KVSWEEP FIXTURES WORKDIR CASE.
#   running_store: while a real sweep (sim target) writes s.db, `backup` onto s.db by every name
#     (itself, ./s.db, a symlink, a hard link, its -wal, -shm) exits 2 and writes nothing; a
#     backup to a new file works beside it; afterwards `runs` shows every cell done with its
#     requests, as many as the store holds.
#   destinations: /dev/null, a directory, a FIFO are refused (exit 2, left as they were); a text
#     file is refused and kept unless --force; a 0600 store's copy is 0600.
#   older_than: --older-than 400000d, 90 (no unit), 1e306d, nand, -5d refused with exit 2 and
#     nothing pruned; 100d prunes the run started 200 days ago only (times compared as numbers).
#   stale_running: a sweep killed with SIGKILL stays "running"; `prune --experiment` says so,
#     since when, and the command that finishes it; that command does, and then prune prunes.
#   corrupt_summary: a cell summary whose bytes changed: `runs EXP` lists every cell, marks that
#     one "summary unreadable" and names experiment, cell and field; `report` fails naming them.
set -euo pipefail
kvsweep=$1
fixtures=$2
work=$3
case_name=$4
rm -rf "$work"
mkdir -p "$work"
db="$work/s.db"
fail() { echo "FAIL: $*"; exit 1; }
sql() { sqlite3 -cmd '.timeout 5000' "$db" "$1"; }

# Runs `kvsweep ARGS...`, expecting exit status 2 and a stderr line containing WANT.
refused() {
  local want=$1
  shift
  local status=0
  "$kvsweep" "$@" >"$work/out" 2>"$work/err" || status=$?
  [ "$status" -eq 2 ] || fail "$* exited $status, want 2: $(cat "$work/out" "$work/err")"
  grep -qF -- "$want" "$work/err" || fail "$* said: $(cat "$work/err"), want: $want"
}

predicted_store() {  # two runs of the tiny sweep, predicted: quick, real rows and summaries
  for _ in 1 2; do
    "$kvsweep" --db "$db" -q run --target predict "$fixtures/tiny_sweep.yaml" -o "$work/reports" \
      --no-print >/dev/null 2>"$work/run.err" || fail "predicted run: $(cat "$work/run.err")"
  done
}

wait_first_cell() {  # the background sweep has a done cell
  for _ in $(seq 1 300); do
    [ -f "$db" ] && [ "$(sql "select count(*) from cells where status = 'done'" 2>/dev/null || echo 0)" -ge 1 ] && return 0
    sleep 0.1
  done
  fail "the sweep finished no cell in 30 s: $(cat "$work/sweep.err")"
}

case "$case_name" in
running_store)
  "$kvsweep" --db "$db" run "$fixtures/backup_during_sweep.yaml" -o "$work/reports" --no-print \
    >"$work/sweep.out" 2>"$work/sweep.err" &
  sweep=$!
  wait_first_cell
  (cd "$work" && ln -s s.db link.db && ln s.db hard.db)
  for dest in "$db" "$work/./s.db" "$work/link.db" "$work/hard.db"; do
    refused "is the store being backed up ($db)" --db "$db" backup "$dest"
  done
  (cd "$work" && refused "is the store being backed up (s.db)" --db s.db backup s.db)
  for suffix in wal shm; do
    [ -e "$db-$suffix" ] || fail "no $db-$suffix while the sweep runs"
    refused "is the $suffix file of the store being backed up" --db "$db" backup "$db-$suffix"
  done
  "$kvsweep" --db "$db" backup "$work/copy.db" >"$work/backup.out" || fail "backup to a new file"
  kill -0 "$sweep" 2>/dev/null || fail "the sweep ended before the backups were tried; lengthen it"
  status=0
  wait "$sweep" || status=$?
  [ "$status" -eq 0 ] || fail "the sweep exited $status: $(tail -5 "$work/sweep.err")"
  "$kvsweep" --db "$db" runs >"$work/runs.out" || fail "runs"
  cat "$work/runs.out"
  stored=$(sql "select count(*) from requests r join cells c on c.id = r.cell_id where not r.warmup")
  [ "$stored" -gt 0 ] || fail "no request stored"
  grep -Eq "^1 +backup-me +[^ ]+ +done +4/4 +$stored " "$work/runs.out" ||
    fail "runs does not show 4/4 cells and $stored requests"
  [ "$(sql "pragma integrity_check")" = ok ] || fail "the store fails integrity_check"
  [ "$(sqlite3 "$work/copy.db" "select count(*) from experiments")" -eq 1 ] || fail "the copy"
  ls "$work" | grep -q partial && fail "a partial copy was left: $(ls "$work")"
  echo "backup onto the running store refused by 7 names; the sweep stored 4/4 cells, $stored requests"
  ;;
destinations)
  predicted_store
  chmod 600 "$db"
  mkdir "$work/folder"
  mkfifo "$work/fifo"
  refused "backup: /dev/null: is a character device" --db "$db" backup /dev/null
  [ -c /dev/null ] || fail "/dev/null is no longer a device"
  refused "is a directory" --db "$db" backup "$work/folder"
  refused "is a FIFO" --db "$db" backup "$work/fifo"
  [ -p "$work/fifo" ] || fail "the FIFO was replaced"
  echo "my notes" >"$work/notes.txt"
  refused "exists and is not a kvsweep store; backup replaces it only with --force" \
    --db "$db" backup "$work/notes.txt"
  [ "$(cat "$work/notes.txt")" = "my notes" ] || fail "the text file changed"
  "$kvsweep" --db "$db" backup "$work/notes.txt" --force >/dev/null || fail "backup --force"
  [ "$(sqlite3 "$work/notes.txt" "select count(*) from experiments")" -eq 2 ] || fail "--force copy"
  "$kvsweep" --db "$db" backup "$work/b.db" >/dev/null || fail "backup to a new file"
  [ "$(stat -c %a "$work/b.db")" = 600 ] || fail "a 0600 store copied to $(stat -c %a "$work/b.db")"
  [ "$(stat -c %a "$work/notes.txt")" = 600 ] || fail "--force copy is $(stat -c %a "$work/notes.txt")"
  "$kvsweep" --db "$db" backup "$work/b.db" >/dev/null || fail "backup over an earlier backup"
  echo "refused /dev/null, a directory, a FIFO, a text file without --force; copies are 0600"
  ;;
older_than)
  predicted_store
  now=$(date +%s)
  # The first run started 200 days ago, the second 10 days ago (set here: a test's own store).
  sql "update experiments set started_at = strftime('%Y-%m-%dT%H:%M:%SZ', $now - 200 * 86400, 'unixepoch') where id = 1;
       update experiments set started_at = strftime('%Y-%m-%dT%H:%M:%SZ', $now - 10 * 86400, 'unixepoch') where id = 2"
  rows=$(sql "select count(*) from requests")
  refused "'400000d' is longer than 100 years" --db "$db" prune --older-than 400000d
  refused "'90' has no unit; write a number and a unit, one of s, m, h or d" --db "$db" prune --older-than 90
  for bad in 1e306d nand -5d; do
    refused "prune: --older-than: '$bad'" --db "$db" prune --older-than "$bad"
  done
  [ "$(sql "select count(*) from requests")" -eq "$rows" ] || fail "a refused prune removed rows"
  [ "$(sql "select count(*) from experiment_prunes")" -eq 0 ] || fail "a refused prune marked runs"
  "$kvsweep" --db "$db" prune --older-than 100d >"$work/prune.out" 2>"$work/prune.err" ||
    fail "prune --older-than 100d: $(cat "$work/prune.err")"
  cat "$work/prune.out"
  [ "$(sql "select group_concat(experiment_id) from experiment_prunes")" = 1 ] ||
    fail "pruned: $(sql "select group_concat(experiment_id) from experiment_prunes")"
  grep -q "^pruned 1 experiments" "$work/prune.out" || fail "prune said: $(cat "$work/prune.out")"
  ;;
stale_running)
  "$kvsweep" --db "$db" run "$fixtures/backup_during_sweep.yaml" -o "$work/reports" --no-print \
    >"$work/sweep.out" 2>"$work/sweep.err" &
  sweep=$!
  wait_first_cell
  kill -KILL "$sweep"
  wait "$sweep" || true
  [ "$(sql "select status from experiments where id = 1")" = running ] || fail "not left running"
  started=$(sql "select started_at from experiments where id = 1")
  "$kvsweep" --db "$db" prune --experiment 1 >"$work/prune.out" 2>"$work/prune.err" ||
    fail "prune --experiment 1: $(cat "$work/prune.err")"
  cat "$work/prune.out"
  grep -qF "experiment 1 backup-me: not pruned: it is marked running since $started, its cells' last heartbeat " "$work/prune.out" ||
    fail "prune said: $(cat "$work/prune.out")"
  resume="kvsweep --db $db run --resume $fixtures/backup_during_sweep.yaml"
  grep -qF "If that run is dead (its process gone), finish it with \`$resume\`" "$work/prune.out" ||
    fail "prune did not give the command: $(cat "$work/prune.out")"
  grep -q "^nothing to prune" "$work/prune.out" || fail "prune said: $(cat "$work/prune.out")"
  # The command it gives, as given (with a short claim timeout: the dead run's heartbeat is fresh).
  sleep 2
  "$kvsweep" --db "$db" run --resume "$fixtures/backup_during_sweep.yaml" --claim-timeout 1s \
    -o "$work/reports" --no-print >/dev/null 2>"$work/resume.err" || fail "resume: $(tail -3 "$work/resume.err")"
  "$kvsweep" --db "$db" prune --experiment 1 --no-vacuum >"$work/prune2.out" || fail "second prune"
  grep -q "^pruned experiment 1 backup-me" "$work/prune2.out" || fail "then prune said: $(cat "$work/prune2.out")"
  ;;
corrupt_summary)
  predicted_store
  cell=$(sql "select id from cells where experiment_id = 2 and ordinal = 1")
  sql "update cell_summaries set figures = json_set(figures, '$.ok', 'many') where cell_id = $cell"
  "$kvsweep" --db "$db" runs 2 >"$work/runs.out" 2>"$work/runs.err" || fail "runs 2: $(cat "$work/runs.err")"
  cat "$work/runs.out" "$work/runs.err"
  [ "$(grep -Ec '^[1-4] +' "$work/runs.out")" -eq 4 ] || fail "runs did not list 4 cells"
  grep -Eq "^2 +.* done +[0-9]+ +[0-9]+ +summary unreadable" "$work/runs.out" || fail "cell 2 not marked"
  [ "$(grep -c "summary unreadable" "$work/runs.out")" -eq 1 ] || fail "other cells marked"
  arm=$(sql "select arm || ', concurrency ' || concurrency || ', repeat ' || (repeat + 1) from cells where id = $cell")
  want="experiment 2 cli-tiny, cell 2 ($arm): its stored summary cannot be read: cell summary: ok: not an integer"
  grep -qF "kvsweep: warning: $want" "$work/runs.err" || fail "runs warned: $(cat "$work/runs.err")"
  "$kvsweep" --db "$db" runs 1 >/dev/null || fail "runs 1"
  "$kvsweep" --db "$db" runs >/dev/null || fail "runs"
  status=0
  "$kvsweep" --db "$db" report 2 -o "$work/r.md" >/dev/null 2>"$work/report.err" || status=$?
  # A corrupt stored row is not the user's mistake: exit 1 (failed), never 2 (bad input).
  [ "$status" -eq 1 ] || fail "report of a corrupt summary exited $status, not 1"
  grep -qF "$want" "$work/report.err" || fail "report said: $(cat "$work/report.err")"
  ;;
*)
  fail "unknown case $case_name"
  ;;
esac
echo "PASS"
