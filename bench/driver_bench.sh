#!/usr/bin/env bash
# Runs the load-driver benches: starts bench/sse_bench_server on 127.0.0.1, measures wrk on
# it, then driver_bench (10k held streams, TTFT overhead, events/s, pacing, raw rate vs wrk).
# Usage: bench/driver_bench.sh [build-dir]   (about 2 minutes; the server stops by itself)
set -euo pipefail
build="${1:-build}"
server="$build/bench/sse_bench_server"
bench="$build/bench/driver_bench"
for program in "$server" "$bench"; do
  [[ -x "$program" ]] || { echo "driver_bench.sh: $program not built" >&2; exit 1; }
done
if ! command -v wrk >/dev/null; then
  echo "installing wrk (Debian package) for the raw-rate comparison"
  if [[ $(id -u) -eq 0 ]]; then apt-get install -y wrk >/dev/null; else sudo apt-get install -y wrk >/dev/null; fi
fi

port_file=$(mktemp)
"$server" --max-seconds 240 --max-connections 12000 >"$port_file" &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; rm -f "$port_file"' EXIT
for _ in $(seq 50); do grep -q '^port ' "$port_file" && break; sleep 0.1; done
port=$(awk '/^port /{print $2}' "$port_file")
url="http://127.0.0.1:$port"

wrk_rps=0
if command -v wrk >/dev/null; then
  wrk_rps=$(wrk -t1 -c64 -d5s "$url/fast/v1/chat/completions" | awk '/Requests\/sec/{print $2}')
fi
"$bench" --url "$url" --streams "${STREAMS:-10000}" --wrk-rps "$wrk_rps"
