#!/usr/bin/env bash
# Summaries computed once (issue "A year of nightly sweeps"): for every seed scenario run
# predicted, the report read from the cells' summaries is the report recomputed from the raw
# rows (`report --exact`), byte for byte, in every format. A store as schema 8 left it (no
# summaries) is summarized by `migrate` with its reports unchanged. `prune` removes the raw rows
# of older runs and keeps their reports, history and compare; their exports and --exact refuse,
# naming the prune; the file shrinks.
set -euo pipefail
kvsweep=$1
scenarios=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
db="$dir/s.db"
fail() { echo "FAIL: $*"; exit 1; }
sql() { sqlite3 -cmd '.timeout 5000' "$db" "$1"; }

reports_of() {  # experiment, suffix: every format from the summaries, and --exact when asked
  local e=$1 out=$2 exact=${3:-}
  for f in md json csv; do
    "$kvsweep" --db "$db" report "$e" -f "$f" -o "$dir/$e.$out.$f" $exact >/dev/null 2>&1 ||
      fail "report $e -f $f $exact"
  done
}

n=0
for scenario in "$scenarios"/seed-*.yaml; do
  # Seed 002's capacity search predicts 25 probes of 2,000 requests (about 40 s of this test);
  # seed 004's search stands for searches here, CapacitySearchEndToEnd for the rest.
  [[ "$scenario" == */seed-002-capacity-search.yaml ]] && continue
  "$kvsweep" --db "$db" -q run --target predict "$scenario" -o "$dir/reports" --no-print \
    >/dev/null 2>"$dir/err" || { cat "$dir/err"; fail "predict $scenario"; }
  n=$((n + 1))
done
# seed 000 a second time: two runs of one scenario for prune's --keep-last. When it ends it is
# compared with the first, and the comparison is stored for serve's history page.
"$kvsweep" --db "$db" run --target predict "$scenarios/seed-000-kubeai-l4-prefixhash.yaml" \
  -o "$dir/reports" --no-print >"$dir/second.out" 2>&1 || fail "second seed-000 run"
second_run=$(sql "select max(id) from experiments")
first_run=$(sql "select min(id) from experiments where name = (select name from experiments where id = $second_run)")
grep -q "^against experiment $first_run, the run before (kvsweep compare $first_run $second_run): " "$dir/second.out" ||
  fail "the second run did not say its comparison: $(tail -5 "$dir/second.out")"
[ "$(sql "select experiment_id || ' ' || previous_id from run_comparisons")" = "$second_run $first_run" ] ||
  fail "stored comparisons: $(sql "select * from run_comparisons")"
experiments=$(sql "select count(*) from experiments")
[ "$experiments" -eq $((n + 1)) ] || fail "$experiments experiments stored, expected $((n + 1))"
unsummarized=$(sql "select count(*) from cells where status = 'done' and id not in (select cell_id from cell_summaries)")
[ "$unsummarized" -eq 0 ] || fail "$unsummarized done cells stored without a summary"
summaries=$(sql "select count(*) from cell_summaries")
echo "stored $experiments experiments, $summaries cell summaries"

for e in $(sql "select id from experiments"); do
  reports_of "$e" summary
  reports_of "$e" exact --exact
  for f in md json csv; do
    cmp -s "$dir/$e.summary.$f" "$dir/$e.exact.$f" ||
      { diff "$dir/$e.summary.$f" "$dir/$e.exact.$f" | head -20; fail "experiment $e: $f from summaries differs from --exact"; }
  done
done
echo "reports from summaries equal --exact for $experiments experiments in md, json and csv"

# A store as schema 8 left it: no summaries, no prune marks, no prompt fingerprints. migrate summarizes every cell.
cp "$db" "$dir/old.db"
sqlite3 "$dir/old.db" "alter table requests drop column prompt_hash; drop table arm_searches; drop table cell_shards; drop table run_comparisons; drop table cell_summaries; drop table experiment_prunes; pragma user_version = 8;"
"$kvsweep" --db "$dir/old.db" migrate >"$dir/migrate.out" 2>"$dir/migrate.err" ||
  { cat "$dir/migrate.err"; fail "migrate of a schema 8 store"; }
grep -q "migrated from 8" "$dir/migrate.out" || fail "migrate said: $(cat "$dir/migrate.out")"
grep -q "$summaries cells summarized" "$dir/migrate.out" || fail "migrate said: $(cat "$dir/migrate.out")"
grep -q "summarizing $summaries stored cells" "$dir/migrate.err" || fail "no progress line: $(cat "$dir/migrate.err")"
# Schema 10's comparisons: the second seed-000 run compared with the first, once.
grep -q ", 1 runs compared with the run before" "$dir/migrate.out" || fail "migrate said: $(cat "$dir/migrate.out")"
[ "$(sqlite3 "$dir/old.db" "select experiment_id || ' ' || previous_id from run_comparisons")" = "$second_run $first_run" ] ||
  fail "migrate stored: $(sqlite3 "$dir/old.db" "select * from run_comparisons")"
