#!/usr/bin/env bash
# `kvsweep sim serve` and `kvsweep proxy` as a user starts them: a host beyond loopback is
# refused without --admin-token-env, the token comes from the environment and guards /admin/*
# (never printed), the listeners are on 127.0.0.1 without --host, and the server limits and
# --io-threads are accepted. One CASE per CTest test.
# Usage: serve_options_test.sh KVSWEEP WORK_DIR CASE
set -u
kvsweep=$1 work=$2 case=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
fail() { echo "FAIL: $*"; exit 1; }

# Runs kvsweep (expected to stop by itself); leaves stderr in $err and the status in $status.
k() {
  timeout 20 "$kvsweep" "$@" >"$work/out" 2>"$work/err"
  status=$?
  err=$(cat "$work/err")
}
expect_error() {
  [ "$status" -eq "$1" ] || fail "exit status $status, want $1 (stderr: $err)"
  grep -qF -- "$2" <<<"$err" || fail "stderr lacks: $2 (it is: $err)"
}

# Starts a server in the background and sets $url from the "router URL" line it prints.
start() {
  "$@" >"$work/serve.log" 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
  for _ in $(seq 1 100); do
    url=$(awk '/^router/ {print $2}' "$work/serve.log")
    [ -n "$url" ] && return 0
    kill -0 $pid 2>/dev/null || fail "it exited: $(cat "$work/serve.log")"
    sleep 0.1
  done
  fail "no router URL: $(cat "$work/serve.log")"
}
# The HTTP status of GET URL [AUTHORIZATION], or "none" (Debian's python, no extra packages).
status_of() {
  /usr/bin/python3 - "$@" <<'PY'
import sys, urllib.request, urllib.error
request = urllib.request.Request(sys.argv[1])
if len(sys.argv) > 2:
    request.add_header("Authorization", sys.argv[2])
try:
    with urllib.request.urlopen(request, timeout=10) as reply:
        print(reply.status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception:
    print("none")
PY
}
body_of() {
  /usr/bin/python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$1"
}

case $case in
beyond_loopback_needs_a_token)
  k sim serve --host 0.0.0.0 --port 0 --replicas 1
  expect_error 2 "kvsweep: error: admin_token: host 0.0.0.0 is reachable beyond this machine"
  grep -qF -- "--admin-token-env" <<<"$err" || fail "the fix is not named: $err"
  k proxy --upstream http://127.0.0.1:9 --host :: --port 0
  expect_error 2 "kvsweep: error: admin_token: host :: is reachable beyond this machine"
  unset KVSWEEP_TEST_NO_SUCH_TOKEN
  k sim serve --port 0 --admin-token-env KVSWEEP_TEST_NO_SUCH_TOKEN
  expect_error 2 "kvsweep: error: --admin-token-env KVSWEEP_TEST_NO_SUCH_TOKEN: the environment variable is not set or empty"
  KVSWEEP_TEST_EMPTY_TOKEN="" k proxy --upstream http://127.0.0.1:9 --admin-token-env KVSWEEP_TEST_EMPTY_TOKEN
  expect_error 2 "KVSWEEP_TEST_EMPTY_TOKEN: the environment variable is not set or empty"
  ;;

