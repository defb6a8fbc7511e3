#!/usr/bin/env python3
"""kvsweep's real-engine check: calibrate on one sweep of llama.cpp replicas, predict another.

Starts K llama.cpp replicas (server.mjs, node-llama-cpp) on free loopback ports, runs sweep A
(fit.yaml) on them through kvsweep's `replicas` target, fits a profile to it with `kvsweep
calibrate`, predicts sweep B (check.yaml: other concurrency levels, another dataset shape,
two routers) with that profile, runs sweep B for real, and prints predicted against measured
per cell: total tok/s and mean TTFT, and their errors (issue 31's target: within 10% and 25%).

usage: run.py [--kvsweep PATH] [--replicas 2] [--out DIR] [--threads 1] [--pin]
              [--fix COEFFICIENT ...]

Needs `bench/real_engine/setup.sh` first (node-llama-cpp from npm). Everything it writes goes
under --out (default bench/real_engine/out/<UTC time>): the stores, the scenarios with their
ports, the fitted profile, each server's log and results.md. Python's standard library only.
Every command is run as an argv list, never through a shell.
"""

import argparse
import datetime
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SLOTS = 4       # each replica's slots; profiles/llama-cpu-start.yaml says the same
CONTEXT = 1024  # tokens a slot holds
BATCH = 512     # tokens a step evaluates at most
FIT_PROFILE = "llama-cpu-fitted"


def log(line):
    print(line, flush=True)


def load_average():
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 min; {os.cpu_count()} cores)"


def free_port():
    # Bound then released: another process could take it in between, which the server's own
    # bind error then says.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url, process, deadline_s):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as reply:
                if reply.status == 200:
                    return True
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    return False


# --pin: the core of each replica (a list of sets, one a replica) and the cores kvsweep (driver,
# router) gets; None: any.
ENGINE_CORES = None
CLIENT_CORES = None


def pinned_to(cores):
    """A preexec_fn that keeps the child on `cores` (None: no pinning)."""
    if cores is None:
        return None
    return lambda: os.sched_setaffinity(0, cores)


def run(argv, env, log_path):
    """Runs one kvsweep command, echoing and keeping its output; exits on failure."""
    log("$ " + " ".join(argv))
    with open(log_path, "a", encoding="utf-8") as keep:
        keep.write("$ " + " ".join(argv) + "\n")
        proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, check=False, preexec_fn=pinned_to(CLIENT_CORES))
        keep.write(proc.stdout)
    print(proc.stdout, end="", flush=True)
    if proc.returncode != 0:
        sys.exit(f"run.py: error: {argv[0]} exited {proc.returncode}; its output is above and in "
                 f"{log_path}")
    return proc.stdout


def write_scenario(template, out_dir, upstreams, profile):
    with open(os.path.join(HERE, template), encoding="utf-8") as f:
        text = f.read()
    text = text.replace("@UPSTREAMS@", "[" + ", ".join(upstreams) + "]")
    text = text.replace("@REPLICAS@", str(len(upstreams)))
    text = text.replace("@PROFILE@", profile)
    path = os.path.join(out_dir, template)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def cell_figures(db_path, experiment_name):
    """Each done cell of the latest experiment of that name: (arm, concurrency) -> figures.

    The figures are kvsweep's own, from each cell's stored summary (figures/cell_summary.h),
    so they are defined as in docs/metrics.md.
    """
    con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        exp = con.execute("SELECT id FROM experiments WHERE name = ? ORDER BY id DESC LIMIT 1",
                          (experiment_name,)).fetchone()
        if exp is None:
            sys.exit(f"run.py: error: no experiment {experiment_name} in {db_path}")
        rows = con.execute(
            "SELECT c.arm, c.concurrency, s.figures FROM cells c "
            "JOIN cell_summaries s ON s.cell_id = c.id WHERE c.experiment_id = ? "
            "AND c.status = 'done' ORDER BY c.id", (exp[0],)).fetchall()
    finally:
        con.close()
    cells = {}
    for arm, concurrency, figures in rows:
        doc = json.loads(figures)
        # The cell's metrics object (figures/cell_summary.cc), at the top or under "metrics".
        cells[(arm, concurrency)] = doc.get("metrics", doc) if "ttft_ms" not in doc else doc
    return cells


