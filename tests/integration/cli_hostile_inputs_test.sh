#!/usr/bin/env bash
# Hostile input files on the real kvsweep binary: a scenario whose aliases expand to a billion
# nodes is refused at once, naming the alias; an `epp:` path naming a private key prints no
# more than a short excerpt of it. One behaviour per CASE, each its own CTest test.
# A stored run whose scenario text became such a bomb is refused as quickly by calibrate and
# replay, which re-read it.
# Usage: cli_hostile_inputs_test.sh KVSWEEP WORK_DIR CASE
set -u
kvsweep=$1 work=$2 case=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
fail() { echo "FAIL: $*"; exit 1; }

# Ten of the line before on each line from the fifth: *h stands for 10^8 scalars, *i for 10^9;
# the aliases past 100,000 nodes are on line 9.
bomb() {
  echo "name: $1"
  echo 'target: {kind: sim, replicas: 1, profile: demo}'
  echo 'factors: {concurrency: [1]}'
  echo 'load: {num_requests: 2}'
  echo 'description: &a [x, x, x, x, x, x, x, x, x, x]'
  prev=a
  for name in b c d e f g h i; do
    p="*$prev"
    echo "$name: &$name [$p, $p, $p, $p, $p, $p, $p, $p, $p, $p]"
    prev=$name
  done
}

# Runs kvsweep, which must stop by itself within 10 s (under ASan too); leaves stderr in $err.
k() {
  timeout 10 "$kvsweep" "$@" >"$work/out" 2>"$work/err"
  status=$?
  err=$(cat "$work/err")
  [ "$status" -ne 124 ] || fail "kvsweep $* did not stop within 10 s"
}
expect_error() {
  [ "$status" -eq "$1" ] || fail "exit status $status, want $1 (stderr: $err)"
  grep -qF -- "$2" <<<"$err" || fail "stderr lacks: $2 (it is: $err)"
}

case $case in
alias_bomb)
  bomb bomb >bomb.yaml
  [ "$(wc -c <bomb.yaml)" -lt 600 ] || fail "the bomb is $(wc -c <bomb.yaml) bytes"
  k plan bomb.yaml
  expect_error 2 "bomb.yaml:9:"
  grep -qF "with its aliases expanded the document passes 100000 nodes here" <<<"$err" ||
    fail "the cap is not named: $err"
  # A cycle (an alias inside the node it names) too.
  printf 'name: loop\nfactors: &f {concurrency: [1], more: *f}\n' >loop.yaml
  k plan loop.yaml
  expect_error 2 "loop.yaml:2:38: invalid YAML: this alias is inside the node its anchor names"
  ;;

stored_bomb)
  # A real run in virtual time, then its stored scenario text replaced by the bomb.
  cat >tiny.yaml <<'YAML'
name: tiny
target: {kind: sim, replicas: 1, profile: demo}
factors: {concurrency: [1]}
load: {num_requests: 2, max_tokens: 2}
YAML
  timeout 60 "$kvsweep" --db s.db run tiny.yaml --target predict --no-print >run.out 2>&1 ||
    fail "the run failed: $(cat run.out)"
  bomb tiny >bomb.yaml
  sqlite3 s.db "UPDATE experiments SET scenario_text = CAST(readfile('bomb.yaml') AS TEXT)" ||
    fail "cannot write the stored scenario"
  for command in calibrate replay; do
    k --db s.db $command
    expect_error 2 "its stored scenario no longer loads"
    grep -qF "tiny.yaml:9:" <<<"$err" || fail "$command: the alias is not located: $err"
    grep -qF "passes 100000 nodes" <<<"$err" || fail "$command: the cap is not named: $err"
  done
  ;;

epp_private_key)
  # Something shaped like a PEM private key (random bytes, base64, 64 per line) named as an
  # EPP configuration: the error names the file and quotes at most a short, escaped excerpt.
  /usr/bin/python3 - <<'PY'
import base64, os
body = base64.b64encode(os.urandom(1190)).decode()
with open("secret.pem", "w") as f:
    f.write("-----BEGIN PRIVATE KEY-----\n")
    for i in range(0, len(body), 64):
        f.write(body[i:i + 64] + "\n")
    f.write("-----END PRIVATE KEY-----\n")
PY
  mkdir -p scenarios
  cat >scenarios/s.yaml <<'YAML'
name: leak
target: {kind: sim, replicas: 1, profile: demo}
epp: {mine: ../secret.pem}
factors: {concurrency: [1], strategy: [mine]}
load: {num_requests: 2}
YAML
  k plan scenarios/s.yaml
  expect_error 2 "scenarios/../secret.pem:1:1: expected an EndpointPickerConfig mapping, got \"-----BEGIN PRIVATE KEY-----"
  grep -qF "bytes)" <<<"$err" || fail "the value's size is not said: $err"
  # No 24 bytes in a row of the key's body reach the terminal.
  /usr/bin/python3 - "$work/err" <<'PY' || fail "the key was printed: $err"
import sys
err = open(sys.argv[1]).read()
body = "".join(open("secret.pem").read().splitlines()[1:-1])
leaks = [body[i:i + 24] for i in range(len(body) - 24) if body[i:i + 24] in err]
sys.exit(1 if leaks else 0)
PY
  # The path must be a regular file, resolved from the scenario's folder.
  sed -i 's#../secret.pem#/dev/zero#' scenarios/s.yaml
  k plan scenarios/s.yaml
  expect_error 2 "epp.mine: /dev/zero: not a regular file (a character device)"
  ;;
cli_bounds)
  # Every numeric option has an upper bound, refused before anything runs (exit 2).
  k load --url http://127.0.0.1:9 --model m --request-rate 1e-310
  expect_error 2 "--request-rate: expected a rate in requests/s from 0.001 to 1000000, or inf, got 1e-310"
  k load --url http://127.0.0.1:9 --model m --threads 100000
  expect_error 2 "not in range 0 to 1024"
  k load --url http://127.0.0.1:9 --model m --burstiness 1e308
  expect_error 2 "not in range 0.000000 to 100.000000"
  k --db none.db compare 1 2 --resamples 2147483647
  expect_error 2 "not in range 100 to 100000"
  k --db none.db history x --window 2147483647
  expect_error 2 "not in range 1 to 10000"
  [ -e none.db ] && fail "a refused command created the store"
  true
  ;;
*) fail "unknown case $case" ;;
esac
echo PASS
