#!/usr/bin/env python3
"""One row of bench/run-plan-accuracy (a simulated and a real run of one layout, read from the
store), or with --summary FILE the median and worst absolute errors of the rows in FILE."""
import sqlite3
import statistics
import sys


def step_period_and_memory(db, run_id, skip=3):
    """The slowest rank's median period between step ends (the first `skip` aside), in s, and
    the largest rank's ledger at its peak, in bytes."""
    ends, memory = {}, {}
    for rank, t, ledger in db.execute(
            "SELECT rank, time_ns, mem_params + mem_grads + mem_optimizer + mem_activations"
            " + mem_buffers FROM steps WHERE run_id = ? ORDER BY rank, step", (run_id,)):
        ends.setdefault(rank, []).append(t)
        memory[rank] = max(memory.get(rank, 0), ledger)
    period = 0.0
    for times in ends.values():
        gaps = [b - a for a, b in zip(times[skip:], times[skip + 1:])]
        if gaps:
            period = max(period, statistics.median(gaps) / 1e9)
    return period, max(memory.values(), default=0)


def summary(path):
    rows = [line.split() for line in open(path) if line.strip()]
    time_err = [abs(float(r[3].rstrip("%"))) for r in rows]
    mem_err = [abs(float(r[6].rstrip("%"))) for r in rows]
    print(f"{len(rows)} layouts: time per step |error| median {statistics.median(time_err):.1f}%,"
          f" worst {max(time_err):.1f}% ({rows[time_err.index(max(time_err))][0]});"
          f" memory |error| worst {max(mem_err):.1f}%")


def main():
    if sys.argv[1] == "--summary":
        summary(sys.argv[2])
        return
    db = sqlite3.connect(sys.argv[1])
    label, sim, real = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    (ts, ms), (tr, mr) = step_period_and_memory(db, sim), step_period_and_memory(db, real)
    terr = (ts - tr) / tr * 100 if tr else float("nan")
    merr = (ms - mr) / mr * 100 if mr else float("nan")
    print(f"{label:34s} {ts * 1e3:9.2f} {tr * 1e3:9.2f} {terr:+6.1f}% {ms / 1e6:9.2f}M"
          f" {mr / 1e6:9.2f}M {merr:+6.1f}%")


main()
