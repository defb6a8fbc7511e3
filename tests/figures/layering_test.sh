#!/usr/bin/env bash
# The figures floor (issue 41): figures/ computes and judges (metrics, summaries, validity,
# bootstrap, compare, capacity, SLO, cost) on top of store/ and common/ only; reports/ renders
# what figures/ computed and reads the store, never writing it (no non-const Store&); what
# either only reads takes a store reader (store_readers.h), never a const Store&; nothing
# below either floor includes them.
# Usage: layering_test.sh SOURCE_DIR. Prints one FAIL line per offending line, else PASS.
set -u
cd "$1" || { echo "FAIL: no source dir $1"; exit 1; }

failures=0
fail() {
  echo "FAIL: $1"
  failures=$((failures + 1))
}

# figures/ includes only common/, store/ and itself of ours.
while IFS= read -r hit; do
  fail "$hit: figures/ includes only figures/, store/ and common/"
done < <(grep -rnE '#include "(driver|sim|predict|reports|orchestrator|serve|tests)/' figures \
           --include='*.h' --include='*.cc')

# reports/ renders: it may include figures/, store/, common/ and itself, and writes no store.
while IFS= read -r hit; do
  fail "$hit: reports/ includes only reports/, figures/, store/ and common/"
done < <(grep -rnE '#include "(driver|sim|predict|orchestrator|serve|tests)/' reports \
           --include='*.h' --include='*.cc')
while IFS= read -r hit; do
  fail "$hit: reports/ takes the store read-only (a const store::StoreReader&)"
done < <(grep -rnE '\b(store::)?Store ?&' reports --include='*.h' --include='*.cc' |
           grep -vE 'const (store::)?Store ?&')

# What only reads takes a reader (store/store_readers.h: RunReader, FigureReader, RowReader or
# StoreReader), never the concrete store: figures/ and reports/ name no const Store&.
while IFS= read -r hit; do
  fail "$hit: a read takes a store reader (store_readers.h), not a const store::Store&"
done < <(grep -rnE 'const (store::)?Store ?&' figures reports --include='*.h' --include='*.cc')

# Below both floors: nothing includes figures/ or reports/.
while IFS= read -r hit; do
  fail "$hit: common, store, driver, sim and predict include neither figures/ nor reports/"
done < <(grep -rnE '#include "(figures|reports)/' common store driver sim predict \
           --include='*.h' --include='*.cc')

# The check itself must see the code it checks.
figures=$(ls figures/*.cc 2>/dev/null | wc -l)
renderers=$(grep -rlE '#include "figures/' reports | wc -l)
[ "$figures" -ge 15 ] || fail "only $figures sources in figures/: wrong dir?"
[ "$renderers" -ge 5 ] || fail "only $renderers files of reports/ include figures/: wrong dir?"

if [ "$failures" -eq 0 ]; then
  echo "PASS: $figures sources in figures/, $renderers renderers read them, every include points down"
fi