token_guards_admin)
  export KVSWEEP_TEST_TOKEN=t0p-s3cret-value
  start "$kvsweep" sim serve --port 0 --replicas 2 --admin-token-env KVSWEEP_TEST_TOKEN \
    --io-threads 2 --header-timeout 2 --body-timeout 5 --idle-timeout 5 --write-timeout 5 \
    --max-connections 100 --send-queue-kib 64
  # No --host: every listener is on loopback.
  [[ $url == http://127.0.0.1:* ]] || fail "the router is not on 127.0.0.1: $url"
  [ "$(grep -c '^replica  http://127\.0\.0\.1:' "$work/serve.log")" = 2 ] ||
    fail "a replica is not on 127.0.0.1: $(cat "$work/serve.log")"
  grep -q "2 io threads, /admin/\* needs the token" "$work/serve.log" ||
    fail "the banner does not say so: $(cat "$work/serve.log")"
  [ "$(status_of "$url/admin/strategy")" = 401 ] || fail "/admin/strategy without the token"
  [ "$(status_of "$url/admin/strategy" 'Bearer wrong')" = 401 ] ||
    fail "/admin/strategy with a wrong token"
  [ "$(status_of "$url/admin/strategy" "Bearer $KVSWEEP_TEST_TOKEN")" = 200 ] ||
    fail "/admin/strategy with the token"
  [ "$(status_of "$url/health")" = 200 ] || fail "/health needs no token"
  body_of "$url/metrics" | grep -q '^kvsweep_http_connections_open ' ||
    fail "/metrics lacks the server's counters"
  kill $pid; wait $pid 2>/dev/null
  grep -qF "$KVSWEEP_TEST_TOKEN" "$work/serve.log" && fail "the token was printed"
  true
  ;;
epp_config)
  # --epp-config FILE: llm-d's EndpointPickerConfig, run by the router as strategy epp.
  k sim serve --port 0 --strategy epp
  expect_error 2 "kvsweep: error: --strategy epp needs --epp-config FILE"
  k proxy --upstream http://127.0.0.1:9 --port 0 --epp-config "$work/missing.yaml"
  expect_error 2 "kvsweep: error: --epp-config $work/missing.yaml: No such file or directory"
  # Only a regular file of bounded size is read, never a device read forever.
  k sim serve --port 0 --epp-config /dev/zero
  expect_error 2 "kvsweep: error: --epp-config /dev/zero: not a regular file"
  cat >bad.yaml <<'YAML'
apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: prefix-cache
YAML
  k sim serve --port 0 --epp-config bad.yaml
  expect_error 2 "kvsweep: error: --epp-config bad.yaml: bad.yaml:4:"
  grep -qF "prefix-cache-scorer" <<<"$err" || fail "the known plugin types are not listed: $err"
  # A plugin the real EPP has and kvsweep's router does not model: only kind llmd runs it.
  cat >precise.yaml <<'YAML'
apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: precise-prefix-cache-scorer
YAML
  k sim serve --port 0 --epp-config precise.yaml
  expect_error 2 "kvsweep: error: --epp-config precise.yaml: not modelled by kvsweep's router: precise.yaml:4:9: plugins[0].type: plugin type 'precise-prefix-cache-scorer'"
  cat >epp.yaml <<'YAML'
apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: prefix-cache-scorer
- type: queue-scorer
YAML
  start "$kvsweep" sim serve --port 0 --replicas 2 --epp-config epp.yaml
  grep -q "strategy epp (epp.yaml)" "$work/serve.log" ||
    fail "the banner does not name the picker: $(cat "$work/serve.log")"
  body_of "$url/admin/strategy" | grep -q '"strategy":"epp"' ||
    fail "the router does not run epp: $(body_of "$url/admin/strategy")"
  body_of "$url/admin/strategy" | grep -qF 'queue-scorer' ||
    fail "the router does not hold the config: $(body_of "$url/admin/strategy")"
  /usr/bin/python3 - "$url" <<'PY' || fail "a completion through the picker failed"
import json, sys, urllib.request
body = json.dumps({"model": "sim-model", "prompt": "x" * 400, "max_tokens": 2}).encode()
request = urllib.request.Request(sys.argv[1] + "/v1/completions", data=body,
                                 headers={"Content-Type": "application/json"})
with urllib.request.urlopen(request, timeout=10) as reply:
    assert reply.status == 200
PY
  # POST /admin/strategy refuses the configuration it cannot run, and keeps the one it runs.
  /usr/bin/python3 - "$url" "$work/precise.yaml" <<'PY' || fail "/admin/strategy took a configuration it does not model"
import json, sys, urllib.error, urllib.request
body = json.dumps({"strategy": "epp", "epp_config": open(sys.argv[2]).read()}).encode()
request = urllib.request.Request(sys.argv[1] + "/admin/strategy", data=body,
                                 headers={"Content-Type": "application/json"})
try:
    urllib.request.urlopen(request, timeout=10)
    sys.exit(1)
except urllib.error.HTTPError as e:
    answer = e.read().decode()
    assert e.code == 400, e.code
    assert "not modelled by kvsweep's router" in answer, answer
PY
  body_of "$url/admin/strategy" | grep -qF 'queue-scorer' ||
    fail "the refused configuration replaced the running one: $(body_of "$url/admin/strategy")"
  # The picker's own series: the prompt's 6 blocks of 64 characters are in its index.
  body_of "$url/metrics" | grep -q '^inference_extension_prefix_indexer_size 6$' ||
    fail "no prefix index in /metrics: $(body_of "$url/metrics" | grep inference_extension)"
  kill $pid; wait $pid 2>/dev/null
  # Another strategy keeps the config for a switch through /admin/strategy.
  start "$kvsweep" proxy --upstream http://127.0.0.1:9 --port 0 --strategy least-load \
    --epp-config epp.yaml --health-interval 0
  grep -q "strategy least-load (epp.yaml)" "$work/serve.log" ||
    fail "the proxy's banner: $(cat "$work/serve.log")"
  body_of "$url/admin/strategy" | grep -qF 'queue-scorer' ||
    fail "the proxy does not hold the config: $(body_of "$url/admin/strategy")"
  ;;
alias_bomb)
  # A few hundred bytes whose aliases expand to a billion nodes, with a key written twice in
  # the aliased mapping (which made the old duplicate-key walk fill memory): --epp-config
  # refuses it at once, naming the alias that passes the cap.
  bomb() {
    echo 'apiVersion: inference.networking.x-k8s.io/v1alpha1'
    echo 'kind: EndpointPickerConfig'
    echo 'plugins:'
    echo '- type: queue-scorer'
    echo 'x0: &x0 {k: [a, a, a, a, a, a, a, a, a, a], k: 1}'
    for i in 1 2 3 4 5 6 7 8; do
      p="*x$((i - 1))"
      echo "x$i: &x$i [$p, $p, $p, $p, $p, $p, $p, $p, $p, $p]"
    done
  }
  bomb >bomb.yaml
  [ "$(wc -c <bomb.yaml)" -lt 700 ] || fail "the bomb is $(wc -c <bomb.yaml) bytes"
  k sim serve --port 0 --epp-config bomb.yaml
  expect_error 2 "kvsweep: error: --epp-config bomb.yaml: bomb.yaml:9:"
  grep -qF "with its aliases expanded the document passes 100000 nodes here" <<<"$err" ||
    fail "the cap is not named: $err"
  # The same bomb POSTed to a running fleet's /admin/strategy, again and again, while /health
  # and a chat completion are asked every 50 ms: each bomb is refused (400, naming the alias)
  # and the fleet keeps answering; a body over 1 MiB is refused (413) unread.
  start "$kvsweep" sim serve --port 0 --replicas 2
  /usr/bin/python3 - "$url" "$work/bomb.yaml" <<'PY' || fail "the fleet stopped answering"
