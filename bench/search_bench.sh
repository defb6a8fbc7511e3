#!/usr/bin/env bash
# The capacity search's guide on the embedded fleet: the same searching scenario run on
# `--target sim` (real time, over loopback) unguided and guided by the predictor, and per arm
# the probes each needed, the capacities found and the predicted one. The guided search must
# need at most half the probes of the unguided one at the same precision (issue "capacity
# search"). Usage: bench/search_bench.sh [build-dir]; about two minutes on 2 cores. Needs
# sqlite3 (the store is read back).
set -euo pipefail
build="${1:-build}"
kvsweep="$build/orchestrator/kvsweep"
[[ -x "$kvsweep" ]] || { echo "search_bench.sh: $kvsweep not built" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "search_bench.sh: sqlite3 not found" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
write_scenario() {  # guide
  cat >"$work/search-$1.yaml" <<YAML
name: search-bench-$1
target: {kind: sim, replicas: 4, profile: demo}
model: bench-model
seed: 11
factors:
  strategy: [least-load, prefix-hash]
  concurrency: [1024]
load:
  # Stationary prompts (16 shared 512-token prefixes, random order): a multi-turn dataset's
  # prompts grow through a short cell, which the over-capacity rule reads as a rising trend.
  dataset: {kind: shared-prefix, num_prefixes: 16, prompts_per_prefix: 32, prefix_tokens: 512,
            suffix_tokens: 32}
  max_tokens: 16
  num_requests: 400                # or 6 s, whichever ends first: a slow probe is short
  duration: 6s
  timeout: 60s
slo: {p95_ttft_ms: 40}
search: {factor: load.request_rate, low: 4, high: 4000, precision: 0.1, guide: $1}
YAML
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
printf '%-8s %-18s %7s %9s %14s %10s %8s  %s\n' guide arm probes capacity "first failing" predicted seconds "how it ended"
declare -A probes
for guide in none predict; do
  write_scenario "$guide"
  start=$(date +%s.%N)
  "$kvsweep" --db "$work/$guide.db" run "$work/search-$guide.yaml" --target sim --no-print \
    -o "$work/reports-$guide" >"$work/out-$guide" 2>&1 ||
    { echo "search_bench.sh: the $guide search failed:" >&2; tail -20 "$work/out-$guide" >&2; exit 1; }
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  while IFS='|' read -r arm count capacity failing predicted why; do
    printf '%-8s %-18s %7s %9s %14s %10s %8.1f  %s\n' "$guide" "$arm" "$count" "$capacity" \
      "$failing" "${predicted:--}" "$seconds" "$why"
    probes[$guide]=$(( ${probes[$guide]:-0} + count ))
  done < <(sqlite3 "$work/$guide.db" "
    SELECT a.arm_key, json_array_length(a.probes), a.capacity, a.first_failing, a.guide, a.why
    FROM arm_searches a JOIN experiments e ON e.id = a.experiment_id
    WHERE e.name = 'search-bench-$guide' AND e.setup_json NOT LIKE '%\"kind\":\"predict\"%'
    ORDER BY a.position")
done
echo "probes: unguided ${probes[none]}, guided ${probes[predict]}" \
  "($(awk -v g="${probes[predict]}" -v u="${probes[none]}" 'BEGIN { printf "%.2f", g / u }') of the unguided)"