def figure(summary, *path):
    value = summary
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def error(pred, meas):
    return (pred - meas) / meas if meas else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kvsweep", default=os.path.join(ROOT, "build", "orchestrator", "kvsweep"))
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads per replica")
    parser.add_argument("--out", default=None)
    parser.add_argument("--fix", action="append", default=None, metavar="COEFFICIENT",
                        help="kept at the start profile's value by calibrate (repeatable; "
                        "default: base_us and per_prefill_token_us, the engine's own measured "
                        "values: sweep A barely tells a fixed step cost of 0.1 ms from the "
                        "per-sequence cost, and cannot tell a prompt token's cost from its "
                        "attention's)")
    parser.add_argument("--pin", action="store_true",
                        help="each replica on a core of its own (the last ones), kvsweep on "
                        "the others: the engine's share of the CPU no longer shrinks as the "
                        "client's and router's per-token work grows; needs replicas + 1 cores")
    args = parser.parse_args()
    fixed = args.fix or ["base_us", "per_prefill_token_us"]
    if args.pin:
        global ENGINE_CORES, CLIENT_CORES
        cores = sorted(os.sched_getaffinity(0))
        # A core a replica (the model gives each replica its own hardware) and the rest for
        # kvsweep: replicas sharing a core would be one replica's hardware split in two.
        if len(cores) < args.replicas + 1:
            sys.exit(f"run.py: error: --pin needs a core a replica and one for kvsweep: "
                     f"{args.replicas + 1} cores, this process may use {len(cores)} "
                     f"(use --replicas {len(cores) - 1})")
        ENGINE_CORES = [{core} for core in cores[len(cores) - args.replicas:]]
        CLIENT_CORES = set(cores[:len(cores) - args.replicas])

    if not os.path.isfile(args.kvsweep):
        sys.exit(f"run.py: error: no kvsweep binary at {args.kvsweep} (make build, or --kvsweep)")
    if not os.path.isdir(os.path.join(HERE, "node_modules", "node-llama-cpp")):
        sys.exit("run.py: error: node-llama-cpp is not installed: run bench/real_engine/setup.sh")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = os.path.abspath(args.out or os.path.join(HERE, "out", stamp))
    os.makedirs(os.path.join(out, "profiles"), exist_ok=True)
    model = os.path.join(HERE, "models", "bench.gguf")
    if not os.path.isfile(model):
        os.makedirs(os.path.dirname(model), exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "make_gguf.py"), model], check=True)

    env = dict(os.environ)
    env["KVSWEEP_PROFILE_PATH"] = os.path.join(HERE, "profiles") + ":" + os.path.join(out, "profiles")
    commands_log = os.path.join(out, "commands.log")
    loads = [("start", load_average())]
    with open(os.path.join(HERE, "node_modules", "node-llama-cpp", "package.json"),
              encoding="utf-8") as f:
        engine_version = json.load(f)["version"]
    log(f"real-engine check: {args.replicas} llama.cpp replicas (node-llama-cpp {engine_version}, "
        f"prebuilt CPU binary) x {SLOTS} slots, {args.threads} thread(s) each; output in {out}")
    log(f"load average at start: {loads[0][1]}")
    if ENGINE_CORES is not None:
        log(f"pinned: replicas on core(s) {[min(c) for c in ENGINE_CORES]} (one each), "
            f"kvsweep on {sorted(CLIENT_CORES)}")

    servers = []
    try:
        upstreams = []
        for i in range(args.replicas):
            port = free_port()
            server_log = open(os.path.join(out, f"server-{i}.log"), "w", encoding="utf-8")
            argv = ["node", os.path.join(HERE, "server.mjs"), "--model", model, "--port", str(port),
                    "--slots", str(SLOTS), "--context", str(CONTEXT), "--batch", str(BATCH),
                    "--threads", str(args.threads)]
            servers.append((subprocess.Popen(argv, cwd=HERE, stdout=server_log,
                                             stderr=subprocess.STDOUT,
                                             preexec_fn=pinned_to(
                                                 None if ENGINE_CORES is None
                                                 else ENGINE_CORES[i])), server_log))
            upstreams.append(f"http://127.0.0.1:{port}")
        for (process, _), url in zip(servers, upstreams):
            if not wait_healthy(url, process, 60):
                sys.exit(f"run.py: error: the replica at {url} did not answer /health in 60 s "
                         f"(see {out}/server-*.log)")
        log("replicas up: " + ", ".join(upstreams))

        kvsweep = [args.kvsweep]
        real_db = os.path.join(out, "real.db")
        predicted_db = os.path.join(out, "predicted.db")
        fit = write_scenario("fit.yaml", out, upstreams, "llama-cpu-start")
        check = write_scenario("check.yaml", out, upstreams, FIT_PROFILE)

        started = time.monotonic()
        run(kvsweep + ["--db", real_db, "run", fit, "--no-print", "-o", os.path.join(out, "reports")],
            env, commands_log)
        loads.append(("after sweep A", load_average()))
        fitted = os.path.join(out, "profiles", FIT_PROFILE + ".yaml")
        run(kvsweep + ["--db", real_db, "calibrate", "real-engine-fit", "--profile",
                       os.path.join(HERE, "profiles", "llama-cpu-start.yaml"), "-o", fitted,
                       "--name", FIT_PROFILE]
            + [arg for name in fixed for arg in ("--fix", name)], env, commands_log)
        run(kvsweep + ["--db", predicted_db, "predict", check, "--no-print", "-o",
                       os.path.join(out, "reports")], env, commands_log)
        run(kvsweep + ["--db", real_db, "run", check, "--no-print", "-o",
                       os.path.join(out, "reports")], env, commands_log)
        loads.append(("after sweep B", load_average()))
        elapsed = time.monotonic() - started
    finally:
        for process, server_log in servers:
            process.terminate()
        for process, server_log in servers:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            server_log.close()

    predicted = cell_figures(predicted_db, "real-engine-check")
    measured = cell_figures(real_db, "real-engine-check")
    with open(fitted, encoding="utf-8") as f:
        fitted_text = f.read()
    lines = [
        f"{args.replicas} replicas of node-llama-cpp {engine_version} (prebuilt CPU binary), "
        f"{SLOTS} slots of {CONTEXT} tokens, batch {BATCH}, {args.threads} thread(s) each.", "",
        f"Fitted profile ({fitted}):", "", "```yaml", fitted_text.rstrip(), "```", "",
        "| cell | total tok/s pred / meas (err) | mean TTFT ms pred / meas (err) | KV hit pred / meas |",
        "|---|--:|--:|--:|",
    ]
    worst_tok, worst_ttft = 0.0, 0.0
    for key in sorted(measured, key=lambda k: (k[0], k[1])):
        if key not in predicted:
            lines.append(f"| {key[0]}@{key[1]} | not predicted | | |")
            continue
        p, m = predicted[key], measured[key]
        ptok, mtok = figure(p, "total_token_throughput"), figure(m, "total_token_throughput")
        pttft, mttft = figure(p, "ttft_ms", "mean"), figure(m, "ttft_ms", "mean")
        phit, mhit = figure(p, "kv_hit_rate_server"), figure(m, "kv_hit_rate_server")
        etok, ettft = error(ptok, mtok), error(pttft, mttft)
        worst_tok, worst_ttft = max(worst_tok, abs(etok)), max(worst_ttft, abs(ettft))
        hit = "n/a" if phit is None or mhit is None else f"{100 * phit:.0f}% / {100 * mhit:.0f}%"
        lines.append(f"| {key[0]}@{key[1]} | {ptok:.0f} / {mtok:.0f} ({100 * etok:+.1f}%) | "
                     f"{pttft:.0f} / {mttft:.0f} ({100 * ettft:+.1f}%) | {hit} |")
    lines += ["", f"Largest error on sweep B: total tok/s {100 * worst_tok:.1f}% (target 10%), "
              f"mean TTFT {100 * worst_ttft:.1f}% (target 25%).",
              "Load average: " + "; ".join(f"{when} {value}" for when, value in loads) + ".",
              f"Sweeps, calibration and prediction took {elapsed:.0f} s."]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "results.md"), "w", encoding="utf-8") as f:
        f.write(text)
    log("")
    log(text)


if __name__ == "__main__":
    main()
