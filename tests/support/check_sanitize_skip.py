#!/usr/bin/env python3
"""Checks the list of tests `make sanitize` leaves out (tests/sanitize_skip.txt) against the
suite ctest knows: every pattern still names a test, and no test kept in needs a fixture whose
every setup test is left out (ctest -E drops a setup test even when a kept test requires it,
so the kept test fails for want of its input). Prints PASS or a FAIL: line per problem.

usage: check_sanitize_skip.py CTEST BUILD_DIR SKIP_FILE
"""
import json
import re
import subprocess
import sys


def read_patterns(path):
    patterns = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if line and not line.startswith("#"):
                patterns.append((number, line))
    return patterns


def properties_of(test):
    return {p["name"]: p["value"] for p in test.get("properties", [])}


def as_list(value):
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def main():
    ctest, build_dir, skip_file = sys.argv[1:4]
    listing = subprocess.run([ctest, "--show-only=json-v1"], cwd=build_dir, check=True,
                             capture_output=True, text=True).stdout
    tests = json.loads(listing)["tests"]
    names = [t["name"] for t in tests]
    patterns = read_patterns(skip_file)
    if not patterns:
        print(f"FAIL: {skip_file}: no pattern")
        return 1
    problems = []
    for number, pattern in patterns:
        try:
            compiled = re.compile(pattern)
        except re.error as e:
            problems.append(f"{skip_file}:{number}: pattern {pattern!r} is not a regex: {e}")
            continue
        if not any(compiled.search(n) for n in names):
            problems.append(f"{skip_file}:{number}: pattern {pattern!r} names no test")
    joined = re.compile("|".join(p for _, p in patterns))
    left_out = {n for n in names if joined.search(n)}
    setups = {}
    for t in tests:
        for fixture in as_list(properties_of(t).get("FIXTURES_SETUP")):
            setups.setdefault(fixture, []).append(t["name"])
    for t in tests:
        if t["name"] in left_out:
            continue
        for fixture in as_list(properties_of(t).get("FIXTURES_REQUIRED")):
            made_by = setups.get(fixture, [])
            if made_by and all(s in left_out for s in made_by):
                problems.append(
                    f"{skip_file}: test {t['name']} is kept but needs fixture {fixture}, "
                    f"made only by {', '.join(made_by)}, which is left out")
    for p in problems:
        print("FAIL: " + p)
    if problems:
        return 1
    print(f"PASS: {len(patterns)} patterns leave out {len(left_out)} of {len(names)} tests; "
          "every kept test has its fixtures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
