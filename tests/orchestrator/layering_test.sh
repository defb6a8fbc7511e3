#!/usr/bin/env bash
# The include graph points one way. Inside orchestrator/: cli -> calibrate -> sweep -> targets
# -> scenario; no file includes a header of a folder above its own. Outside it, no part includes
# orchestrator/ (tests aside; serve/ has its own test), and common/ includes nothing of ours but
# common/.
# Usage: layering_test.sh SOURCE_DIR. Prints one FAIL line per offending include, else PASS.
set -u
cd "$1" || { echo "FAIL: no source dir $1"; exit 1; }

rank() {
  case "$1" in
    scenario) echo 0 ;;
    targets) echo 1 ;;
    sweep) echo 2 ;;
    calibrate) echo 3 ;;
    cli) echo 4 ;;
    *) echo -1 ;;
  esac
}

failures=0
fail() {
  echo "FAIL: $1"
  failures=$((failures + 1))
}

# file:line:#include "orchestrator/<folder>/..."
while IFS= read -r hit; do
  file=${hit%%:*}
  included=$(sed -E 's/.*#include "orchestrator\/([a-z_]+)\/.*/\1/' <<<"$hit")
  folder=$(cut -d/ -f2 <<<"$file")
  from=$(rank "$folder")
  to=$(rank "$included")
  if [ "$from" -lt 0 ] || [ "$to" -lt 0 ]; then
    fail "$hit: a folder outside cli, calibrate, sweep, targets, scenario"
  elif [ "$to" -gt "$from" ]; then
    fail "$hit: orchestrator/$folder may not include orchestrator/$included (above it)"
  fi
done < <(grep -rnE '#include "orchestrator/' orchestrator --include='*.h' --include='*.cc')

# Nothing below the orchestrator includes it.
while IFS= read -r hit; do
  fail "$hit: only the orchestrator and tests include orchestrator/"
done < <(grep -rnE '#include "orchestrator/' common store driver sim predict figures reports serve \
           --include='*.h' --include='*.cc' 2>/dev/null)

# common/ depends on nothing of ours.
while IFS= read -r hit; do
  fail "$hit: common/ includes only common/"
done < <(grep -rnE '#include "(store|driver|sim|predict|figures|reports|serve|orchestrator|tests)/' common \
           --include='*.h' --include='*.cc')

# The target seam fits in a head: Target declares a handful of methods, and the Kubernetes
# kinds share their mechanics by holding a KubeSession, not by overriding a base's hooks (a
# protected virtual method anywhere under targets/ is such a hook).
target_methods=$(grep -cE '^\s*virtual ' orchestrator/targets/target.h)
[ "$target_methods" -le 9 ] ||
  fail "orchestrator/targets/target.h declares $target_methods virtual methods (a destructor and at most 8)"
while IFS= read -r hit; do
  fail "$hit: a protected virtual method (a hook a kind overrides): compose a helper instead"
done < <(awk 'FNR == 1 { hidden = 0 }
              /^ *protected:/ { hidden = 1; next }
              /^ *(public|private):/ || /^};/ { hidden = 0 }
              hidden && /virtual / { print FILENAME ":" FNR ": " $0 }' \
           $(find orchestrator/targets -name '*.h' -o -name '*.cc'))
while IFS= read -r hit; do
  fail "$hit: a kind derives from the Kubernetes mechanics; hold a KubeSession instead"
done < <(grep -rnE ': *public (KubeSession|KubeTarget)\b' orchestrator --include='*.h' --include='*.cc')

# The check itself must see the code it checks.
checked=$(grep -rlE '#include "orchestrator/' orchestrator | wc -l)
[ "$checked" -ge 40 ] || fail "only $checked orchestrator files include orchestrator/: wrong dir?"

if [ "$failures" -eq 0 ]; then
  echo "PASS: $checked orchestrator files, every include points down"
fi
