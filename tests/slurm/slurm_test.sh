#!/bin/bash
# A real Slurm (Debian's slurmctld, slurmd and munge, one node of 2 CPUs on this machine,
# tests/slurm/slurm_cluster) running ranklab's jobs, submitted by `ranklab run --slurm`:
#   1. the quickstart on 2 ranks waits behind another job (pending, Slurm's reason
#      Resources), then runs and ends done, with the node named, every rank's steps stored
#      and the accuracy of the same job run locally;
#   2. a job that asks for more nodes than the cluster has is refused at submission with
#      Slurm's words, and nothing is left in the queue;
#   3. a run cancelled with scancel by hand ends stopped, the cause named; ranklab's own
#      stop (SIGINT to the launcher, as the workbench's Stop sends) is scancel;
#   4. its node taken away (scontrol ... state=down) fails the run naming the node, and
#      train.max_restarts resubmits it from its checkpoint once the node is back;
#   5. its launcher killed (kill -9), the job runs on; `runs attach` takes it over and
#      follows it to its end, every step from then on stored.
# Skipped (exit 77) where Slurm's daemons are not installed or this is not root.
#   6. (given the workbench) reopening the workbench does the same for another such run.
# Usage: slurm_test.sh RANKLAB_CLI SOURCE_DIR [RANKLAB_WORKBENCH]
set -euo pipefail
cli=$1 src=$2 workbench=${3:-}
skip() { echo "slurm: SKIPPED: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root to run slurmctld and slurmd as a cluster of its own"
for tool in slurmctld slurmd sbatch squeue scontrol scancel munged mungekey; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (slurmctld slurmd slurm-client munge)"
done

work=$(mktemp -d /tmp/ranklab-slurm.XXXXXX)
chmod 755 "$work"  # munged's socket folder, inside, must be reachable by every account
cleanup() {
  local launchers
  launchers=$(jobs -p)  # a launcher a failed check left following its job
  [[ -z $launchers ]] || kill $launchers 2>/dev/null || true
  "$src/tests/slurm/slurm_cluster" down "$work/cluster" || true
  rm -rf "$work"
}
trap cleanup EXIT
up=$("$src/tests/slurm/slurm_cluster" up "$work/cluster" 1 2) || {
  echo "slurm: FAILED: the test cluster did not start"
  exit 1
}
eval "$up"
export SLURM_CONF

db=$work/runs.db
job=$src/resources/jobs/quickstart.toml
fail() {
  echo "slurm: FAILED: $*"
  tail -n 20 "$work/cluster/log/slurmctld.log" || true
  exit 1
}
field() {  # field RUN_ID PYTHON_EXPRESSION over the run's summary j
  "$cli" runs show "$1" --db "$db" --json | python3 -c "import json,sys; j=json.load(sys.stdin); print($2)"
}
wait_for() {  # wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds
  local limit=$1 what=$2
  shift 2
  for _ in $(seq $((limit * 5))); do "$@" 2>/dev/null && return 0; sleep 0.2; done
  fail "not $what within $limit s"
}

echo "== 1. queued behind another job, then run"
# The node's 2 CPUs are held for a few seconds: the run must wait for Resources.
sbatch --parsable --ntasks=2 --output=/dev/null --wrap "sleep 6" >"$work/blocker"
wait_for 20 "the blocking job running" bash -c "[[ \$(squeue -h -j $(cat "$work/blocker") -o %T) == RUNNING ]]"
"$cli" run "$job" --ranks 2 --slurm --db "$db" --quiet >"$work/run1.log" 2>&1 &
launcher=$!
# Slurm gives its reason at its first scheduling pass after the submission.
wait_for 20 "run 1 pending for Slurm's reason Resources" \
  bash -c "[[ \$('$cli' runs show 1 --db '$db' --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j[\"status\"], (j[\"scheduler\"] or {}).get(\"reason\"))') == 'pending Resources' ]]"
echo "run 1 pending: $(field 1 'j["scheduler"]')"
wait $launcher || fail "ranklab run --slurm failed: $(cat "$work/run1.log")"
cat "$work/run1.log"
[[ $(field 1 'j["status"]') == done ]] || fail "run 1 did not end done"
[[ $(field 1 'j["scheduler"]["state"]') == COMPLETED ]] || fail "Slurm's state is not COMPLETED"
[[ $(field 1 'j["scheduler"]["nodes"]') == n1 ]] || fail "the run's node is not named n1"
grep -q "\[queue\] slurm: job [0-9]* PENDING (Resources)" "$work/run1.log" || fail "no pending event"
grep -q "\[queue\] slurm: job [0-9]* RUNNING on n1" "$work/run1.log" || fail "no running event"
steps=$(field 1 '" ".join(str(r["steps"]) for r in j["ranks"])')
[[ $steps == "936 936" ]] || fail "ranks stored steps '$steps', expected 936 each"
"$cli" run "$job" --ranks 2 --db "$db" --quiet >/dev/null 2>&1
slurm_accuracy=$(field 1 'j["test_accuracy"]') local_accuracy=$(field 2 'j["test_accuracy"]')
echo "test accuracy: under Slurm $slurm_accuracy, local $local_accuracy"
[[ $slurm_accuracy == "$local_accuracy" ]] || fail "Slurm's run reached $slurm_accuracy, the local one $local_accuracy"

echo "== 2. more nodes than the cluster has"
before=$(squeue -h -t all | wc -l)
if "$cli" run "$job" --ranks 2 --slurm --set launch.nodes=2 --db "$db" --quiet >"$work/run3.log" 2>&1; then
  fail "a job asking for 2 nodes of a 1-node cluster was not refused"
fi
cat "$work/run3.log"
grep -q "sbatch refused the job" "$work/run3.log" || fail "the refusal does not quote sbatch"
grep -q "Node count specification invalid" "$work/run3.log" || fail "Slurm's own words are missing"
[[ $(field 3 'j["status"]') == failed ]] || fail "the refused run is not stored failed"
[[ $(squeue -h -t all | wc -l) == "$before" ]] || fail "the refused job left something in the queue"

echo "== 3. cancelled with scancel by hand"
"$cli" run "$job" --ranks 2 --slurm --set train.epochs=50 --db "$db" --quiet >"$work/run4.log" 2>&1 &
launcher=$!
wait_for 30 "run 4 training" bash -c "[[ \$('$cli' runs show 4 --db '$db' --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"steps\"] > 0)') == True ]]"
scancel "$(field 4 'j["scheduler"]["job_id"]')"
wait $launcher || true
cat "$work/run4.log"
[[ $(field 4 'j["status"]') == stopped ]] || fail "run 4 cancelled by hand is not stopped"
[[ $(field 4 'j["scheduler"]["state"]') == CANCELLED ]] || fail "Slurm's state is not CANCELLED"
grep -q "cancelled in Slurm (scancel), not by ranklab" "$work/run4.log" || fail "the cause is not named"

echo "== 3b. ranklab's own stop (Ctrl-C, the workbench's Stop) is scancel"
"$cli" run "$job" --ranks 2 --slurm --set train.epochs=50 --db "$db" --quiet >"$work/run5.log" 2>&1 &
launcher=$!
wait_for 30 "run 5 training" bash -c "[[ \$('$cli' runs show 5 --db '$db' --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"steps\"] > 0)') == True ]]"
kill -INT $launcher
wait $launcher || true
cat "$work/run5.log"
[[ $(field 5 'j["status"]') == stopped ]] || fail "run 5 stopped by ranklab is not stopped"
[[ $(field 5 'j["scheduler"]["state"]') == CANCELLED ]] || fail "ranklab's stop did not scancel the job"

echo "== 4. the node taken away, and the run resubmitted"
ckpt=$work/ckpt.bin
"$cli" run "$job" --ranks 2 --slurm --max-restarts 1 --set train.epochs=6 \
  --set train.checkpoint_every=100 --set "train.checkpoint_path=\"$ckpt\"" \
  --db "$db" --quiet >"$work/run6.log" 2>&1 &
launcher=$!
wait_for 30 "run 6 past a checkpoint" bash -c "[[ -f '$ckpt' ]]"
scontrol update nodename=n1 state=down reason=ranklab-test
wait_for 30 "the failure named" grep -q "node n1 failed" "$work/run6.log"
scontrol update nodename=n1 state=resume
wait $launcher || fail "the resubmitted run did not finish: $(cat "$work/run6.log")"
cat "$work/run6.log"
[[ $(field 6 'j["status"]') == done ]] || fail "run 6 did not end done after its restart"
[[ $(field 6 'j["restarts"]') == 1 ]] || fail "run 6 was not restarted once"
echo "== 5. the launcher killed: the job goes on, and runs attach takes it over"
"$cli" run "$job" --ranks 2 --slurm --set train.epochs=8 --db "$db" --quiet >"$work/run7.log" 2>&1 &
launcher=$!
wait_for 30 "run 7 training" bash -c "[[ \$('$cli' runs show 7 --db '$db' --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"steps\"] > 100)') == True ]]"
kill -9 $launcher
wait $launcher 2>/dev/null || true
[[ $(field 7 'j["status"]') == lost ]] || fail "run 7 whose launcher was killed is not lost"
job7=$(field 7 'j["scheduler"]["job_id"]')
[[ $(squeue -h -j "$job7" -o %T) == RUNNING ]] || fail "Slurm job $job7 did not go on without its launcher"
"$cli" runs attach 7 --db "$db" --quiet >"$work/attach7.log" 2>&1 || fail "runs attach did not follow run 7 to done: $(cat "$work/attach7.log")"
cat "$work/attach7.log"
[[ $(field 7 'j["status"]') == done ]] || fail "run 7 taken over did not end done"
steps=$(field 7 '" ".join(str(r["steps"]) for r in j["ranks"])')
echo "run 7: steps stored per rank $steps (of 3744 each), messages lost while no launcher listened $(field 7 '[r["lost_messages"] for r in j["ranks"]]')"
# What was in flight to the killed launcher is lost, and counted; all after it is stored.
[[ $(field 7 'all(r["steps"] > 3500 for r in j["ranks"])') == True ]] || fail "run 7 lost more than the steps in flight"
[[ $(field 7 'j["test_accuracy"] is not None') == True ]] || fail "run 7's last evaluation did not arrive"
if [[ -n $workbench ]]; then
  echo "== 6. the launcher killed, the workbench reopened: it takes the run over"
  "$cli" run "$job" --ranks 2 --slurm --set train.epochs=6 --db "$db" --quiet >"$work/run8.log" 2>&1 &
  launcher=$!
  wait_for 30 "run 8 training" bash -c "[[ \$('$cli' runs show 8 --db '$db' --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"steps\"] > 100)') == True ]]"
  kill -9 $launcher
  wait $launcher 2>/dev/null || true
  # The workbench starts `ranklab runs attach 8` detached, follows it, and quits after its
  # screenshot; the launcher it started goes on to the run's end.
  QT_QPA_PLATFORM=offscreen "$workbench" --db "$db" --page live --screenshot-after-ms 3000 \
    --screenshot "$work/takeover.png" >"$work/workbench.log" 2>&1 || fail "the workbench failed: $(cat "$work/workbench.log")"
  wait_for 120 "run 8 done after the workbench took it over" bash -c "[[ \$('$cli' runs show 8 --db '$db' --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"status\"])') == done ]]"
  [[ $(field 8 'j["scheduler"]["state"]') == COMPLETED ]] || fail "run 8's job is not COMPLETED"
  echo "run 8: taken over by the workbench and done"
fi
echo "slurm: PASSED"
