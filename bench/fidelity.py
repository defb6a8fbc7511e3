#!/usr/bin/python3
"""Writes docs/fidelity.md: kvsweep's prediction next to what the seeds published, cell by cell.

    bench/fidelity.py BUILD_DIR > docs/fidelity.md

Runs `kvsweep predict` on the seed scenarios as they are shipped, scenarios/seed-000-*.yaml,
seed-002-*.yaml, seed-003-*.yaml and seed-004-*.yaml, seed 000 once more with unique
prompts in place of its stand-in, and seed 002's arms once more each at the operating points
its published cells reached (`kvsweep audit` of the seed's own figures) (each into a fresh store in a temporary directory; seeds 000's
and 002's ShareGPT files are absent, so their generated stand-ins are sent,
docs/datasets.md#stand-ins),
reads every cell's figures from `kvsweep export` (the vLLM result JSON, as the reports compute
them) and the request rows, and prints the markdown. The published figures and expectations
below are copied from the seed write-ups (/work/shared/seeds/002, 003 and 004; seed 000's are
read from its copy in tests/fixtures/seeds/); nothing here,
and no profile constant, is fitted to them (docs/profiles.md). Standard library only; every
command is an argv, no shell.
"""
import json
import re
import pathlib
import sqlite3
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent

# Seed 002 (KubeAI, 8x L4, Llama 3.1 8B FP8, ShareGPT 16+ messages, 8000 prompts):
# arm -> level -> (mean TTFT ms, median TTFT ms, total token throughput tok/s).
# The 1600 and 3200 levels were sent at 200 req/s in the write-up, 800 and 8000 at 800 req/s;
# the seed scenario sends each level at its published rate.
SEED_002 = {
    "k8s-service": {  # "K8s Service - Round Robin": kube-proxy spreads connections at random
        800: (1319.77, 601.29, 45409.81),
        1600: (10365.29, 10068.73, 46250.51),
        3200: (27183.41, 31260.66, 46460.74),
        8000: (48587.55, 48682.53, 46510.40),
    },
    "LeastLoad": {
        800: (817.18, 494.28, 45866.16),
        1600: (10579.01, 11501.96, 47476.29),
        3200: (24147.86, 25580.61, 47658.74),
        8000: (39163.80, 40140.70, 47609.83),
    },
    "PrefixHash": {
        800: (280.20, 239.80, 69407.79),
        1600: (196.13, 184.29, 66043.15),
        3200: (213.92, 188.53, 65233.60),
        8000: (237.06, 219.27, 67333.71),
    },
}
SCENARIOS = HERE.parent / "scenarios"
SEED_000_SCENARIO = SCENARIOS / "seed-000-kubeai-l4-prefixhash.yaml"
SEED_000_PUBLISHED = HERE.parent / "tests" / "fixtures" / "seeds" / "000_6c6301bcc3e48923.txt"
SEED_002_SCENARIO = SCENARIOS / "seed-002-kubeai-l4-three-arms.yaml"
SEED_003_SCENARIO = SCENARIOS / "seed-003-dynamo-kv-routing.yaml"
SEED_004_SCENARIO = SCENARIOS / "seed-004-vllm-prefix-probe.yaml"

# Seed 004 published no measurements, only what to expect: prefix hits cut TTFT "often 30-60%
# when P dominates", so the cache / no-cache mean TTFT ratio falls in 0.4-0.7.
SEED_004_RATIO = (0.4, 0.7)


def predict(kvsweep, scenario, work):
    """Predicts `scenario` into work/<name>.db; returns (db path, {(strategy, conc): export})."""
    db = work / (scenario.stem + ".db")
    export = work / (scenario.stem + "-export")
    for argv in (
        [kvsweep, "--db", str(db), "predict", str(scenario), "--no-print", "-o", str(work)],
        [kvsweep, "--db", str(db), "export", "-o", str(export)],
    ):
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"fidelity: {' '.join(argv)} exited {done.returncode}: {done.stderr[-500:]}")
    cells = {}
    for path in sorted(export.glob("*.vllm.json")):
        result = json.loads(path.read_text())
        cells[(result["label"], result["max_concurrency"])] = result
    return db, cells


