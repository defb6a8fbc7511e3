#!/usr/bin/env bash
# Requests/s of `kvsweep sim serve` with 1 and with 2 io threads (--io-threads), in one run: the
# fleet (4 replicas, a profile whose steps take 10 us, so the host's CPU is the limit, not the
# simulated GPU) on 127.0.0.1, loaded by `wrk` with short streaming chat requests, legs
# alternating 1, 2, 1, 2 so a change in the machine's load hits both alike.
# Usage: bench/fleet_io_threads_bench.sh [build-dir]   (about 70 s; every server is stopped)
# LEGS (6), SECONDS_PER_LEG (8) and CONNECTIONS (64) change the run.
set -euo pipefail
build="${1:-build}"
kvsweep="$build/orchestrator/kvsweep"
[[ -x "$kvsweep" ]] || { echo "fleet_io_threads_bench.sh: $kvsweep not built" >&2; exit 1; }
command -v wrk >/dev/null || { echo "fleet_io_threads_bench.sh: needs wrk (apt-get install wrk)" >&2; exit 1; }
seconds="${SECONDS_PER_LEG:-8}"
connections="${CONNECTIONS:-64}"

work=$(mktemp -d)
pid=""
trap '[[ -n "$pid" ]] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
cat >"$work/bench-fast.yaml" <<'YAML'
name: bench-fast
source: "bench/fleet_io_threads_bench.sh: steps of 10 us, so the server's CPU is the bound"
base_us: 10
per_prefill_token_us: 0
per_decode_token_us: 0
max_num_seqs: 256
max_num_batched_tokens: 8192
num_gpu_blocks: 65536
block_size: 16
max_model_len: 16384
default_max_tokens: 8
YAML
body='{"model":"sim-model","messages":[{"role":"user","content":"a short question for the bench"}],"max_tokens":8,"ignore_eos":true,"stream":true}'
cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
LUA

# Leg number $2: a fresh fleet with $1 io threads, a warm-up, then wrk; prints "threads req/s cpu_s".
leg() {
  local log="$work/serve-$2.log"  # a new file per leg: never the last leg's URL
  "$kvsweep" sim serve --replicas 4 --profile bench-fast --profile-dir "$work" --port 0 \
    --strategy round-robin --io-threads "$1" >"$log" 2>&1 &
  pid=$!
  local url=""
  for _ in $(seq 100); do
    url=$(awk '/^router/ {print $2}' "$log")
    [[ -n "$url" ]] && break
    sleep 0.1
  done
  [[ -n "$url" ]] || { echo "no router URL: $(cat "$log")" >&2; exit 1; }
  wrk -t1 -c"$connections" -d2s -s "$work/post.lua" "$url/v1/chat/completions" >/dev/null
  local ticks_before ticks_after
  ticks_before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  local out
  out=$(wrk -t1 -c"$connections" -d"${seconds}s" -s "$work/post.lua" "$url/v1/chat/completions")
  ticks_after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
  local rps errors
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  errors=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out")
  [[ -z "$errors" ]] || echo "  io-threads $1: $errors" >&2
  echo "$1 $rps $(awk -v t=$((ticks_after - ticks_before)) -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", t / hz}')"
}

echo "fleet requests/s by io threads: 4 replicas, profile bench-fast (10 us steps), streaming chat"
echo "of 8 tokens, wrk -t1 -c$connections -d${seconds}s per leg, legs alternating; load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '  %-11s %12s %14s %22s\n' "io threads" "requests/s" "server CPU s" "requests/server CPU s"
results=()
for ((i = 0; i < ${LEGS:-6}; ++i)); do
  threads=$((1 + i % 2))
  read -r t rps cpu < <(leg "$threads" "$i")
  printf '  %-11s %12s %14s %22.0f\n' "$t" "$rps" "$cpu" "$(awk -v r="$rps" -v s="$seconds" -v c="$cpu" 'BEGIN {print (c > 0 ? r * s / c : 0)}')"
  results+=("$t $rps")
done
median() { sort -n | awk '{ a[NR] = $1 } END { print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
one=$(printf '%s\n' "${results[@]}" | awk '$1 == 1 {print $2}' | median)
two=$(printf '%s\n' "${results[@]}" | awk '$1 == 2 {print $2}' | median)
awk -v one="$one" -v two="$two" 'BEGIN {
  printf "  median: 1 io thread %.0f req/s, 2 io threads %.0f req/s: ratio %.2f\n", one, two, two / one }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
