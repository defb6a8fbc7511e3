#!/bin/bash
# Starts `kvsweep sim serve` on free loopback ports, installs the official openai npm package
# into WORK_DIR and runs script.mjs against the fleet. Usage: run.sh KVSWEEP WORK_DIR
set -euo pipefail
kvsweep=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
cd "$work"
if [ ! -d node_modules/openai ]; then
  [ -f package.json ] || echo '{"name":"kvsweep-openai-npm-test","private":true,"type":"module"}' > package.json
  npm install --no-audit --no-fund --silent openai
fi
cp "$here/script.mjs" "$work/script.mjs"

log="$work/serve.log"
"$kvsweep" sim serve --replicas 2 --port 0 > "$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 100); do
  url=$(awk '/^router/ {print $2}' "$log")
  [ -n "$url" ] && break
  kill -0 $pid 2>/dev/null || { cat "$log"; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "sim serve printed no router URL"; cat "$log"; exit 1; }
node "$work/script.mjs" "$url"
