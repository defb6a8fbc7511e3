#!/usr/bin/env bash
# Installs puppeteer-core (the version package-lock.json pins, with integrity hashes) into
# DEST/node_modules for the browser tests, from the npm registry with npm's ordinary client.
# No install script runs (--ignore-scripts), and puppeteer-core downloads no browser: the
# tests drive Debian's /usr/bin/chromium. Quick when DEST already holds the locked version.
# Any failure is loud: the browser tests need this and must not pass without it.
#   install.sh DEST
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=$1
command -v npm >/dev/null || { echo "FAIL: npm is missing: run scripts/install-deps.sh test"; exit 1; }
[ -x /usr/bin/chromium ] || { echo "FAIL: /usr/bin/chromium is missing: run scripts/install-deps.sh test"; exit 1; }
mkdir -p "$dest"
cp "$here/package.json" "$here/package-lock.json" "$dest/"
want=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["packages"]["node_modules/puppeteer-core"]["version"])' "$here/package-lock.json")
have=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$dest/node_modules/puppeteer-core/package.json" 2>/dev/null || true)
if [ "$have" = "$want" ]; then
  echo "PASS: puppeteer-core $want already in $dest"
  exit 0
fi
cd "$dest"
if ! npm ci --ignore-scripts --no-audit --no-fund --loglevel=error; then
  echo "FAIL: npm ci could not install puppeteer-core $want into $dest (see above)"
  exit 1
fi
echo "PASS: installed puppeteer-core $want into $dest"
