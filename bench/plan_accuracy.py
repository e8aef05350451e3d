#!/usr/bin/env python3
"""One row of bench/run-plan-accuracy (a simulated run of one layout and its real runs, read
from the store: measured is the median of the real runs, and `spread` how far apart they
were, (slowest - fastest) / median), or with --summary FILE the median and worst absolute
errors of the rows in FILE."""
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
    spread = [float(r[7].rstrip("%")) for r in rows]
    print(f"{len(rows)} layouts: time per step |error| median {statistics.median(time_err):.1f}%,"
          f" worst {max(time_err):.1f}% ({rows[time_err.index(max(time_err))][0]});"
          f" memory |error| worst {max(mem_err):.1f}%; real runs' spread median"
          f" {statistics.median(spread):.0f}%, widest {max(spread):.0f}%")


def main():
    if sys.argv[1] == "--summary":
        summary(sys.argv[2])
        return
    db = sqlite3.connect(sys.argv[1])
    label, sim, reals = sys.argv[2], int(sys.argv[3]), [int(r) for r in sys.argv[4:]]
    ts, ms = step_period_and_memory(db, sim)
    measured = [step_period_and_memory(db, r) for r in reals]
    periods = [t for t, _ in measured]
    tr, mr = statistics.median(periods), max(m for _, m in measured)
    spread = (max(periods) - min(periods)) / tr * 100 if tr else float("nan")
    terr = (ts - tr) / tr * 100 if tr else float("nan")
    merr = (ms - mr) / mr * 100 if mr else float("nan")
    print(f"{label:34s} {ts * 1e3:9.2f} {tr * 1e3:9.2f} {terr:+6.1f}% {ms / 1e6:9.2f}M"
          f" {mr / 1e6:9.2f}M {merr:+6.1f}% {spread:6.0f}%")


if __name__ == "__main__":
    main()
