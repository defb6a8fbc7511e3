#!/usr/bin/env bash
# What `kvsweep calibrate` and `kvsweep replay` cost: each is a number of predicted sweeps of a
# stored run's cells, so their time is the predictor's per replay. Predicts two runs (the
# calibration fixture's replay grid, 4 cells of 400 multi-turn requests on 4 demo replicas; seed
# 000 as shipped, 2 cells of 2,000 requests on 8 L4 replicas, whose one batch size leaves
# per_decode_token_us to --fix), then calibrates each from another profile and replays each
# under PrefixHash, printing replays, seconds and seconds per replay. Usage: bench/calibrate_bench.sh [build-dir]; about a minute and a half on 2 cores.
set -euo pipefail
build="${1:-build}"
kvsweep="$build/orchestrator/kvsweep"
repo=$(cd "$(dirname "$0")/.." && pwd)
[[ -x "$kvsweep" ]] || { echo "calibrate_bench.sh: $kvsweep not built" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# The replay grid's start: the demo profile it ran with, every coefficient 2x / 0.5x / 2x off
# (its capacity fields kept: calibrate fits only the time coefficients).
sed -e 's/^name: demo$/name: demo-off/' -e 's/^base_us: .*/base_us: 2000/' \
  -e 's/^per_prefill_token_us: .*/per_prefill_token_us: 10/' \
  -e 's/^per_decode_token_us: .*/per_decode_token_us: 60/' "$repo/profiles/demo.yaml" >"$work/demo-off.yaml"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
printf '%-34s %-9s %8s %9s %12s\n' run step replays seconds "s / replay"
# name | scenario | calibrate's start profile | calibrate's extra arguments
while IFS='|' read -r name scenario start extra; do
  db="$work/$name.db"
  t=$(now)
  "$kvsweep" --db "$db" -q predict "$repo/$scenario" --no-print -o "$work" >/dev/null
  printf '%-34s %-9s %8s %9s %12s\n' "$name" predict 1 "$(since "$t")" "-"
  t=$(now)
  # shellcheck disable=SC2086  # extra holds whole arguments, none with spaces
  "$kvsweep" --db "$db" calibrate 1 --profile "${start/WORK/$work}" $extra >"$work/$name.calibrate" 2>&1 ||
    { echo "calibrate_bench.sh: calibrate $name failed:" >&2; tail -5 "$work/$name.calibrate" >&2; exit 1; }
  seconds=$(since "$t")
  replays=$(sed -n 's/^fit: \([0-9]*\) replays.*/\1/p' "$work/$name.calibrate")
  printf '%-34s %-9s %8s %9s %12s\n' "$name" calibrate "$replays" "$seconds" \
    "$(awk -v s="$seconds" -v r="$replays" 'BEGIN { printf "%.3f", s / r }')"
  t=$(now)
  "$kvsweep" --db "$db" -q replay 1 --strategy PrefixHash >/dev/null
  printf '%-34s %-9s %8s %9s %12s\n' "$name" replay 1 "$(since "$t")" "-"
done <<'RUNS'
replay-grid (4 x 400 requests)|tests/fixtures/calibrate/replay.yaml|WORK/demo-off.yaml|
seed 000 (2 x 2,000 requests)|scenarios/seed-000-kubeai-l4-prefixhash.yaml|h100-llama3.1-8b|--fix per_decode_token_us
RUNS
