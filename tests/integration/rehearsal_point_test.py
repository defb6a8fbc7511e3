#!/usr/bin/env python3
"""A shipped scenario's rehearsal (`kvsweep run SCENARIO --target sim`) shows its point.

Runs the rehearsal into a fresh store, then checks, on the requests it stored, what the
scenario's header says its rehearsal demonstrates (issue 39 item 5):

  prefix  ARMS... -- OTHERS...  at every concurrency level, each prefix-aware arm's KV hit (the
                               servers' cached prompt tokens over prompt tokens, measured
                               requests) is above every other arm's by at least 10 points
  earlier ARMS... -- OTHERS... the same over the requests of 2nd and later turns only (there
                               must be some): the routing finds a conversation's earlier turns
  capacity                     the search found a capacity for every arm

Usage: rehearsal_point_test.py KVSWEEP SCENARIO DB REPORTS_DIR CHECK [ARMS... [-- OTHERS...]]
Prints the figures checked, then PASS, or FAIL: and why.
"""
import os
import re
import sqlite3
import subprocess
import sys
import time

MARGIN_POINTS = 10.0  # a prefix arm's hit must clear the others' by this much (percent points)


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def run_rehearsal(kvsweep, scenario, db, reports_dir):
    for path in (db, db + "-wal", db + "-shm"):
        if os.path.exists(path):
            os.remove(path)
    start = time.monotonic()
    argv = [kvsweep, "--db", db, "run", scenario, "--target", "sim", "--no-print",
            "--reports-dir", reports_dir]
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          check=False)
    print(done.stdout, end="")
    print("rehearsal wall time: %.1f s" % (time.monotonic() - start))
    if done.returncode != 0:
        fail("the rehearsal exited %d" % done.returncode)
    if not re.search(r"experiment [0-9]+ done: [0-9]+ cells done, 0 failed", done.stdout):
        fail("not every cell of the rehearsal was done")


def hits(con, later_turns_only):
    """{(arm, concurrency): (hit %, requests)} over the measured requests that succeeded."""
    turn = "AND r.turn > 0" if later_turns_only else ""
    rows = con.execute(
        "SELECT c.arm, c.concurrency, SUM(r.cached_tokens), SUM(r.prompt_tokens), COUNT(*) "
        "FROM requests r JOIN cells c ON c.id = r.cell_id "
        "WHERE r.warmup = 0 AND r.ok = 1 AND r.cached_tokens >= 0 " + turn + " "
        "GROUP BY c.arm, c.concurrency").fetchall()
    return {(arm, conc): (100.0 * cached / prompt if prompt else 0.0, n)
            for arm, conc, cached, prompt, n in rows}


def check_prefix(con, arms, others, later_turns_only):
    later = con.execute("SELECT COUNT(*) FROM requests WHERE warmup = 0 AND turn > 0").fetchone()[0]
    total = con.execute("SELECT COUNT(*) FROM requests WHERE warmup = 0").fetchone()[0]
    print("measured requests: %d, of later turns: %d" % (total, later))
    if later_turns_only and later == 0:
        fail("every measured request is a first turn: nothing earlier to find")
    figures = hits(con, later_turns_only)
    levels = sorted({conc for _, conc in figures})
    what = "KV hit over 2nd+ turns" if later_turns_only else "KV hit"
    for conc in levels:
        line = ", ".join("%s %.1f%% (%d)" % (arm, figures[(arm, conc)][0], figures[(arm, conc)][1])
                         for arm in arms + others if (arm, conc) in figures)
        print("c=%d %s: %s" % (conc, what, line))
        for arm in arms + others:
            if (arm, conc) not in figures:
                fail("no measured request of %s at c=%d" % (arm, conc))
        lowest = min(figures[(arm, conc)][0] for arm in arms)
        highest = max(figures[(arm, conc)][0] for arm in others)
        if lowest < highest + MARGIN_POINTS:
            fail("c=%d: the prefix-aware arms' %s (lowest %.1f%%) is not %g points above the "
                 "others' (highest %.1f%%)" % (conc, what, lowest, MARGIN_POINTS, highest))


def check_capacity(con):
    rows = con.execute("SELECT arm, capacity, why FROM arm_searches ORDER BY position").fetchall()
    if not rows:
        fail("no arm was searched")
    for arm, capacity, why in rows:
        print("%s: capacity %s (%s)" % (arm, "none" if capacity is None else "%g" % capacity, why))
    missing = [arm for arm, capacity, _ in rows if capacity is None]
    if missing:
        fail("no capacity found for " + ", ".join(missing))


def main():
    if len(sys.argv) < 6:
        fail(__doc__)
    kvsweep, scenario, db, reports_dir, check = sys.argv[1:6]
    rest = sys.argv[6:]
    arms, others = (rest[:rest.index("--")], rest[rest.index("--") + 1:]) if "--" in rest else (
        rest, [])
    run_rehearsal(kvsweep, scenario, db, reports_dir)
    con = sqlite3.connect(db)
    if check in ("prefix", "earlier"):
        if not arms or not others:
            fail("name the prefix-aware arms, then -- and the others")
        check_prefix(con, arms, others, check == "earlier")
    elif check == "capacity":
        check_capacity(con)
    else:
        fail("unknown check " + check)
    print("PASS: " + os.path.basename(scenario) + ": " + check)


if __name__ == "__main__":
    main()
