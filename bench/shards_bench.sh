#!/usr/bin/env bash
# Load shards against N: the same open-loop schedule sent by 1, 2 and 3 local shard processes
# (`kvsweep load --shards N`) to bench/sse_bench_server's one-token path, and what each sent:
# the aggregate send rate against the schedule's, the driver's send delay p99 (the worst
# shard's), and CPU per request summed over the shards.
# Usage: bench/shards_bench.sh [build-dir]   (RATE, REQUESTS and SHARDS override the defaults:
# 2000 req/s, 10000 requests, "1 2 3"; about a minute). Needs sqlite3 (the store is read back).
# On one machine shards share its cores: the figures show what splitting costs and that the
# merged run is the same schedule; the gain is on several machines (docs/driver.md).
set -euo pipefail
build="${1:-build}"
server="$build/bench/sse_bench_server"
kvsweep="$build/orchestrator/kvsweep"
for program in "$server" "$kvsweep"; do
  [[ -x "$program" ]] || { echo "shards_bench.sh: $program not built" >&2; exit 1; }
done
command -v sqlite3 >/dev/null || { echo "shards_bench.sh: sqlite3 not found" >&2; exit 1; }
rate="${RATE:-2000}"
requests="${REQUESTS:-10000}"
work=$(mktemp -d)
port_file="$work/port"
"$server" --max-seconds 600 --max-connections 5000 >"$port_file" &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do grep -q '^port ' "$port_file" && break; sleep 0.1; done
port=$(awk '/^port /{print $2}' "$port_file")
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc); $rate req/s open loop, $requests requests"
printf '%-7s %10s %10s %10s %14s %14s %s\n' shards requests "sent/s" "due/s" "delay p99 ms" "CPU us/req" "verdict"
for shards in ${SHARDS:-1 2 3}; do
  db="$work/s$shards.db"
  TMPDIR="$work" "$kvsweep" --db "$db" load --url "http://127.0.0.1:$port/fast" --model m \
    --request-rate "$rate" --num-prompts "$requests" --max-tokens 1 --random-input-len 16 \
    --dataset-name random --shards "$shards" --no-save >/dev/null 2>"$work/err" ||
    { echo "shards_bench.sh: the run with $shards shards failed:" >&2; cat "$work/err" >&2; exit 1; }
  sqlite3 -separator ' ' "$db" "
    SELECT $shards, (SELECT count(*) FROM requests),
      printf('%.1f', (l.send_delay_count - 1) / l.sent_span_s),
      printf('%.1f', (l.send_delay_count - 1) / l.ready_span_s),
      printf('%.3f', l.send_delay_p99_ms),
      printf('%.1f', l.driver_cpu_s * 1e6 / l.send_delay_count)
    FROM cell_loads l" | while read -r n count sent due p99 cpu; do
    verdict=$(grep -o 'verdict: [a-z -]*' "$work/err" | head -1 | cut -d' ' -f2-)
    printf '%-7s %10s %10s %10s %14s %14s %s\n' "$n" "$count" "$sent" "$due" "$p99" "$cpu" "${verdict:-see stderr}"
  done
done
