#!/usr/bin/env bash
# The command line as a user meets it, on the real kvsweep binary: where --db may go, "did you
# mean", history by file or name, the one output flag, errors and exit codes, --verbose and
# --quiet, and stdout kept in order with stderr. One behaviour per CASE, each its own CTest test.
# Usage: cli_options_test.sh KVSWEEP FIXTURE_DIR STORE WORK_DIR CASE
#   STORE: a store holding the cli-tiny sweep (read only here); WORK_DIR: this case's scratch.
set -u
kvsweep=$1 fixtures=$2 store=$3 work=$4 case=$5
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
fail() { echo "FAIL: $*"; exit 1; }
tiny=$fixtures/tiny_sweep.yaml

# Runs kvsweep with the given arguments; leaves stdout in $out, stderr in $err, status in $status.
k() {
  "$kvsweep" "$@" >"$work/out" 2>"$work/err"
  status=$?
  out=$(cat "$work/out") err=$(cat "$work/err")
}
# The exit status and stderr of the last k call: `expect_error 2 'text'`.
expect_error() {
  [ "$status" -eq "$1" ] || fail "exit status $status, want $1 (stderr: $err)"
  grep -qF -- "$2" <<<"$err" || fail "stderr lacks: $2 (it is: $err)"
  grep -qv '^kvsweep: error: \|^  ' <<<"$err" && fail "a stderr line is not an error line: $err"
  true
}

# A standalone simulated fleet for `load`, stopped when the case ends.
start_sim() {
  "$kvsweep" sim serve --port 0 --replicas 1 --profile demo --model m >"$work/sim.out" 2>&1 &
  sim_pid=$!
  trap 'kill $sim_pid 2>/dev/null; wait $sim_pid 2>/dev/null' EXIT
  for _ in $(seq 1 100); do
    sim_url=$(sed -n 's/^router *\(http[^ ]*\).*/\1/p' "$work/sim.out")
    [ -n "$sim_url" ] && return 0
    sleep 0.1
  done
  fail "sim serve did not start: $(cat "$work/sim.out")"
}
load_args() { echo --url "$sim_url" --model m --num-prompts 3 --max-tokens 2 --conversations 2; }

case $case in
db_before_or_after_subcommand)
  k runs --db "$store"
  [ $status -eq 0 ] || fail "runs --db: exit $status: $err"
  grep -q "cli-tiny" <<<"$out" || fail "runs --db does not list the stored sweep: $out"
  k report cli-tiny --format csv --db "$store"
  [ $status -eq 0 ] && grep -q "prefix-hash" <<<"$out" || fail "report ... --db: $err"
  k run "$tiny" --no-print --db "$work/after.db" --reports-dir "$work/reports"
  [ $status -eq 0 ] || fail "run ... --db: exit $status: $err"
  [ -f "$work/after.db" ] || fail "run ... --db PATH did not write PATH"
  [ -f kvsweep.db ] && fail "run ... --db PATH also wrote ./kvsweep.db"
  k --db "$store" runs cli-tiny -v
  [ $status -eq 0 ] || fail "--db before and -v after: exit $status: $err"
  ;;

did_you_mean)
  k rn "$tiny"
  expect_error 2 "kvsweep: error: unknown command 'rn'; did you mean 'run'?"
  k --db "$store" reprot
  expect_error 2 "did you mean 'report'?"
  k sim serv
  expect_error 2 "kvsweep: error: unknown command 'sim serv'; did you mean 'sim serve'?"
  k --db "$store" report cli-tny
  expect_error 2 "kvsweep: error: no experiment \"cli-tny\" in $store; did you mean 'cli-tiny'?"
  k --db "$store" compare cli-tiny clitiny
  expect_error 2 "did you mean 'cli-tiny'?"
  k --db "$store" history cli-tinny
  expect_error 2 "kvsweep: error: no stored run of scenario \"cli-tinny\" in $store; did you mean 'cli-tiny'?"
  k plan "$fixtures/tiny_swep.yaml"
  expect_error 2 "did you mean '$fixtures/tiny_sweep.yaml'?"
  k --db "$work/never.db" run "$fixtures/tiny-sweep.yaml"
  expect_error 2 "did you mean '$fixtures/tiny_sweep.yaml'?"
  [ -e "$work/never.db" ] && fail "a mistyped scenario created a store"
  true
  ;;