import json, sys, threading, time, urllib.error, urllib.request
url, bomb = sys.argv[1], open(sys.argv[2]).read()

def post(path, body):
    request = urllib.request.Request(url + path, data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()

refusals = []
def bombard():
    body = json.dumps({"strategy": "epp", "epp_config": bomb}).encode()
    for _ in range(20):
        refusals.append(post("/admin/strategy", body))
thread = threading.Thread(target=bombard)
thread.start()
answered = 0
chat = json.dumps({"model": "sim-model", "max_tokens": 2,
                   "messages": [{"role": "user", "content": "hi"}]}).encode()
while thread.is_alive() or answered < 10:
    with urllib.request.urlopen(url + "/health", timeout=5) as reply:
        assert reply.status == 200, reply.status
    status, _ = post("/v1/chat/completions", chat)
    assert status == 200, status
    answered += 1
    time.sleep(0.05)
thread.join()
assert len(refusals) == 20, refusals
for status, answer in refusals:
    assert status == 400, (status, answer)
    assert "epp_config:9:" in answer and "passes 100000 nodes" in answer, answer
status, answer = post("/admin/strategy", b'{"strategy": "' + b"x" * (1 << 20) + b'"}')
assert status == 413 and "an admin body may be" in answer, (status, answer)
status, answer = post("/admin/strategy", b'{"strategy": "round-robin"}')
assert status == 200, (status, answer)
print("answered", answered, "while", len(refusals), "bombs were refused")
PY
  ;;
*) fail "unknown case $case" ;;
esac
echo PASS
