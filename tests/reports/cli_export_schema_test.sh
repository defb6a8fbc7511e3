#!/usr/bin/env bash
# kvsweep export on the real binary: every llm-d Benchmark Report v0.2.1 file it writes passes
# docs/schemas/br_v0_2_1_json_schema.json (llm-d's own) under a real validator (Debian's
# python3-jsonschema), and the same check fails once one field of one file is broken.
# Usage: cli_export_schema_test.sh KVSWEEP FIXTURE_DIR WORK_DIR VALIDATOR SCHEMA
set -u
kvsweep=$1 fixtures=$2 work=$3 validator=$4 schema=$5
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
db=$work/export.db
fail() { echo "FAIL: $*"; exit 1; }

"$kvsweep" --db "$db" run "$fixtures/compare_fast.yaml" --no-print >/dev/null 2>&1 || fail "run"
"$kvsweep" --db "$db" export 1 --dir "$work/export" 2>/dev/null || fail "export"
reports=("$work"/export/*.llmd-br-v0.2.1.json)
[ ${#reports[@]} -eq 2 ] || fail "want 2 llm-d reports (2 cells), got ${#reports[@]}"
/usr/bin/python3 "$validator" "$schema" "${reports[@]}"; status=$?
[ $status -eq 0 ] || fail "exports do not validate (validator exited $status)"

# One field broken the way exports used to write it: the duration as a bare number.
broken=$work/broken.json
sed -E 's/"duration": "PT[^"]*"/"duration": 4.38/' "${reports[0]}" >"$broken"
grep -q '"duration": 4.38' "$broken" || fail "could not break the duration field"
out=$(/usr/bin/python3 "$validator" "$schema" "$broken"); status=$?
echo "$out"
[ $status -eq 1 ] || fail "a broken export passed the validator (exited $status)"
grep -q '\$.run.time.duration: 4.38 is not of type' <<<"$out" || fail "the error does not name the field"
echo "PASS"
