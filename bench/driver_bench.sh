#!/usr/bin/env bash
# Runs the load-driver benches: starts bench/sse_bench_server on 127.0.0.1, then driver_bench
# (10k-stream ramp, flat CPU per request at 10 vs 10k held streams, pacing at 2,000 req/s
# with 10k held, idle overhead, events/s, raw rate against `wrk -t2 -c64`).
# Usage: bench/driver_bench.sh [build-dir] [--only SECTION]   (about 2 minutes; the server
# stops by itself). Other work on the machine shows in every figure: the bench prints the load
# average; run it when `uptime` says the machine is quiet.
set -euo pipefail
build="${1:-build}"
shift || true
server="$build/bench/sse_bench_server"
bench="$build/bench/driver_bench"
for program in "$server" "$bench"; do
  [[ -x "$program" ]] || { echo "driver_bench.sh: $program not built" >&2; exit 1; }
done
command -v wrk >/dev/null ||
  echo "driver_bench.sh: wrk not found (scripts/install-deps.sh test installs it): no raw-rate ratio" >&2

port_file=$(mktemp)
"$server" --max-seconds 300 --max-connections 15000 >"$port_file" &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; rm -f "$port_file"' EXIT
for _ in $(seq 50); do grep -q '^port ' "$port_file" && break; sleep 0.1; done
port=$(awk '/^port /{print $2}' "$port_file")
"$bench" --url "http://127.0.0.1:$port" --streams "${STREAMS:-10000}" "$@"