old_e=$(sql "select max(id) from experiments")
"$kvsweep" --db "$dir/old.db" report "$old_e" -f json -o "$dir/migrated.json" >/dev/null 2>&1
cmp -s "$dir/migrated.json" "$dir/$old_e.exact.json" || fail "a migrated store's report changed"
echo "schema 8 store: $(cat "$dir/migrate.out")"

# Prune: keep the last run of each scenario, so the first seed-000 run loses its raw rows.
first=$(sql "select min(id) from experiments where name = (select name from experiments where id = $old_e)")
rows_before=$(sql "select count(*) from requests r join cells c on c.id = r.cell_id where c.experiment_id = $first")
[ "$rows_before" -gt 0 ] || fail "experiment $first has no rows to prune"
"$kvsweep" --db "$db" prune --keep-last 1 --dry-run >"$dir/dry.out"
grep -q "would prune experiment $first " "$dir/dry.out" || fail "dry run said: $(cat "$dir/dry.out")"
[ "$(sql "select count(*) from requests r join cells c on c.id = r.cell_id where c.experiment_id = $first")" -eq "$rows_before" ] ||
  fail "--dry-run removed rows"
size_before=$(stat -c %s "$db")
"$kvsweep" --db "$db" prune --keep-last 1 >"$dir/prune.out" 2>"$dir/prune.err" ||
  { cat "$dir/prune.err"; fail "prune"; }
cat "$dir/prune.out"
grep -q "pruned experiment $first " "$dir/prune.out" || fail "prune said: $(cat "$dir/prune.out")"
pruned=$(grep -c "^pruned experiment" "$dir/prune.out")
[ "$pruned" -eq 1 ] || fail "$pruned experiments pruned, expected only $first"
left=$(sql "select count(*) from requests r join cells c on c.id = r.cell_id where c.experiment_id = $first")
[ "$left" -eq 0 ] || fail "$left request rows of experiment $first left"
[ "$(sql "select count(*) from run_comparisons")" -eq 1 ] || fail "prune removed the stored comparison"
size_after=$(stat -c %s "$db")
[ "$size_after" -lt "$size_before" ] || fail "the store did not shrink: $size_before -> $size_after bytes"
echo "store $size_before -> $size_after bytes"

# What remains of the pruned run: its report (the same figures), history, compare, runs.
for f in md json csv; do
  "$kvsweep" --db "$db" report "$first" -f "$f" -o "$dir/after.$f" >/dev/null 2>&1 || fail "report of a pruned run"
done
cmp -s "$dir/after.json" "$dir/$first.exact.json" || fail "a pruned run's dashboard JSON changed"
cmp -s "$dir/after.csv" "$dir/$first.exact.csv" || fail "a pruned run's CSV changed"
grep -q "Raw rows.*pruned" "$dir/after.md" || fail "the pruned run's report does not say it was pruned"
if "$kvsweep" --db "$db" report "$first" --exact -o - >/dev/null 2>"$dir/exact.err"; then
  fail "report --exact of a pruned run succeeded"
fi
grep -q "pruned" "$dir/exact.err" || fail "report --exact said: $(cat "$dir/exact.err")"
if "$kvsweep" --db "$db" export "$first" -o "$dir/exports" >/dev/null 2>"$dir/export.err"; then
  fail "exports of a pruned run succeeded"
fi
grep -q "pruned" "$dir/export.err" || fail "export said: $(cat "$dir/export.err")"
name=$(sql "select name from experiments where id = $first")
"$kvsweep" --db "$db" history "$name" >"$dir/history.out" 2>&1 || { cat "$dir/history.out"; fail "history after prune"; }
grep -Eq "^[^ ]+ +[0-9]+ +$first +[0-9]{4}-" "$dir/history.out" ||
  fail "history lost the pruned run: $(cat "$dir/history.out")"
status=0
"$kvsweep" --db "$db" compare "$first" "$old_e" --min-samples 1 >"$dir/compare.out" 2>&1 || status=$?
[ "$status" -le 1 ] || { cat "$dir/compare.out"; fail "compare after prune exited $status"; }
grep -q "raw rows pruned: bootstrapped from each cell's" "$dir/compare.out" ||
  { cat "$dir/compare.out"; fail "compare does not say it used the sample"; }
"$kvsweep" --db "$db" runs "$first" >"$dir/runs.out" || fail "runs after prune"
"$kvsweep" --db "$db" prune --keep-last 1 >"$dir/prune2.out"
grep -q "nothing to prune" "$dir/prune2.out" || fail "second prune said: $(cat "$dir/prune2.out")"
echo "PASS"
