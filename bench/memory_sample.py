#!/usr/bin/env python3
"""What a launched job really holds on this machine, for bench/run-memory-estimate: runs the
command, reads every 0.1 s the smaps_rollup of each of its processes (the launcher, mpirun,
the ranks) and /proc/meminfo's MemAvailable, and prints as JSON, at the sample where the
processes' summed PSS peaked with all `ranks` ranks alive: that sum (each shared page split
among its mappers, so the libraries count once), the ranks' private pages (Anonymous: no
other rank holds them) per rank, their shared pages, and MemAvailable's drop from before
the launch (other tenants' memory moves it too: the PSS sum is the figure to trust).
The command's output goes to OUT.
Usage: bench/memory_sample.py RANKS OUT COMMAND..."""
import json
import os
import subprocess
import sys
import time


def meminfo_available():
    for line in open("/proc/meminfo"):
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


def rollup(pid):
    fields = {}
    try:
        for line in open(f"/proc/{pid}/smaps_rollup"):
            parts = line.split()
            if len(parts) >= 3 and parts[-1] == "kB":
                fields[parts[0].rstrip(":")] = int(parts[1]) * 1024
        fields["comm"] = open(f"/proc/{pid}/comm").read().strip()
    except OSError:
        return None
    return fields


def descendants(root):
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def main():
    ranks, out, command = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    before = sorted(meminfo_available() for _ in range(3) if not time.sleep(0.1))[1]
    job = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=open(out, "w"),
                           stderr=subprocess.DEVNULL)
    peak = None
    while job.poll() is None:
        processes = [r for r in map(rollup, descendants(job.pid)) if r]
        workers = [p for p in processes if p["comm"].startswith("ranklab-worker")]
        pss = sum(p["Pss"] for p in processes)
        if len(workers) == ranks and (peak is None or pss > peak["pss_bytes"]):
            peak = {"pss_bytes": pss,
                    "available_drop_bytes": before - meminfo_available(),
                    "rank_private_bytes": max(w["Anonymous"] for w in workers),
                    "rank_shared_bytes": max(w["Shared_Clean"] + w["Shared_Dirty"]
                                             for w in workers),
                    "rank_rss_bytes": max(w["Rss"] for w in workers)}
        time.sleep(0.1)
    print(json.dumps({"exit": job.returncode, **(peak or {})}))


if __name__ == "__main__":
    main()