history_by_file_or_name)
  k --db "$store" history cli-tiny
  [ $status -eq 0 ] || fail "history NAME: exit $status: $err"
  by_name=$out
  grep -q "prefix-hash" <<<"$by_name" || fail "history NAME shows no series: $by_name"
  k --db "$store" history "$tiny"
  [ $status -eq 0 ] || fail "history FILE: exit $status: $err"
  [ "$out" = "$by_name" ] || fail "history FILE differs from history NAME: $out"
  k --db "$store" history "$fixtures/bad_scenario.yaml"
  expect_error 2 "bad_scenario.yaml:7:3: factors.concurency: unknown key"
  ;;

output_flag)
  # run: the reports directory (old name --reports-dir)
  k --db "$work/s.db" run "$tiny" --no-print --output "$work/run-out"
  [ $status -eq 0 ] && [ -s "$work/run-out/cli-tiny.md" ] || fail "run --output DIR: $err"
  k --db "$work/s.db" run "$tiny" --no-print -o "$work/run-o"
  [ -s "$work/run-o/cli-tiny.md" ] || fail "run -o DIR: $err"
  # report: the file (old name --out)
  for flag in -o --output --out; do
    k --db "$store" report cli-tiny --format html "$flag" "$work/r$flag.html"
    [ $status -eq 0 ] && grep -q "<svg" "$work/r$flag.html" || fail "report $flag FILE: $err"
  done
  # export: the directory (old names -d, --dir)
  for flag in -o --output -d --dir; do
    k --db "$store" export cli-tiny "$flag" "$work/export$flag"
    ls "$work/export$flag" 2>/dev/null | grep -q "llmd-br-v0.2.1.json" || fail "export $flag DIR: $err"
  done
  # load: the result JSON file (old name --result-file)
  start_sim
  for flag in -o --output --result-file; do
    # shellcheck disable=SC2046
    k --db "$work/load.db" load $(load_args) "$flag" "$work/load$flag.json"
    [ $status -eq 0 ] && grep -q '"completed"' "$work/load$flag.json" || fail "load $flag FILE: $err"
  done
  # every one says so in its help
  for sub in run report export load; do
    k "$sub" --help
    grep -Eq -- "-o,.*--output" <<<"$out" || fail "$sub --help does not list -o, --output: $out"
  done
  ;;

report_out_goes_only_to_the_file)
  k --db "$store" report cli-tiny --out "$work/r.md"
  [ $status -eq 0 ] || fail "report --out: exit $status: $err"
  [ -s "$work/r.md" ] || fail "report --out FILE wrote nothing to FILE"
  [ -z "$out" ] || fail "report --out FILE also printed the report: $(head -3 <<<"$out")"
  k --db "$store" report cli-tiny --out -
  grep -q "cli-tiny" <<<"$out" || fail "report --out - printed nothing"
  ;;

errors_and_exit_codes)
  k --help
  [ $status -eq 0 ] || fail "--help exited $status"
  k --version
  [ $status -eq 0 ] || fail "--version exited $status"
  k
  expect_error 2 "kvsweep: error: "
  k runs --bogus
  expect_error 2 "kvsweep: error: "
  grep -q -- "--bogus" <<<"$err" || fail "the unknown option is not named: $err"
  k --db "$work/s.db" run "$fixtures/bad_scenario.yaml"
  expect_error 2 "kvsweep: error: $fixtures/bad_scenario.yaml:7:3: factors.concurency: unknown key"
  grep -q "^  concurency: \[1\]" <<<"$err" || fail "the source line went missing: $err"
  k --db "$work/none.db" report
  expect_error 2 "kvsweep: error: no store at $work/none.db"
  k --db "$store" runs 999
  expect_error 2 "kvsweep: error: no experiment \"999\""
  k --db "$store" history cli-tiny --metric ttft_meen_ms
  expect_error 2 "kvsweep: error: unknown metric"
  k --db "$store" report cli-tiny --out /proc/cannot-write.md
  expect_error 1 "kvsweep: error: cannot write"
  ;;

