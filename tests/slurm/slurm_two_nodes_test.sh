#!/bin/bash
# Two Slurm nodes on two network-namespace hosts (tests/multihost/netns_hosts: an address
# and a host name of their own each, the controller on this machine at the bridge's
# address): the quickstart on 2 ranks across both nodes (launch.nodes = 2), started by
# mpirun inside the allocation (its daemon on the second node through srun), its telemetry
# back to this machine over the bridge. Checks: the run is done, each rank reports the node
# it ran on (n1, n2), Slurm names both nodes, and the accuracy is that of the same job on
# one machine. Skipped (exit 77) where namespaces cannot be made or Slurm is not installed.
# Usage: slurm_two_nodes_test.sh RANKLAB_CLI SOURCE_DIR
set -euo pipefail
cli=$1 src=$2 name=slurm-two-nodes
command -v ip >/dev/null || { echo "$name: SKIPPED: needs iproute2 (ip)"; exit 77; }
source "$src/tests/slurm/lib.sh"
tag=rlsn$$
# A /24 of its own per run (the multihost test takes 10.199.x), so runs side by side differ.
export RANKLAB_NETNS_SUBNET=10.198.$(($$ % 200 + 20))
after_cluster() {
  for ns in "$tag-h1" "$tag-h2"; do  # anything a failed check left in the hosts
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [[ -z $pids ]] || kill -9 $pids 2>/dev/null || true
  done
  "$src/tests/multihost/netns_hosts" down "$tag" 2 || true
}
"$src/tests/multihost/netns_hosts" up "$tag" 2 2>"$work/up.err" ||
  skip "cannot make network namespaces here: $(tr '\n' ' ' <"$work/up.err")"
cluster_up up-netns "$work/cluster" "$tag" 1

net=$RANKLAB_NETNS_SUBNET.0/24
echo "== 2 ranks on 2 Slurm nodes in namespaces"
# A shorter run than the quickstart's: MPI between the namespaces goes over TCP on veths.
short=(--set data.train_limit=12000 --set train.epochs=1)
"$cli" run "$job" --ranks 2 --slurm --db "$db" --quiet "${short[@]}" --set launch.nodes=2 \
  --set "launch.telemetry_address=\"$RANKLAB_NETNS_SUBNET.1\"" \
  --set "launch.mca=[\"btl_tcp_if_include=$net\", \"oob_tcp_if_include=$net\"]" \
  >"$work/run1.log" 2>&1 || fail "the run across two nodes failed: $(cat "$work/run1.log")"
cat "$work/run1.log"
[[ $(field 1 'j["status"]') == done ]] || fail "the run across two nodes did not end done"
hosts=$(field 1 '" ".join(r["host"] for r in j["ranks"])')
[[ $hosts == "n1 n2" ]] || fail "ranks 0-1 reported hosts '$hosts', expected 'n1 n2'"
nodes=$(field 1 'j["scheduler"]["nodes"]')
[[ $nodes == "n[1-2]" ]] || fail "Slurm's nodes are '$nodes', expected n[1-2]"
"$cli" run "$job" --ranks 2 --db "$db" --quiet "${short[@]}" >/dev/null 2>&1
two=$(field 1 'j["test_accuracy"]') one=$(field 2 'j["test_accuracy"]')
echo "test accuracy: two Slurm nodes $two, one machine $one"
python3 -c "import sys; sys.exit(abs($one - $two) > 0.002)" ||
  fail "accuracy across two nodes ($two) is not that on one machine ($one)"
echo "slurm-two-nodes: PASSED"
