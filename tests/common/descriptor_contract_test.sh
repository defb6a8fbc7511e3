#!/usr/bin/env bash
# Every descriptor kvsweep opens is owned by a UniqueFd (common/unique_fd.h): no source file of
# the product but common/unique_fd.cc calls ::close. (Tests and benchmarks open their own.)
# Usage: descriptor_contract_test.sh SOURCE_DIR. Prints one FAIL line per raw close, else PASS.
set -u
cd "$1" || { echo "FAIL: no source dir $1"; exit 1; }

failures=0
while IFS= read -r hit; do
  echo "FAIL: $hit: own the descriptor with a UniqueFd (common/unique_fd.h)"
  failures=$((failures + 1))
done < <(grep -rnF '::close(' common store driver sim predict reports orchestrator \
           --include='*.h' --include='*.cc' |
         grep -vE '^common/unique_fd\.cc:' |
         grep -vE ':[0-9]+: *//' |
         grep -vE '(void|int|bool) [A-Za-z_]+::close\(')  # a class's own close()

# The check must see the one place that closes.
grep -q '::close(' common/unique_fd.cc || { echo "FAIL: common/unique_fd.cc closes nothing: wrong dir?"; exit 0; }

[ "$failures" -eq 0 ] && echo "PASS: every descriptor is closed through common/unique_fd.cc"
