"""The helpers the Python of bench/run-* shares, as lib.sh is for their shell: a run's JSON
out of the CLI's output, the newest stored run. Every script runs from the repository root,
so it imports this with `sys.path.insert(0, "bench"); import lib`. Tested by
tests/integration/bench_lib_test.py (CTest `bench.lib.py`)."""
import json
import subprocess


def run_json(text):
    """The JSON object `ranklab run --json` printed after its other lines, or None."""
    start = text.find("{")
    return json.loads(text[start:]) if start >= 0 else None


def cli_json(cli, *args):
    """The JSON a CLI command printed (it must succeed)."""
    out = subprocess.run([cli, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def newest_run(cli, db):
    """`runs show --json` of the run stored last in db (the highest id)."""
    newest = max(r["id"] for r in cli_json(cli, "runs", "list", "--db", db, "--json"))
    return cli_json(cli, "runs", "show", str(newest), "--db", db, "--json")
