#!/usr/bin/env python3
"""Fits the step model's terms to step_time.mjs's measured steps and prints how well each fits.

usage: step_fit.py STEPS.jsonl   (the output of `node step_time.mjs --json`)

Two models, least squares on the steps' microseconds:
  without context: step = base + c_p * P + c_d * D
  with context:    step = base + c_p * P + c_d * D + c_ctx * A
where P is the prompt tokens computed, D the sequences decoding, and A the attention pairs the
step computes, as kvsweep's scheduler counts them (docs/profiles.md): each decoding sequence
holding L tokens adds L + 1, and P prompt tokens after R reused ones attend to the R before them
and to each other (A += P * R + P * (P + 1) / 2). Mixed steps carry both.
Stdlib only (the bench needs no numpy).
"""

import json
import sys


def solve(rows, columns):
    """Least squares of step_us on `columns` (functions of a row); returns the coefficients."""
    n = len(columns)
    ata = [[0.0] * n for _ in range(n)]
    aty = [0.0] * n
    for row in rows:
        x = [f(row) for f in columns]
        for i in range(n):
            aty[i] += x[i] * row["step_us"]
            for j in range(n):
                ata[i][j] += x[i] * x[j]
    # Gaussian elimination with partial pivoting on the normal equations (n <= 4).
    for c in range(n):
        pivot = max(range(c, n), key=lambda r: abs(ata[r][c]))
        ata[c], ata[pivot] = ata[pivot], ata[c]
        aty[c], aty[pivot] = aty[pivot], aty[c]
        if abs(ata[c][c]) < 1e-9:
            sys.exit("step_fit.py: error: the steps cannot separate the terms (a partial run? "
                     "it needs decode, prefill and mixed steps)")
        for r in range(c + 1, n):
            f = ata[r][c] / ata[c][c]
            for k in range(c, n):
                ata[r][k] -= f * ata[c][k]
            aty[r] -= f * aty[c]
    coef = [0.0] * n
    for c in reversed(range(n)):
        coef[c] = (aty[c] - sum(ata[c][k] * coef[k] for k in range(c + 1, n))) / ata[c][c]
    return coef


def attention_pairs(row):
    p, r = row["prefill"], row["reused"]
    return row["decodes"] * (row["context"] + 1) + p * r + p * (p + 1) / 2


COLUMNS = {
    "base_us": lambda row: 1.0,
    "per_prefill_token_us": lambda row: row["prefill"],
    "per_decode_token_us": lambda row: row["decodes"],
    "per_context_token_us": attention_pairs,
}


def report(rows, names):
    coef = solve(rows, [COLUMNS[n] for n in names])
    print("  " + ", ".join(f"{n} {c:.4g}" for n, c in zip(names, coef)))
    errors = []
    for row in rows:
        fit = sum(c * COLUMNS[n](row) for n, c in zip(names, coef))
        errors.append((fit - row["step_us"]) / row["step_us"])
    for kind in ("decode", "generate", "prefill", "mixed"):
        e = [abs(x) for x, row in zip(errors, rows) if row["kind"] == kind]
        if e:
            print(f"  {kind:8} steps: mean |error| {100 * sum(e) / len(e):.1f}%, "
                  f"worst {100 * max(e):.1f}% ({len(e)} steps)")
    return coef


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    print(f"{len(rows)} steps from {sys.argv[1]}")
    print("without context: step = base + c_p P + c_d D")
    report(rows, ["base_us", "per_prefill_token_us", "per_decode_token_us"])
    print("with context:    step = base + c_p P + c_d D + c_ctx A")
    report(rows, ["base_us", "per_prefill_token_us", "per_decode_token_us",
                  "per_context_token_us"])


if __name__ == "__main__":
    main()
