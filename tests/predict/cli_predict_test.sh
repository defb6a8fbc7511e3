#!/usr/bin/env bash
# `kvsweep predict` and `kvsweep run --target predict` on the real binary, one case per call:
#   stored_as_predicted  the cells and requests are stored as for a run, target kind predict
#                        with its profile, and every output says "predicted" where a figure is
#                        (report title and source line, CSV rows, JSON, exports, compare,
#                        history); the server-side figures come from the simulated replicas
#   run_target_predict   `run --target predict` is the same thing; `plan --target predict` too
#   deterministic        the same scenario and seed twice: byte-identical stored figures
#   bad_options          --network-latency outside a prediction, or malformed: a usage error
#   stand_in             a file dataset that is absent, with a generated stand-in: the
#                        prediction and the real-time sim send the stand-in and the report says
#                        so; a real target stops before anything runs, naming the file
#                        (SCENARIO's folder holds stand_in_sweep.yaml and stand_in_endpoints.yaml)
#   epp_weights          epp_prefix_weight.yaml (SCENARIO's folder): the prefix scorer's weight
#                        as a factor; weight 0 routes by the queue alone and hits the cache less
#                        than weights 1 and 10, which keep conversations on their replica;
#                        every cold cell builds the picker afresh
# Usage: cli_predict_test.sh KVSWEEP SCENARIO WORK_DIR CASE
set -u
kvsweep=$1 scenario=$2 work=$3 case=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
fail() { echo "FAIL: $*"; exit 1; }

# Every stored figure of a store's only experiment, in a stable order: the cells' timings on
# their (virtual) epochs, every request row and every server sample. Wall-clock stamps
# (started_at, finished_at) and the per-command wall seconds are when the prediction ran, not
# what it predicted, so they are left out.
stored_figures() {
  sqlite3 "$1" "SELECT ordinal, key, arm, concurrency, status, error, epoch_wall_s
                  FROM cells ORDER BY ordinal;
                SELECT * FROM requests ORDER BY id;
                SELECT * FROM metric_samples ORDER BY id;
                SELECT cell_id, step, argv_json, exit_code FROM cell_commands ORDER BY id;"
}

