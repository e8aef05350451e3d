#!/usr/bin/env python3
"""bench/lib.py, the helpers the bench scripts' Python shares: a run's JSON after other
output, and the newest stored run through a CLI (a stand-in script that answers as
`ranklab runs list/show --json` does, so the helper's own logic is what is checked)."""
import os
import stat
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import lib  # noqa: E402

failures = 0


def expect(what, got, want):
    global failures
    if got != want:
        print(f"FAIL: {what}: got {got!r}, want {want!r}")
        failures += 1


expect("after other lines", lib.run_json('run 3 started\n{\n  "id": 3,\n  "x": [1]\n}\n'),
       {"id": 3, "x": [1]})
expect("nothing printed", lib.run_json("mpirun failed\n"), None)
with tempfile.TemporaryDirectory() as tmp:
    cli = os.path.join(tmp, "ranklab")
    with open(cli, "w") as f:
        f.write('#!/bin/sh\nif [ "$1 $2" = "runs list" ]; then echo \'[{"id": 2}, {"id": 11}, '
                '{"id": 7}]\'; else echo "{\\"shown\\": $3}"; fi\n')
    os.chmod(cli, stat.S_IRWXU)
    expect("the newest by id, not by order", lib.newest_run(cli, "x.db"), {"shown": 11})
if failures == 0:
    print("bench/lib.py: all checks passed")
sys.exit(1 if failures else 0)
