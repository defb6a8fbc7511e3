#!/usr/bin/env bash
# serve/ is a read-only view beside the renderers (issue 41): it includes serve/, reports/,
# figures/, store/, driver/ (the /metrics fetch) and common/ of ours, never the orchestrator;
# only the orchestrator's command line (orchestrator/cli) includes it, and nothing below it does;
# it takes the store as a reader (store_readers.h), never as a store::Store&.
# Usage: layering_test.sh SOURCE_DIR. Prints one FAIL line per offending line, else PASS.
set -u
cd "$1" || { echo "FAIL: no source dir $1"; exit 1; }

failures=0
fail() {
  echo "FAIL: $1"
  failures=$((failures + 1))
}

while IFS= read -r hit; do
  fail "$hit: serve/ includes only serve/, reports/, figures/, store/, driver/ and common/"
done < <(grep -rnE '#include "(sim|predict|orchestrator|tests)/' serve --include='*.h' --include='*.cc')

while IFS= read -r hit; do
  fail "$hit: only orchestrator/cli includes serve/"
done < <(grep -rnE '#include "serve/' common store driver sim predict figures reports orchestrator \
           --include='*.h' --include='*.cc' | grep -v '^orchestrator/cli/')

# serve/ only reads the store: its views take a reader (store/store_readers.h), never the
# concrete store (only open_store, which makes one, names store::Store).
while IFS= read -r hit; do
  fail "$hit: serve/ reads through a store reader (store_readers.h), not a store::Store&"
done < <(grep -rnE '\b(store::)?Store ?&' serve --include='*.h' --include='*.cc')

# The check itself must see the code it checks.
sources=$(ls serve/*.cc 2>/dev/null | wc -l)
users=$(grep -rlE '#include "serve/' orchestrator/cli | wc -l)
[ "$sources" -ge 10 ] || fail "only $sources sources in serve/: wrong dir?"
[ "$users" -ge 1 ] || fail "orchestrator/cli includes nothing of serve/: wrong dir?"

if [ "$failures" -eq 0 ]; then
  echo "PASS: $sources sources in serve/, included by orchestrator/cli alone, every include points down"
fi