verbose_and_quiet)
  k --db "$work/v.db" -v run "$tiny" --no-print --reports-dir "$work/reports"
  [ $status -eq 0 ] || fail "run -v: exit $status: $err"
  grep -Eq '\[debug\] POST http://127\.0\.0\.1:[0-9]+/admin/strategy \{"strategy":"random"\}' <<<"$err" \
    || fail "no debug line for the admin request: $err"
  grep -Eq '\[debug\] readiness gate health: (open|closed)' <<<"$err" || fail "no gate poll: $err"
  grep -Eq '\[debug\] scrape (before|during|after) http://127\.0\.0\.1:[0-9]+/metrics: HTTP 200' <<<"$err" \
    || fail "no /metrics scrape line: $err"
  k --db "$work/n.db" run "$tiny" --no-print --reports-dir "$work/reports"
  grep -q '\[debug\]' <<<"$err" && fail "debug lines without --verbose: $err"
  [ -n "$err" ] || fail "a normal run says nothing on stderr"
  k --db "$work/q.db" --quiet run "$tiny" --reports-dir "$work/reports"
  [ $status -eq 0 ] || fail "run --quiet: exit $status: $err"
  [ -z "$err" ] || fail "run --quiet printed more than results: $err"
  grep -q "| prefix-hash |" <<<"$out" || fail "run --quiet did not print the report: $out"
  start_sim
  # shellcheck disable=SC2046
  k --db "$work/l.db" load $(load_args) --result-file "$work/l.json" -q
  [ $status -eq 0 ] || fail "load -q: exit $status: $err"
  [ -z "$err" ] || fail "load -q printed more than results: $err"
  grep -q "Serving Benchmark Result" <<<"$out" || fail "load -q did not print the result: $out"
  k -q -v runs
  expect_error 2 "kvsweep: error: "
  ;;

load_writes_a_result_only_when_asked)
  # As vLLM's client: no result JSON unless asked (kvsweep wrote one into the current directory
  # on every run); --save-result writes vLLM's file name into --result-dir (here "."),
  # --result-filename a name there, -o FILE that file.
  start_sim
  # shellcheck disable=SC2046
  k --db "$work/l.db" load $(load_args)
  [ $status -eq 0 ] || fail "load: exit $status: $err"
  [ -z "$(ls ./*.json 2>/dev/null)" ] || fail "load wrote a result without being asked: $(ls ./*.json)"
  grep -q "result written" <<<"$err" && fail "load says it wrote a result: $err"
  # shellcheck disable=SC2046
  k --db "$work/l.db" load $(load_args) --save-result --label asked
  [ $status -eq 0 ] || fail "load --save-result: exit $status: $err"
  ls ./asked-*.json >/dev/null 2>&1 || fail "--save-result wrote no vLLM-named file: $(ls)"
  # shellcheck disable=SC2046
  k --db "$work/l.db" load $(load_args) --result-filename named.json
  [ $status -eq 0 ] && [ -s named.json ] || fail "--result-filename wrote nothing: $err"
  # shellcheck disable=SC2046
  k --db "$work/l.db" load $(load_args) --save-result --no-save
  expect_error 2 "--no-save with --save-result"
  ;;

stdout_before_stderr)
  # Both streams to one file: the report (stdout) comes before the closing summary (stderr).
  "$kvsweep" --db "$work/o.db" run "$tiny" --reports-dir "$work/reports" >"$work/log" 2>&1
  status=$?
  [ $status -eq 0 ] || fail "run exited $status: $(cat "$work/log")"
  log=$(cat "$work/log") report=$(cat "$work/reports/cli-tiny.md")
  [[ $log == *"$report"* ]] || fail "the report was cut by stderr lines: $log"
  after=${log#*"$report"}
  grep -q "^experiment [0-9]* done: " <<<"$after" ||
    fail "the closing summary is not after the report: $log"
  ;;

default_output_outside_sources)
  # Without -o, run's report and export's files go to ./kvsweep-reports/, never ./reports/ (the
  # renderer's source folder when kvsweep runs from the repository root).
  k --db "$work/d.db" run "$tiny" --no-print
  [ "$status" -eq 0 ] || fail "run exited $status: $err"
  [ -f "$work/kvsweep-reports/cli-tiny.md" ] || fail "no kvsweep-reports/cli-tiny.md: $(ls -R "$work")"
  k --db "$work/d.db" export
  [ "$status" -eq 0 ] || fail "export exited $status: $err"
  ls "$work"/kvsweep-reports/cli-tiny-export/*.vllm.json >/dev/null 2>&1 ||
    fail "export wrote no kvsweep-reports/cli-tiny-export/*.vllm.json: $(ls -R "$work")"
  [ ! -e "$work/reports" ] || fail "something was written to ./reports: $(ls -R "$work/reports")"
  ;;

*)
  echo "unknown case $case"
  exit 2
  ;;
esac
echo PASS
