#!/usr/bin/env bash
# `kvsweep export` of a stored experiment (a seed rehearsal's store): every llm-d Benchmark
# Report v0.2.1 file validates against docs/schemas/br_v0_2_1_json_schema.json (llm-d's own) under
# Debian's python3-jsonschema.
# Usage: cli_export_validates_test.sh KVSWEEP DB WORK_DIR VALIDATOR SCHEMA
set -u
kvsweep=$1 db=$2 work=$3 validator=$4 schema=$5
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" || exit 2
"$kvsweep" --db "$db" export --dir "$work" 2>/dev/null || fail "export of $db"
shopt -s nullglob
reports=("$work"/*.llmd-br-v0.2.1.json)
[ ${#reports[@]} -gt 0 ] || fail "no llm-d report exported from $db"
/usr/bin/python3 "$validator" "$schema" "${reports[@]}" || fail "exports of $db do not validate"
echo "PASS: ${#reports[@]} reports valid"
