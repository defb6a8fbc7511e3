#!/usr/bin/env bash
# An experiment's setup is one typed struct (store/experiment_setup.h), and its JSON is spelled
# in one pair of files: no other source file names the setup_json column, parses a cell's
# factors_json, or builds the setup's JSON. The store's SQL names the columns (experiments.cc,
# cells.cc, store_impl.h, schema.cc and the schema-14 rewrite); the plan makes a cell's factors
# text, its identity (orchestrator/scenario/plan.*), which reaches the store only through
# store::decode_factors.
# Usage: setup_contract_test.sh SOURCE_DIR. Prints one FAIL line per offending line, else PASS.
set -u
cd "$1" || { echo "FAIL: no source dir $1"; exit 1; }

failures=0
fail() {
  echo "FAIL: $1"
  failures=$((failures + 1))
}

allowed='^(store/experiment_setup\.(h|cc)|store/schema14_setups\.(h|cc)|store/schema\.cc|store/experiments\.cc|store/cells\.cc|store/store_impl\.h|orchestrator/scenario/plan\.(h|cc)):'
parts=(common store driver sim predict reports orchestrator bench fuzz)
while IFS= read -r hit; do
  grep -qE "$allowed" <<<"$hit" || fail "$hit: the setup's JSON belongs to store/experiment_setup.{h,cc}"
done < <(grep -rnE 'setup_json|factors_json' "${parts[@]}" --include='*.h' --include='*.cc' 2>/dev/null |
           grep -vE ':[0-9]+: *//' |  # comments may name the columns
           grep -vE 'decode_factors\([a-z_.]*factors_json\)')  # the plan's levels, into the store's type

# The pair itself spells the keys: the check must see it.
keys=$(grep -cE '"(target|load|search|validity|factors)"' store/experiment_setup.cc)
[ "$keys" -ge 5 ] || fail "store/experiment_setup.cc spells $keys section keys: wrong dir?"

if [ "$failures" -eq 0 ]; then
  echo "PASS: the setup's JSON is spelled only in store/experiment_setup.{h,cc} ($keys section keys there)"
fi
