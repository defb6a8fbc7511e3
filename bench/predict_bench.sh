#!/usr/bin/env bash
# The predictor's speed: seed 002's and seed 003's full matrices through `kvsweep predict`,
# each into a fresh store: seed 002 as shipped (scenarios/seed-002-*.yaml: each level at the
# seed's own rate, the ShareGPT stand-in), seed 002 with every level at 800 req/s (issue 18's
# matrix, bench/predict/seed-002-all-at-800.yaml), and seed 003 as shipped (10 cells of 5
# minutes). Prints per matrix: cells, requests and output tokens stored, the virtual time the
# cells cover, wall and CPU seconds, peak memory (GNU time's maximum RSS), the load average when
# it started; and for both seed 002 matrices whether PrefixHash is ahead of LeastLoad (output
# tok/s and mean TTFT) at every level. Figures, not a test: docs/performance.md keeps them.
# Usage: bench/predict_bench.sh BUILD_DIR
set -u
build=${1:?usage: predict_bench.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
scenarios=$here/../scenarios
kvsweep=$(cd "$build" && pwd)/orchestrator/kvsweep
[ -x "$kvsweep" ] || { echo "no kvsweep binary in $build/orchestrator" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "GNU time is needed: scripts/install-deps.sh test" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

predict() {  # $1: label, $2: scenario
  local label=$1 scenario=$2 db=$work/$1.db
  echo "== $label: $scenario"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -f '%e %U %S %M' -o "$work/$label.time" \
    "$kvsweep" --db "$db" predict "$scenario" --no-print -o "$work/$label-report" \
    >"$work/$label.out" 2>&1 || { echo "FAILED: $(tail -3 "$work/$label.out")"; return 1; }
  read -r wall user sys rss_kb <"$work/$label.time"
  IFS='|' read -r requests cells tokens <<<"$(sqlite3 "$db" \
    "SELECT count(*), count(DISTINCT cell_id), sum(output_tokens) FROM requests")"
  virtual=$(sqlite3 "$db" "SELECT round(sum(w), 1) FROM (SELECT max(ended_s) - min(sent_s) AS w
                                                         FROM requests_full GROUP BY cell_id)")
  printf '%s cells, %s requests, %s output tokens, %s s of virtual time\n' \
    "$cells" "$requests" "$tokens" "$virtual"
  printf 'wall %s s, CPU %s s user + %s s system, peak RSS %d MiB, store %d MiB\n' \
    "$wall" "$user" "$sys" $((rss_kb / 1024)) $(($(stat -c %s "$db") / 1048576))
  awk -v v="$virtual" -v w="$wall" 'BEGIN { if (w > 0) printf "virtual / wall: %.1fx\n", v / w }'
}

ahead() {  # $1: label of a seed 002 matrix already predicted
  # PrefixHash ahead of LeastLoad at every level: more output tok/s and a lower mean TTFT.
  "$kvsweep" --db "$work/$1.db" report --format csv 2>/dev/null |
    awk -F, 'NR > 1 { tok[$1, $3] = $9; ttft[$1, $3] = $4; levels[$3] = 1 }
      END {
        ahead = 1
        for (c in levels) {
          ok = tok["PrefixHash", c] > tok["LeastLoad", c] && ttft["PrefixHash", c] < ttft["LeastLoad", c]
          printf "level %s: PrefixHash %s tok/s, %s s mean TTFT; LeastLoad %s tok/s, %s s: %s\n",
                 c, tok["PrefixHash", c], ttft["PrefixHash", c], tok["LeastLoad", c],
                 ttft["LeastLoad", c], ok ? "ahead" : "NOT ahead"
          if (!ok) ahead = 0
        }
        print ahead ? "PrefixHash ahead of LeastLoad at every level" : "PrefixHash NOT ahead at every level"
      }'
}

predict seed-002 "$scenarios/seed-002-kubeai-l4-three-arms.yaml" && ahead seed-002
predict seed-002-all-at-800 "$here/predict/seed-002-all-at-800.yaml" && ahead seed-002-all-at-800
predict seed-003 "$scenarios/seed-003-dynamo-kv-routing.yaml"