def p95(samples):
    """The 95th percentile, interpolated between closest ranks as common/stats.cc does."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    rank = 0.95 * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def error(predicted, published):
    return f"{100 * (predicted - published) / published:+.0f}%"


def seed_002(cells):
    out = [
        "## Seed 002: Kubernetes Service vs KubeAI LeastLoad vs PrefixHash, 8x L4",
        "",
        "Prediction: `scenarios/seed-002-kubeai-l4-three-arms.yaml` as shipped (12 cells of "
        "8000 requests, each level at the seed's own rate: 800, 200, 200 and 800 req/s; 8 "
        "replicas of `l4-llama3.1-8b-fp8`; the `k8s-service` arm on the fleet's random routing; "
        "the generated stand-in for the ShareGPT file at the published token counts). "
        "Published: the seed's `benchmark_serving` results.",
        "",
        "| arm | level | mean TTFT ms pred / pub (err) | median TTFT ms pred / pub (err) "
        "| total tok/s pred / pub (err) | predicted verdict |",
        "|---|--:|--:|--:|--:|---|",
    ]
    for arm, levels in SEED_002.items():
        for level, (mean, median, tok) in levels.items():
            c = cells[(arm, level)]
            out.append(
                f"| {arm} | {level} "
                f"| {c['mean_ttft_ms']:.0f} / {mean:.0f} ({error(c['mean_ttft_ms'], mean)}) "
                f"| {c['median_ttft_ms']:.0f} / {median:.0f} "
                f"({error(c['median_ttft_ms'], median)}) "
                f"| {c['total_token_throughput']:.0f} / {tok:.0f} "
                f"({error(c['total_token_throughput'], tok)}) | {c.get('verdict') or 'n/a'} |"
            )
    out += [
        "",
        "PrefixHash against LeastLoad, per level (mean TTFT ratio: lower is better for "
        "PrefixHash; throughput ratio: higher is better):",
        "",
        "| level | mean TTFT PH/LL pred / pub | total tok/s PH/LL pred / pub |",
        "|--:|--:|--:|",
    ]
    for level in SEED_002["PrefixHash"]:
        ph, ll = cells[("PrefixHash", level)], cells[("LeastLoad", level)]
        pub_ph, pub_ll = SEED_002["PrefixHash"][level], SEED_002["LeastLoad"][level]
        ttft_pred = ph["mean_ttft_ms"] / ll["mean_ttft_ms"]
        ttft_pub = pub_ph[0] / pub_ll[0]
        tok_pred = ph["total_token_throughput"] / ll["total_token_throughput"]
        tok_pub = pub_ph[2] / pub_ll[2]
        out.append(
            f"| {level} | {ttft_pred:.3f} / {ttft_pub:.3f} ({error(ttft_pred, ttft_pub)}) "
            f"| {tok_pred:.2f} / {tok_pub:.2f} ({error(tok_pred, tok_pub)}) |"
        )
    return out


def seed_000_published():
    """{"LeastLoad" | "PrefixHash": {figure: value}} from the seed's two result blocks, in the
    order it published them: without prefix-aware routing (KubeAI's default, LeastLoad), then
    with it (PrefixHash)."""
    text = SEED_000_PUBLISHED.read_text()
    blocks = text.split("============ Serving Benchmark Result ============")[1:]
    names = {
        "Request throughput (req/s):": "req_s",
        "Total Token throughput (tok/s):": "total",
        "Mean TTFT (ms):": "mean_ttft",
        "Median TTFT (ms):": "median_ttft",
    }
    out = {}
    for arm, block in zip(("LeastLoad", "PrefixHash"), blocks):
        figures = {}
        for line in block.splitlines():
            for label, key in names.items():
                if line.startswith(label):
                    figures[key] = float(line[len(label):].split()[0])
        out[arm] = figures
    return out


def seed_000_unique(work):
    """Seed 000's scenario with its stand-in replaced by 2,000 unique prompts of the published
    mean lengths (1,774,781 / 2,000 = 887 prompt and 163,963 / 2,000 = 82 output tokens)."""
    text = SEED_000_SCENARIO.read_text()
    start = text.index("    stand_in:\n")
    end = text.index("  turns: independent")
    unique = (
        "    stand_in:\n"
        "      kind: random\n"
        "      num_prompts: 2000\n"
        "      random_input_len: 887\n"
        "      random_output_len: 82\n"
    )
    text = text[:start] + unique + text[end:]
    text = text.replace("name: seed-000-kubeai-l4-prefixhash", "name: seed-000-unique-prompts")
    path = work / "seed-000-unique-prompts.yaml"
    path.write_text(text)
    return path


def seed_000(kvsweep, work):
    published = seed_000_published()
    _, shipped = predict(kvsweep, SEED_000_SCENARIO, work)
    _, unique = predict(kvsweep, seed_000_unique(work), work)
    out = [
        "## Seed 000: KubeAI LeastLoad vs PrefixHash, 8x L4, 200 req/s, 400 in flight",
        "",
        "Prediction: `scenarios/seed-000-kubeai-l4-prefixhash.yaml` (2 cells of 2,000 "
        "requests) twice: as shipped, whose generated stand-in shares turns of 200 "
        "conversations (the ShareGPT file cannot be shipped), and with 2,000 unique prompts of "
        "the published mean lengths (887 prompt and 82 output tokens) in its place. Published: "
        "the seed's two `benchmark_serving` results.",
        "",
        "| prompts | arm | total tok/s pred / pub (err) | mean TTFT ms pred / pub (err) "
        "| req/s pred / pub |",
        "|---|---|--:|--:|--:|",
    ]
    for name, cells in (("conversations (shipped)", shipped), ("2,000 unique", unique)):
        for arm in ("LeastLoad", "PrefixHash"):
            c, p = cells[(arm, 400)], published[arm]
            out.append(
                f"| {name} | {arm} "
                f"| {c['total_token_throughput']:.0f} / {p['total']:.0f} "
                f"({error(c['total_token_throughput'], p['total'])}) "
                f"| {c['mean_ttft_ms']:.0f} / {p['mean_ttft']:.0f} "
                f"({error(c['mean_ttft_ms'], p['mean_ttft'])}) "
                f"| {c['request_throughput']:.1f} / {p['req_s']:.1f} |"
            )
    done = subprocess.run([kvsweep, "audit", str(SEED_000_PUBLISHED), "--json"],
                          capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        sys.exit(f"fidelity: kvsweep audit exited {done.returncode}: {done.stderr[-500:]}")
    audit = json.loads(done.stdout)
    filled = " and ".join(
        f"{run['little_in_flight']:.0f} in flight of {run['max_concurrency']} at "
        f"{run['request_throughput']:.1f} req/s ({run['verdict']})"
        for run in audit
    )
    pub_ratio = published["PrefixHash"]["total"] / published["LeastLoad"]["total"]
    ratios = {
        name: cells[("PrefixHash", 400)]["total_token_throughput"]
        / cells[("LeastLoad", 400)]["total_token_throughput"]
        for name, cells in (("shipped", shipped), ("unique", unique))
    }
    out += [
        "",
        f"PrefixHash's total tok/s over LeastLoad's: published {pub_ratio:.2f}, predicted "
        f"{ratios['shipped']:.2f} with the shipped stand-in and {ratios['unique']:.2f} with "
        "unique prompts. Both published arms filled their cap (`kvsweep audit "
        f"tests/fixtures/seeds/000_6c6301bcc3e48923.txt`, Little's law: {filled}), so neither "
        "was client-bound, and PrefixHash gained nothing: the seed's requests shared little "
        "prefix. The stand-in's shared conversation turns overstate that sharing; unique "
        "prompts of the published lengths predict the tie. Their absolute throughput is "
        "the L4 profile's own error (the model runs fast, as in seed 002's LeastLoad and "
        "Service arms).",
    ]
    return out


def seed_002_audit(runs):
    """`kvsweep audit` on the seed's own published blocks: which arm reached its load."""
    out = [
        "### What seed 002's own figures say of the load each cell reached",
        "",
        "`kvsweep audit tests/fixtures/seeds/002_d7a4aa4a246033b9.txt` (docs/metrics.md, "
        "\"Audit of an outside result\"): Little's law from each published block (req/s x "
        "(mean TTFT + mean TPOT x (mean output - 1))), against the cap, and against what the "
        "schedule and the cap would have kept in flight at the measured req/s.",
        "",
        "| level (cap, rate) | arm | req/s | in flight (Little) | of cap | expected | verdict |",
        "|---|---|--:|--:|--:|--:|---|",
    ]
    for run in runs:
        arm = run["label"].split(" / ")[-1]
        level = f"{run['max_concurrency']}, {run['request_rate']:.0f}/s"
        out.append(
            f"| {level} | {arm} | {run['request_throughput']:.1f} "
            f"| {run['little_in_flight']:.0f} | {100 * run['cap_fraction']:.0f}% "
            f"| {run['expected_in_flight']:.0f} | {run['verdict']} |"
        )
    out += [
        "",
        "The PrefixHash arm never had more than about 520 requests in flight and sent 72-76 "
        "requests a second where 200-800 were scheduled, while its TTFT stayed near 0.2 s: "
        "nothing queued at the servers, so the client itself did not send faster. The seed's "
        "headline (\"41% more throughput, 164x lower TTFT at 8000 concurrent\") compares this "
        "client-bound arm with two server-bound ones: its TTFT is that of a lightly loaded "
        "fleet, theirs that of a fleet with thousands queued, and its throughput is the "
        "client's ceiling, not the fleet's. The fair comparison is at the load each arm really "
        "carried; the prediction above keeps every scheduled request in flight, which is why "
        "its PrefixHash TTFT grows with the level and its every cell at 8000 in flight is "
        "over capacity.",
    ]
    return out


def seed_002_audit_runs(kvsweep):
    """The seed's published blocks as `kvsweep audit --json` reads them, each with its arm."""
    seed = HERE.parent / "tests" / "fixtures" / "seeds" / "002_d7a4aa4a246033b9.txt"
    done = subprocess.run([kvsweep, "audit", str(seed), "--json"], capture_output=True,
                          text=True, check=False)
    if done.returncode not in (0, 1):
        sys.exit(f"fidelity: kvsweep audit exited {done.returncode}: {done.stderr[-500:]}")
    runs = json.loads(done.stdout)
    for run in runs:
        name = run["label"].split(" / ")[-1]
        run["arm"] = ("PrefixHash" if "Prefix" in name
                      else "LeastLoad" if "Least" in name else "k8s-service")
    return runs


def operating_point(run):
    """(cap, req/s) a published cell ran at: as scheduled when the audit found it reached its
    load (`valid`), else the req/s it measured under a cap of what Little's law puts in
    flight in it."""
    if run["verdict"] == "valid":
        return run["max_concurrency"], run["request_rate"]
    return round(run["little_in_flight"]), round(run["request_throughput"], 1)


def seed_002_at(arm, runs, work):
    """Seed 002's scenario cut to one arm whose levels are the operating points its published
    cells ran at (operating_point)."""
    text = SEED_002_SCENARIO.read_text()
    start, arms, end = (text.index("  concurrency:"), text.index("  arm:\n"),
                        text.index("\nload:\n"))
    levels = ["  concurrency:"]
    for run in runs:
        if run["arm"] == arm:
            cap, rate = operating_point(run)
            levels.append(f"    {cap}: {{load.request_rate: {rate:g}}}")
    # Keep the arm's own entry of the arm factor (a line at four spaces and what it holds).
    kept, keep = ["  arm:"], False
    for line in text[arms:end].splitlines()[1:]:
        if line.startswith("    ") and not line.startswith("     "):
            keep = line.strip().startswith(arm + ":")
        if keep:
            kept.append(line)
    text = text[:start] + "\n".join(levels + kept) + text[end:]
    name = f"seed-002-{arm.lower()}-as-reached"
    text = text.replace("name: seed-002-kubeai-l4-three-arms", f"name: {name}")
    text = text.replace("  baseline: k8s-service", f"  baseline: {arm}")  # the only arm left
    path = work / f"{name}.yaml"
    path.write_text(text)
    return path


def seed_002_operating_points(kvsweep, work, runs):
    out = [
        "### Seed 002 predicted at the load each cell reached",
        "",
        "The same scenario, each cell predicted at the operating point the audit above found: "
        "a cell that reached its load (`valid`) as it was scheduled, the first table's load "
        "(its figures differ a little from there: with the seed's `cache: as-is` a cell starts "
        "from the caches the cell before it left, and here only its own arm ran before it); "
        "a cell short of it at the req/s it measured, under a cap of the requests "
        "Little's law puts in flight in it, so the client-bound PrefixHash cells send what "
        "their client managed to send.",
        "",
        "| arm | level | at (cap, req/s) | mean TTFT ms pred / pub (err) "
        "| total tok/s pred / pub (err) | predicted verdict |",
        "|---|--:|--:|--:|--:|---|",
    ]
    levels = [800, 1600, 3200, 8000]
    spans = {}  # arm -> ([tok/s errors], [mean TTFT errors]) in %
    for arm in SEED_002:
        _, cells = predict(kvsweep, seed_002_at(arm, runs, work), work)
        reached = [run for run in runs if run["arm"] == arm]
        for level, run in zip(levels, reached):
            cap, rate = operating_point(run)
            c = cells[(arm, cap)]
            mean, _, tok = SEED_002[arm][level]
            toks, ttfts = spans.setdefault(arm, ([], []))
            toks.append(100 * (c["total_token_throughput"] - tok) / tok)
            ttfts.append(100 * (c["mean_ttft_ms"] - mean) / mean)
            out.append(
                f"| {arm} | {level} | {cap}, {rate:g} "
                f"| {c['mean_ttft_ms']:.0f} / {mean:.0f} ({error(c['mean_ttft_ms'], mean)}) "
                f"| {c['total_token_throughput']:.0f} / {tok:.0f} "
                f"({error(c['total_token_throughput'], tok)}) | {c.get('verdict') or 'n/a'} |"
            )

    def span(values):
        return f"{min(values):+.0f}% to {max(values):+.0f}%"

    out += [
        "",
        f"At the load it carried, the PrefixHash arm is predicted {span(spans['PrefixHash'][0])} "
        f"in total tok/s and {span(spans['PrefixHash'][1])} in mean TTFT; LeastLoad "
        f"{span(spans['LeastLoad'][0])} and the Service {span(spans['k8s-service'][0])} in "
        "throughput at the load they were given: the L4 profile's capacity error, now that no "
        "arm is held to a load it did not carry. The server-bound arms' mean TTFT is that of "
        "a queue, which grows with how long the cell ran over capacity.",
    ]
    return out


def seed_003(db, cells):
    # A later turn "finds its earlier turns" when it is served by the replica that served the
    # conversation's previous turn: only there are those turns' KV blocks.
    found = {}
    with sqlite3.connect(db) as store:
        rows = store.execute(
            "SELECT c.arm, c.concurrency, r.conversation, r.turn, r.replica, r.warmup"
            " FROM requests_full r JOIN cells c ON c.id = r.cell_id WHERE r.ok = 1"
            " ORDER BY c.id, r.conversation, r.turn"
        ).fetchall()
        ttfts = {}
        for strategy, conc, ttft in store.execute(
            "SELECT c.arm, c.concurrency, r.ttft_ms FROM requests_full r"
            " JOIN cells c ON c.id = r.cell_id WHERE r.ok = 1 AND r.warmup = 0"
        ):
            ttfts.setdefault((strategy, conc), []).append(ttft)
    previous = {}
    for strategy, conc, conversation, turn, replica, warmup in rows:
        key = (strategy, conc, conversation)
        if turn > 0 and key in previous and not warmup:
            hit = found.setdefault((strategy, conc), [0, 0])
            hit[0] += previous[key] == replica
            hit[1] += 1
        previous[key] = replica
    out = [
        "## Seed 003: Dynamo round-robin vs KV-aware routing, 4 replicas",
        "",
        "Prediction: `scenarios/seed-003-dynamo-kv-routing.yaml` as shipped (10 cells of 5 "
        "minutes, 4 replicas of "
        "`h100-llama3.3-70b-fp8-tp2`, prompts of about 3,100 tokens over three turns). The seed "
        "published no figures, only its expectation: round robin over 4 replicas finds a "
        "conversation's earlier turns about 1 time in 4, KV routing nearly always. "
        "\"Earlier turns found\" is the share of measured later turns served by the replica that "
        "served the same conversation's previous turn.",
        "",
        "| arm | concurrency | earlier turns found (expected) | KV hit (server) "
        "| TTFT p50 ms | TTFT p95 ms |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for (strategy, conc), c in sorted(cells.items()):
        hits, turns = found.get((strategy, conc), (0, 0))
        expected = "about 25%" if strategy == "round-robin" else "nearly 100%"
        share = f"{100 * hits / turns:.0f}%" if turns else "n/a"
        kv = c.get("kv_cache_hit_rate")
        out.append(
            f"| {strategy} | {conc} | {share} of {turns} ({expected}) "
            f"| {'n/a' if kv is None else f'{100 * kv:.0f}%'} "
            f"| {c['median_ttft_ms']:.0f} | {p95(ttfts.get((strategy, conc), [])):.0f} |"
        )
    return out


def range_error(value, low, high):
    """'within', or how far outside [low, high] value lies, relative to the nearer bound."""
    if value < low:
        return f"{error(value, low)} below"
    if value > high:
        return f"{error(value, high)} above"
    return "within"


def measured_ttfts(db):
    """{(arm, concurrency): [TTFT ms of every measured request]} from the store."""
    ttfts = {}
    with sqlite3.connect(db) as store:
        for arm, conc, ttft in store.execute(
            "SELECT c.arm, c.concurrency, r.ttft_ms FROM requests_full r"
            " JOIN cells c ON c.id = r.cell_id WHERE r.ok = 1 AND r.warmup = 0"
        ):
            ttfts.setdefault((arm, conc), []).append(ttft)
    return ttfts


def seed_004(db, cells):
    # Arms are "<mode>, prefix_tokens=<n>" (scenarios/seed-004-vllm-prefix-probe.yaml).
    ttfts = measured_ttfts(db)
    by_regime = {}
    for (label, conc), c in cells.items():
        mode = label.split(",")[0].strip()
        prefix = int(re.search(r"prefix_tokens=(\d+)", label).group(1))
        by_regime.setdefault((prefix, conc), {})[mode] = (c, p95(ttfts.get((label, conc), [])))
    low, high = SEED_004_RATIO
    out = [
        "## Seed 004: vLLM prefix caching off vs on, per prefix regime",
        "",
        "Prediction: `scenarios/seed-004-vllm-prefix-probe.yaml` as shipped: one replica of its "
        "rehearsal profile `h100-llama3.1-8b` standing in for the seed's Phi-3 mini server (no "
        "published profile of that model), prefix caching off (`no_cache`) and on (`cache`), 200 "
        "requests a cell sharing one 512- or 1,024-token prefix with 32-token suffixes and 64 "
        "output tokens. The seed published no measurements, only expectations: on prefix hits "
        f"TTFT drops \"often 30-60% when P dominates\" (a cache / no-cache ratio of {low}-{high}), "
        "more with a longer prefix, and more at concurrency 8-16 than at 1.",
        "",
        "| prefix tokens | concurrency | mean TTFT ms no cache / cache | ratio (error against "
        f"{low}-{high}) | p95 TTFT ms no cache / cache | KV hit (cache) |",
        "|--:|--:|--:|--:|--:|--:|",
    ]
    ratios = {}
    for (prefix, conc), modes in sorted(by_regime.items()):
        (off, off_p95), (on, on_p95) = modes["no_cache"], modes["cache"]
        ratio = on["mean_ttft_ms"] / off["mean_ttft_ms"]
        ratios[(prefix, conc)] = ratio
        kv = on.get("kv_cache_hit_rate")
        out.append(
            f"| {prefix} | {conc} | {off['mean_ttft_ms']:.1f} / {on['mean_ttft_ms']:.1f} "
            f"| {ratio:.2f} ({range_error(ratio, low, high)}) "
            f"| {off_p95:.1f} / {on_p95:.1f} "
            f"| {'n/a' if kv is None else f'{100 * kv:.0f}%'} |"
        )
    prefixes = sorted({p for p, _ in ratios})
    levels = sorted({c for _, c in ratios})
    longer = [c for c in levels if ratios[(prefixes[-1], c)] < ratios[(prefixes[0], c)]]
    busier = [
        p for p in prefixes if all(ratios[(p, c)] < ratios[(p, levels[0])] for c in levels[1:])
    ]
    out += [
        "",
        f"- A longer prefix, a bigger drop (ratio at {prefixes[-1]} below the ratio at "
        f"{prefixes[0]}): predicted at concurrency {', '.join(map(str, longer)) or 'none'} of "
        f"{', '.join(map(str, levels))}.",
        f"- More concurrency, a bigger drop (ratio at {', '.join(map(str, levels[1:]))} below "
        f"the ratio at {levels[0]}): predicted for {', '.join(map(str, busier)) or 'no'} of the "
        f"{', '.join(map(str, prefixes))}-token prefixes.",
    ]
    return out


def real_engine():
    """The real-engine check's section: the record of its last run, kept with the bench.

    bench/real_engine/run.py needs llama.cpp replicas and minutes of CPU, so this script does
    not re-run it; bench/real_engine/measured.md holds what it printed, with its commands."""
    record = HERE.parent / "bench" / "real_engine" / "measured.md"
    return ["## Real engine (llama.cpp)", ""] + record.read_text().rstrip("\n").splitlines()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench/fidelity.py BUILD_DIR > docs/fidelity.md")
    kvsweep = str(pathlib.Path(sys.argv[1]).resolve() / "orchestrator" / "kvsweep")
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        lines_000 = seed_000(kvsweep, work)
        _, cells_002 = predict(kvsweep, SEED_002_SCENARIO, work)
        db_003, cells_003 = predict(kvsweep, SEED_003_SCENARIO, work)
        db_004, cells_004 = predict(kvsweep, SEED_004_SCENARIO, work)
        lines = [
            "# Fidelity: the prediction against what the seeds published",
            "",
            "Generated by `bench/fidelity.py build > docs/fidelity.md` (a minute or two; it runs "
            "`kvsweep predict` on the seed scenarios 000, 002, 003 and 004 as shipped, seed "
            "000 once more with unique prompts, and seed 002 at the load each of its cells "
            "reached). Do not edit "
            "by hand: re-run it. Each error is (predicted - published) / published. The profiles' "
            "constants and where they come from: [profiles.md](profiles.md); how a prediction "
            "runs: [predict.md](predict.md).",
            "",
        ]
        lines += lines_000 + [""]
        runs_002 = seed_002_audit_runs(kvsweep)
        lines += seed_002(cells_002) + [""] + seed_002_audit(runs_002) + [""]
        lines += seed_002_operating_points(kvsweep, work, runs_002) + [""]
        lines += seed_003(db_003, cells_003)
        lines += [""] + seed_004(db_004, cells_004)
    lines += [""] + real_engine()
    lines += [
        "",
        "## What the model leaves out",
        "",
        "- **The engine beyond its step model.** A step costs `base + c_p * prefill tokens + "
        "c_d * decode sequences`, plus `c_ctx * attention pairs` where a profile has the context "
        "term (the real-engine check's does; no shipped profile does, so above attention's "
        "growth with context is folded into the constants): CUDA graph padding, sampling "
        "and detokenisation costs, and the real scheduler's details (vLLM V1's exact admission "
        "and preemption order) are folded into the constants or left out.",
        "- **The data.** Seed 002 ran ShareGPT conversations whose lengths vary widely; the "
        "stand-in has the same totals but narrow length distributions, so tails (p99, the "
        "longest prompts' prefill) are thinner than the real ones.",
        "- **The network and the client.** Clients are ideal apart from a 20 us send cost and an "
        "optional fixed latency; seed 002's single Python client at 8000 in flight was itself a "
        "bottleneck the prediction does not have. That is the likeliest reason for the largest "
        "errors above: the published PrefixHash TTFT stays near 0.2 s from 800 to 8000 in "
        "flight while its throughput stays flat, which 8 replicas of at most 256 running "
        "sequences each can only do if far fewer than 3200 requests were really in flight; the "
        "predicted client keeps every one in flight, so they queue.",
        "- **What the seed's client sent.** The stand-in gives each of 800 conversations its own "
        "turns; KubeAI's copy of `benchmark_serving.py` applies `--max-conversations` to the "
        "list of prompts, which may have sent fewer distinct prompts more often (more reuse, a "
        "larger PrefixHash gain). The write-up does not say which.",
        "- **Seed 003's speculative decoding and TRT-LLM.** The profile models the target model "
        "alone; a draft model changes decode speed, not which replica holds a prefix.",
        "- **Seed 004's model.** No profile of Phi-3 mini exists; the H100 Llama 3.1 8B fit "
        "stands in, so absolute TTFTs are not the seed's; the ratios depend mostly on how much "
        "of each prompt the cache skips.",
        "- **The profiles' efficiencies.** The L4 profile is a roofline at efficiencies published "
        "for other GPUs (docs/profiles.md); its errors above include theirs.",
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
