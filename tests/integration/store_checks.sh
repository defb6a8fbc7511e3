# Shell helpers for the CLI tests that read a store with sqlite3; sourced, not run.

sql() { sqlite3 -cmd '.timeout 5000' "$1" "$2"; }

# Waits (at most 30 s) until the query on the store prints something other than 0 or nothing.
wait_for() {
  local db=$1 query=$2 value=0
  for _ in $(seq 1 600); do
    [ -f "$db" ] && value=$(sql "$db" "$query" 2>/dev/null || echo 0)
    [ -n "$value" ] && [ "$value" != 0 ] && return 0
    sleep 0.05
  done
  fail "timed out waiting for: $query"
}

# Every cell of every experiment in the store is done and measured once: no request index
# twice in a cell, exactly `warmup` warm-up requests per cell, one "before" sample per series
# and cell, at least one measured request per cell, no claim left behind.
check_measured_once() {
  local db=$1 warmup=$2
  local dup warm samples unfinished measured claims
  dup=$(sql "$db" "select count(*) from (select cell_id, request_index from requests group by 1, 2 having count(*) > 1)")
  [ "$dup" -eq 0 ] || fail "$db: $dup request indexes stored twice in one cell"
  warm=$(sql "$db" "select group_concat(n, ',') from (select (select count(*) from requests r where r.cell_id = c.id and r.warmup = 1) as n from cells c order by c.id)")
  [[ "$warm" =~ ^$warmup(,$warmup)*$ ]] || fail "$db: warm-up requests per cell: $warm (want $warmup each)"
  samples=$(sql "$db" "select count(*) from (select cell_id, source, name, labels_json from metric_samples where phase = 'before' group by 1, 2, 3, 4 having count(*) > 1)")
  [ "$samples" -eq 0 ] || fail "$db: $samples series scraped twice 'before' one cell"
  unfinished=$(sql "$db" "select count(*) from cells where status != 'done'")
  [ "$unfinished" -eq 0 ] || fail "$db: $unfinished cells not done"
  measured=$(sql "$db" "select count(*) from cells c where (select count(*) from requests r where r.cell_id = c.id and r.warmup = 0) = 0")
  [ "$measured" -eq 0 ] || fail "$db: $measured cells without a measured request"
  claims=$(sql "$db" "select count(*) from cell_claims")
  [ "$claims" -eq 0 ] || fail "$db: $claims claims left behind"
}
