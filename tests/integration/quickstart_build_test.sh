#!/usr/bin/env bash
# `make quickstart` on a fresh checkout installs only the build's packages and builds only the
# kvsweep binary: no GoogleTest, Chromium or kubectl, no test or benchmark target.
# Usage: quickstart_build_test.sh SOURCE_DIR WORK_DIR
set -u
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work" || exit 2
fail() { echo "FAIL: $*"; exit 1; }

# The package sets.
build_set=$("$src/scripts/install-deps.sh" build --list) || fail "install-deps.sh build --list"
test_set=$("$src/scripts/install-deps.sh" test --list) || fail "install-deps.sh test --list"
# cpp-httplib is kvsweep serve's web server, so it belongs to the build set.
for p in cmake libcurl4-openssl-dev libsqlite3-dev libspdlog-dev libcli11-dev libcpp-httplib-dev; do
  grep -qx "$p" <<<"$build_set" || fail "the build set lacks $p"
done
for p in chromium libgtest-dev googletest sqlite3 kubectl; do
  grep -qx "$p" <<<"$build_set" && fail "the build set installs the test-only $p"
  grep -qx "$p" <<<"$test_set" || fail "the test set lacks $p"
done

# What `make quickstart` runs on a checkout with no build directory yet.
plan=$(make -n -C "$src" quickstart BUILD_DIR="$work/never-built") || fail "make -n quickstart"
echo "$plan"
grep -q "install-deps.sh build$" <<<"$plan" || fail "quickstart does not install the build set only"
grep -q "KVSWEEP_BUILD_TESTS=OFF" <<<"$plan" || fail "quickstart configures the tests"
builds=$(grep "cmake --build" <<<"$plan")
[ -n "$builds" ] || fail "quickstart builds nothing"
grep -v -- "--target kvsweep$" <<<"$builds" && fail "quickstart builds more than kvsweep"

# Configured that way, the build holds no test or benchmark target and needs no GoogleTest.
cmake -S "$src" -B "$work/build" -G Ninja -DKVSWEEP_BUILD_TESTS=OFF >"$work/configure.log" 2>&1 ||
  fail "configuring without tests: $(cat "$work/configure.log")"
targets=$(ninja -C "$work/build" -t targets all) || fail "ninja -t targets"
grep -q "^orchestrator/kvsweep:" <<<"$targets" || fail "no kvsweep target"
grep -E "_test:|_bench:|gtest" <<<"$targets" && fail "test or benchmark targets configured"
grep -qi "gtest" "$work/build/CMakeCache.txt" && fail "GoogleTest was looked for"
echo PASS
