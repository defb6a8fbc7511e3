#!/usr/bin/env bash
# `kvsweep plan` of a seed scenario against its checked-in golden output: a change to a seed's
# matrix (cells, levels, commands, keys) is a visible diff. KVSWEEP_UPDATE_GOLDEN=1 rewrites
# the golden file instead (then review `git diff tests/golden/plans`).
# Usage: seed_plan_golden_test.sh <kvsweep> <scenario.yaml> <golden.txt>
set -euo pipefail
kvsweep=$1 scenario=$2 golden=$3
# Run from the scenario's folder so the output names it the way a user would.
actual=$(cd "$(dirname "$scenario")/.." && "$kvsweep" plan "scenarios/$(basename "$scenario")")
if [[ "${KVSWEEP_UPDATE_GOLDEN:-}" == 1 ]]; then
  printf '%s\n' "$actual" >"$golden"
  echo "PASS (golden rewritten: $golden)"
  exit 0
fi
if [[ ! -f "$golden" ]]; then
  echo "FAIL: no golden file $golden (run with KVSWEEP_UPDATE_GOLDEN=1 to create it)"
  exit 1
fi
if ! diff -u "$golden" <(printf '%s\n' "$actual"); then
  echo "FAIL: kvsweep plan $(basename "$scenario") differs from $golden (diff above)"
  exit 1
fi
echo PASS
