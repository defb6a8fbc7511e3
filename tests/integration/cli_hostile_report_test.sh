#!/usr/bin/env bash
# A real sweep on the embedded fleet of a scenario named with HTML and markdown an attacker
# would write (issue 15 item 8): the markdown report `run` writes, and the one `report`
# renders, show the name as text: `<` only inside the CSV code block, the script tag as
# entities, the link syntax escaped.
set -euo pipefail
kvsweep=$1
scenario=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$kvsweep" --db "$dir/s.db" run "$scenario" --reports-dir "$dir/reports" --no-print 2>"$dir/err" ||
  { cat "$dir/err"; fail "the sweep failed"; }
"$kvsweep" --db "$dir/s.db" report --out - >"$dir/printed.md"
files=("$dir"/reports/*.md)
[ "${#files[@]}" -eq 1 ] || fail "expected one report file, got ${files[*]}"
for report in "${files[0]}" "$dir/printed.md"; do
  # Drop the fenced CSV block (its text is shown as it is), then look for any tag.
  outside=$(awk '/^````*csv$/ {skip = 1; next} skip && /^````*$/ {skip = 0; next} !skip' "$report")
  if grep -n '[<>]' <<<"$outside"; then fail "$report: raw < or > outside the code block"; fi
  grep -qF '# kvsweep report: xss &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt; &lt;!-- \[c\](javascript:alert(3))' \
    <<<"$outside" || fail "$report: the title is not the escaped name: $(head -1 "$report")"
  grep -q '| prefix-hash |' <<<"$outside" || fail "$report: no result rows"
done
echo "$(head -1 "${files[0]}")"
echo "PASS"
