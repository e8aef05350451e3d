#!/bin/bash
# Two hosts on one machine (network namespaces joined by a bridge, tests/multihost/
# netns_hosts), 2 ranks each, placed by mpirun through an rsh agent (netns_rsh):
#   1. the quickstart on 2 x 2 ranks reaches the accuracy of the same job on one host, and
#      each rank's reported host is the namespace Open MPI put it in;
#   2. the hierarchical all-reduce finds the hosts: only their leaders send across;
#   3. a host's link taken down mid-run is found and the run stored as failed, naming a
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

echo "== host 2's link down mid-run"
( sleep 4; "$here/netns_hosts" link "$RANKLAB_NETNS_TAG" 2 down ) &
started=$SECONDS
status=0
timeout 120 "$cli" run "$job" --db "$db" --ranks 4 --hosts "$h1:2,$h2:2" --set "$mca" \
  --set train.epochs=20 --set telemetry.hang_limit_s=3 --quiet >"$work/down.out" 2>&1 || status=$?
wait
cat "$work/down.out"
echo "ended after $((SECONDS - started)) s with exit status $status"
[[ $status -ne 0 && $status -ne 124 ]] || fail "the run with a dead link did not fail by itself (status $status)"
[[ $(field 4 'j["status"]') == failed ]] || fail "the run with a dead link is not stored as failed"
grep -Eq 'rank [23] hung' "$work/down.out" || fail "the failure does not name a rank of host 2"
steps=$(field 4 'j["steps"]')
[[ $steps -gt 0 ]] || fail "no steps kept from before the link went down"
echo "multihost: PASSED ($steps steps kept from the failed run)"
