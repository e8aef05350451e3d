#!/bin/bash
# Two hosts on one machine (network namespaces joined by a bridge, tests/multihost/
# netns_hosts), 2 ranks each, placed by mpirun through an rsh agent (netns_rsh):
#   1. the quickstart on 2 x 2 ranks reaches the accuracy of the same job on one host, and
#      each rank's reported host is the namespace Open MPI put it in;
#   2. the hierarchical all-reduce finds the hosts: only their leaders send across;
#   3. over links slowed to 50 Mbit/s, `ranklab analyze` puts the time in the all-reduce's
#      transfer (over 4x the unlimited run's, over 3x the waiting) at the link's bandwidth;
#   4. a host's link taken down mid-run is found and the run stored as failed, naming a
#      rank of that host, within the hang limit (no hang, no lost rows).
# Skipped (exit 77) with a message where namespaces cannot be made (not root, no iproute2).
# Usage: multihost_test.sh RANKLAB_CLI SOURCE_DIR
set -euo pipefail
cli=$1 src=$2
here=$src/tests/multihost
skip() { echo "multihost: SKIPPED: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root to make network namespaces"
command -v ip >/dev/null || skip "needs iproute2 (ip)"

export RANKLAB_NETNS_TAG=rlmh$$
# A /24 of its own per run, so a second run beside this one (CI beside a session) differs.
export RANKLAB_NETNS_SUBNET=10.199.$(($$ % 200 + 20))
work=$(mktemp -d /tmp/ranklab-multihost.XXXXXX)
cleanup() {
  for ns in "$RANKLAB_NETNS_TAG-h1" "$RANKLAB_NETNS_TAG-h2"; do  # ranks a dead link left
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [[ -z $pids ]] || kill -9 $pids 2>/dev/null || true
  done
  "$here/netns_hosts" down "$RANKLAB_NETNS_TAG" 2 || true
  rm -rf "$work"
}
trap cleanup EXIT
"$here/netns_hosts" up "$RANKLAB_NETNS_TAG" 2 2>"$work/up.err" ||
  skip "cannot make network namespaces here: $(tr '\n' ' ' <"$work/up.err")"

h1=$RANKLAB_NETNS_SUBNET.11 h2=$RANKLAB_NETNS_SUBNET.12
net=$RANKLAB_NETNS_SUBNET.0/24
mca="launch.mca=[\"plm_rsh_agent=$here/netns_rsh\", \"btl_tcp_if_include=$net\", \"oob_tcp_if_include=$net\"]"
db=$work/runs.db
job=$src/resources/jobs/quickstart.toml
field() {  # field RUN_ID PYTHON_EXPRESSION over the run's summary j
  "$cli" runs show "$1" --db "$db" --json | python3 -c "import json,sys; j=json.load(sys.stdin); print($2)"
}
fail() { echo "multihost: FAILED: $*"; exit 1; }

echo "== one host, 4 ranks"
"$cli" run "$job" --db "$db" --ranks 4 --quiet
echo "== 2 hosts x 2 ranks"
"$cli" run "$job" --db "$db" --ranks 4 --hosts "$h1:2,$h2:2" --set "$mca" --quiet
"$cli" runs show 2 --db "$db"
[[ $(field 2 'j["status"]') == done ]] || fail "the 2 x 2 run did not finish"
one=$(field 1 'j["test_accuracy"]') two=$(field 2 'j["test_accuracy"]')
echo "test accuracy: one host $one, two hosts $two"
python3 -c "import sys; sys.exit(abs($one - $two) > 0.002)" ||
  fail "accuracy on two hosts ($two) is not that on one ($one)"
hosts=$(field 2 '" ".join(r["host"] for r in j["ranks"])')
expected="$RANKLAB_NETNS_TAG-h1 $RANKLAB_NETNS_TAG-h1 $RANKLAB_NETNS_TAG-h2 $RANKLAB_NETNS_TAG-h2"
[[ $hosts == "$expected" ]] || fail "ranks 0-3 reported hosts '$hosts', expected '$expected'"

echo "== hierarchical all-reduce takes its hosts from where Open MPI put the ranks"
"$cli" run "$job" --db "$db" --ranks 4 --hosts "$h1:2,$h2:2" --set "$mca" \
  --set parallel.algorithm=hierarchical --set train.epochs=1 --set train.max_steps=50 --quiet
sent=$(field 3 '" ".join(str(r["bytes_tx"]) for r in j["ranks"])')
echo "bytes sent by ranks 0-3: $sent"
python3 -c "import sys; s=[int(x) for x in sys.argv[1:]]; sys.exit(not min(s[0], s[2]) > max(s[1], s[3]))" $sent ||
  fail "the host leaders (ranks 0 and 2) did not send more than the others: $sent"

echo "== a slow link: the analysis finds the time moving bytes, not waiting for a rank"
slow_run() {  # slow_run RATE: 2 hosts x 1 rank, 30 steps over links limited to RATE
  "$here/netns_hosts" rate "$RANKLAB_NETNS_TAG" 2 "$1"
  "$cli" run "$job" --db "$db" --ranks 2 --hosts "$h1:1,$h2:1" --set "$mca" \
    --set train.epochs=1 --set train.max_steps=30 --set data.test_limit=500 --quiet >/dev/null
}
slow_run off
slow_run 50mbit
"$here/netns_hosts" rate "$RANKLAB_NETNS_TAG" 2 off
analysis() {  # analysis RUN_ID PYTHON_EXPRESSION over `ranklab analyze`'s JSON a
  "$cli" analyze "$1" --db "$db" --json | python3 -c "import json,sys; a=json.load(sys.stdin); print($2)"
}
fast=$(analysis 4 'a["collectives"][0]["transfer_s"]')
slow=$(analysis 5 'a["collectives"][0]["transfer_s"]')
wait=$(analysis 5 'a["collectives"][0]["wait_s"]')
busbw=$(analysis 5 'a["collectives"][0]["busbw_gbps"]')
echo "all-reduce transfer over 30 steps: $fast s unlimited, $slow s at 50 Mbit/s (waiting $wait s, busbw $busbw GB/s)"
python3 -c "import sys; f, s, w = map(float, sys.argv[1:]); sys.exit(not (s > 4 * f and s > 3 * w))" \
  "$fast" "$slow" "$wait" || fail "the slow link's time is not the collectives' transfer: $slow s (unlimited $fast s, waiting $wait s)"
# 50 Mbit/s is 0.00625 GB/s; tbf lets its 256 kB burst through at once.
python3 -c "import sys; b = float(sys.argv[1]); sys.exit(not 0.3 * 0.00625 < b < 1.5 * 0.00625)" "$busbw" ||
  fail "bus bandwidth $busbw GB/s is not the 50 Mbit/s link's 0.00625"

echo "== host 2's link down mid-run"
( sleep 4; "$here/netns_hosts" link "$RANKLAB_NETNS_TAG" 2 down ) &
started=$SECONDS
status=0
timeout 120 "$cli" run "$job" --db "$db" --ranks 4 --hosts "$h1:2,$h2:2" --set "$mca" \
  --set train.epochs=20 --set telemetry.hang_limit_s=3 --quiet \
  --set fault.straggler_rank=0 --set fault.straggler_delay_ms=5 >"$work/down.out" 2>&1 || status=$?
wait
cat "$work/down.out"
echo "ended after $((SECONDS - started)) s with exit status $status"
[[ $status -ne 0 && $status -ne 124 ]] || fail "the run with a dead link did not fail by itself (status $status)"
[[ $(field 6 'j["status"]') == failed ]] || fail "the run with a dead link is not stored as failed"
grep -Eq 'rank [23] hung' "$work/down.out" || fail "the failure does not name a rank of host 2"
steps=$(field 6 'j["steps"]')
[[ $steps -gt 0 ]] || fail "no steps kept from before the link went down"
echo "multihost: PASSED ($steps steps kept from the failed run)"