case $case in
stored_as_predicted)
  out=$("$kvsweep" --db p.db predict "$scenario" -o reports 2>&1) || fail "predict exited $?: $out"
  grep -q "experiment 1 done: 4 cells done, 0 failed" <<<"$out" || fail "not 4 cells done: $out"
  kind=$(sqlite3 p.db "SELECT json_extract(setup_json, '$.target.kind') || ' ' ||
                              json_extract(setup_json, '$.target.profile') FROM experiments")
  [ "$kind" = "predict demo" ] || fail "setup target is '$kind', want 'predict demo'"
  n=$(sqlite3 p.db "SELECT count(*) FROM requests WHERE ok = 1 AND warmup = 0")
  [ "$n" -ge 24 ] || fail "$n measured ok requests stored, want >= 24"
  # The replicas' own counters, sampled before and after each measured phase.
  sources=$(sqlite3 p.db "SELECT count(DISTINCT source) FROM metric_samples
                          WHERE name = 'vllm:prefix_cache_queries_total'")
  [ "$sources" = 2 ] || fail "$sources replicas sampled, want 2"
  report=$(cat reports/cli-tiny.md)
  sed -n 1p <<<"$report" | grep -qx "# kvsweep report: cli-tiny (predicted)" || fail "title"
  grep -q "^Predicted: these figures are a prediction, computed in virtual time by kvsweep's simulated fleet (target kind predict, profile demo, 2 replicas)" <<<"$report" ||
    fail "no Predicted source line"
  grep -Eq '^\| prefix-hash \| predict://replica-[01]/metrics \| [0-9]+ ' <<<"$report" ||
    fail "no server-side KV figures per simulated replica"
  csv=$("$kvsweep" --db p.db report 1 --format csv)
  rows=$(tail -n +2 <<<"$csv" | grep -c ',predicted')
  [ "$rows" = 4 ] || fail "$rows CSV rows say predicted, want 4: $csv"
  "$kvsweep" --db p.db report 1 --format json | grep -q '"figures": "predicted"' ||
    fail "report JSON does not say predicted"
  "$kvsweep" --db p.db export 1 -o export 2>/dev/null || fail "export"
  for f in export/*.json; do grep -q predicted "$f" || fail "$f does not say predicted"; done
  "$kvsweep" --db p.db compare 1 1 | grep -q "experiment 1 (cli-tiny, predicted)" ||
    fail "compare does not label the prediction"
  "$kvsweep" --db p.db history cli-tiny --metric ttft_mean_ms | grep -q " predicted$" ||
    fail "history does not say predicted"
  ;;
run_target_predict)
  "$kvsweep" --db r.db run "$scenario" --target predict --no-print -o reports 2>/dev/null ||
    fail "run --target predict"
  [ "$(sqlite3 r.db "SELECT json_extract(setup_json, '$.target.kind') FROM experiments")" = predict ] ||
    fail "run --target predict is not stored as kind predict"
  plan=$("$kvsweep" plan "$scenario" --target predict) || fail "plan --target predict"
  grep -q "predict x2 (demo, virtual time)" <<<"$plan" || fail "plan does not name the predicted fleet: $plan"
  ;;
deterministic)
  "$kvsweep" --db a.db predict "$scenario" --no-print -o a 2>/dev/null || fail "first prediction"
  "$kvsweep" --db b.db predict "$scenario" --no-print -o b 2>/dev/null || fail "second prediction"
  stored_figures a.db >a.txt && stored_figures b.db >b.txt || fail "reading the stores"
  [ "$(grep -c . a.txt)" -gt 50 ] || fail "too few stored figures to compare: $(wc -l <a.txt)"
  cmp a.txt b.txt || fail "stored figures differ: $(diff a.txt b.txt | head -5)"
  ;;
bad_options)
  out=$("$kvsweep" --db x.db run "$scenario" --network-latency 2ms 2>&1) &&
    fail "--network-latency without --target predict was accepted"
  grep -q "only a prediction models the network" <<<"$out" || fail "unclear error: $out"
  out=$("$kvsweep" --db x.db predict "$scenario" --network-latency -3ms 2>&1) &&
    fail "a negative --network-latency was accepted"
  grep -q "expected a duration >= 0" <<<"$out" || fail "unclear error: $out"
  [ -e x.db ] && [ "$(sqlite3 x.db 'SELECT count(*) FROM experiments')" != 0 ] &&
    fail "a rejected command stored an experiment"
  ;;
stand_in)
  fixtures=$(dirname "$scenario")
  for verb in predict run; do
    "$kvsweep" --db "$verb.db" $verb "$fixtures/stand_in_sweep.yaml" -o "$verb" >"$verb.out" 2>&1 ||
      fail "$verb with a stand-in exited $?: $(tail -3 "$verb.out")"
    grep -q "dataset=generated stand-in for the absent sharegpt file .*/sharegpt_16_messages_or_more.json: synthetic-multiturn: 6 conversations" \
      "$verb/cli-stand-in.md" || fail "$verb: the report does not say the stand-in was sent"
  done
  out=$("$kvsweep" --db real.db run "$fixtures/stand_in_endpoints.yaml" 2>&1) &&
    fail "a real target ran without its dataset file"
  grep -q "stand_in_endpoints.yaml: load.dataset.path: no such file: .*sharegpt_16_messages_or_more.json (its stand_in is used only on the simulated fleet" <<<"$out" ||
    fail "unclear error: $out"
  [ "$(sqlite3 real.db 'SELECT count(*) FROM experiments' 2>/dev/null || echo 0)" = 0 ] ||
    fail "the refused run stored an experiment"
  ;;
epp_weights)
  out=$("$kvsweep" --db w.db predict "$(dirname "$scenario")/epp_prefix_weight.yaml" -o reports 2>&1) ||
    fail "predict exited $?: $out"
  grep -q "experiment 1 done: 3 cells done, 0 failed" <<<"$out" || fail "not 3 cells done: $out"
  # Each cell's server KV hit rate: Σ Δ hits / Σ Δ queries over the replicas' stored counters.
  hits=$(sqlite3 w.db "
    WITH d AS (SELECT cell_id, source, name, max(value) - min(value) AS delta
                 FROM metric_samples
                WHERE name IN ('vllm:prefix_cache_hits_total', 'vllm:prefix_cache_queries_total')
                GROUP BY cell_id, source, name)
    SELECT c.arm, printf('%.3f', sum(CASE WHEN d.name LIKE '%hits%' THEN d.delta END) /
                                 sum(CASE WHEN d.name LIKE '%queries%' THEN d.delta END))
      FROM cells c JOIN d ON d.cell_id = c.id GROUP BY c.id ORDER BY c.ordinal")
  echo "$hits"
  h0=$(sed -n 's/^tuned, weight=0|//p' <<<"$hits") h10=$(sed -n 's/^tuned, weight=10|//p' <<<"$hits")
  [ -n "$h0" ] && [ -n "$h10" ] || fail "no hit rate per arm: $hits"
  awk -v a="$h0" -v b="$h10" 'BEGIN { exit !(b > a + 0.1) }' ||
    fail "weight 10 does not hit the cache more than weight 0: $hits"
  # Every cell is cold: the picker is built afresh (its prefix index is its routing history).
  colds=$(sqlite3 w.db "SELECT count(*) FROM cell_commands
                         WHERE step = 'cold' AND argv_json LIKE '%the endpoint picker built afresh%'")
  [ "$colds" = 3 ] || fail "$colds cold cells built the picker afresh, want 3"
  ;;
*) fail "unknown case $case" ;;
esac
echo "PASS: $case"
