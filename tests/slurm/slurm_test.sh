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
#   6. (given the workbench) reopening the workbench does the same for another such run;
#   and, beside them all on a node of its own, a run that reaches its time limit (1 minute)
#   ends failed, the limit named.
# Usage: slurm_test.sh RANKLAB_CLI SOURCE_DIR [RANKLAB_WORKBENCH]
set -euo pipefail
cli=$1 src=$2 workbench=${3:-} name=slurm
source "$src/tests/slurm/lib.sh"
cluster_up up "$work/cluster" 2 2
# n1 (2 CPUs) runs the checks below; n2 (1 CPU) is a partition of its own with a 1-minute
# limit, for a run that reaches it while they go (Slurm's limits are whole minutes).
scontrol update PartitionName=debug Nodes=n1
scontrol create PartitionName=short Nodes=n2 MaxTime=1

echo "== 0. a run that will reach its time limit, started first (checked at the end)"
# A straggler's sleep keeps it from taking a core from the checks beside it.
"$cli" run "$job" --ranks 1 --slurm --db "$db" --quiet --set train.epochs=100 \
  --set 'launch.partition="short"' --set 'launch.time_limit="1"' \
  --set fault.straggler_rank=0 --set fault.straggler_delay_ms=100 >"$work/limit.log" 2>&1 &
limited=$!
wait_for 20 "the time-limited run stored" field 1 'j["id"]'

echo "== 1. queued behind another job, then run"
# The node's 2 CPUs are held for a few seconds: the run must wait for Resources.
sbatch --parsable --ntasks=2 --output=/dev/null --wrap "sleep 6" >"$work/blocker"
wait_for 20 "the blocking job running" bash -c "[[ \$(squeue -h -j $(cat "$work/blocker") -o %T) == RUNNING ]]"
"$cli" run "$job" --ranks 2 --slurm --db "$db" --quiet >"$work/queued.log" 2>&1 &
launcher=$!
# Slurm gives its reason at its first scheduling pass after the submission.
pending_for() { [[ $(field "$1" 'j["status"], (j["scheduler"] or {}).get("reason")') == "pending $2" ]]; }
wait_for 20 "run 2 pending for Slurm's reason Resources" pending_for 2 Resources
echo "run 2 pending: $(field 2 'j["scheduler"]')"
wait $launcher || fail "ranklab run --slurm failed: $(cat "$work/queued.log")"
cat "$work/queued.log"
[[ $(field 2 'j["status"]') == done ]] || fail "run 2 did not end done"
[[ $(field 2 'j["scheduler"]["state"]') == COMPLETED ]] || fail "Slurm's state is not COMPLETED"
[[ $(field 2 'j["scheduler"]["nodes"]') == n1 ]] || fail "the run's node is not named n1"
grep -q "\[queue\] slurm: job [0-9]* PENDING (Resources)" "$work/queued.log" || fail "no pending event"
grep -q "\[queue\] slurm: job [0-9]* RUNNING on n1" "$work/queued.log" || fail "no running event"
steps=$(field 2 '" ".join(str(r["steps"]) for r in j["ranks"])')
[[ $steps == "936 936" ]] || fail "ranks stored steps '$steps', expected 936 each"
"$cli" run "$job" --ranks 2 --db "$db" --quiet >/dev/null 2>&1
slurm_accuracy=$(field 2 'j["test_accuracy"]') local_accuracy=$(field 3 'j["test_accuracy"]')
echo "test accuracy: under Slurm $slurm_accuracy, local $local_accuracy"
[[ $slurm_accuracy == "$local_accuracy" ]] || fail "Slurm's run reached $slurm_accuracy, the local one $local_accuracy"

echo "== 2. more nodes than the cluster has"
before=$(squeue -h -t all | wc -l)
if "$cli" run "$job" --ranks 2 --slurm --set launch.nodes=2 --db "$db" --quiet >"$work/refused.log" 2>&1; then
  fail "a job asking for 2 nodes of a 1-node cluster was not refused"
fi
cat "$work/refused.log"
grep -q "sbatch refused the job" "$work/refused.log" || fail "the refusal does not quote sbatch"
grep -q "Node count specification invalid" "$work/refused.log" || fail "Slurm's own words are missing"
[[ $(field 4 'j["status"]') == failed ]] || fail "the refused run is not stored failed"
[[ $(squeue -h -t all | wc -l) == "$before" ]] || fail "the refused job left something in the queue"

# Runs 5 and 6 must outlast the cancel on any CPU: throttled (50 ms a step, 2,340 steps), not
# only long (a fast CPU finished 50 unthrottled epochs before scancel reached the job).
slowed=(--set train.epochs=5 --set fault.straggler_rank=0 --set fault.straggler_delay_ms=50)
echo "== 3. cancelled with scancel by hand"
"$cli" run "$job" --ranks 2 --slurm "${slowed[@]}" --db "$db" --quiet >"$work/scancel.log" 2>&1 &
launcher=$!
wait_for 30 "run 5 training" has_steps 5 0
scancel "$(field 5 'j["scheduler"]["job_id"]')"
wait $launcher || true
cat "$work/scancel.log"
[[ $(field 5 'j["status"]') == stopped ]] || fail "run 5 cancelled by hand is not stopped"
[[ $(field 5 'j["scheduler"]["state"]') == CANCELLED ]] || fail "Slurm's state is not CANCELLED"
grep -q "cancelled in Slurm (scancel), not by ranklab" "$work/scancel.log" || fail "the cause is not named"

echo "== 3b. ranklab's own stop (Ctrl-C, the workbench's Stop) is scancel"
"$cli" run "$job" --ranks 2 --slurm "${slowed[@]}" --db "$db" --quiet >"$work/stop.log" 2>&1 &
launcher=$!
wait_for 30 "run 6 training" has_steps 6 0
kill -INT $launcher
wait $launcher || true
cat "$work/stop.log"
[[ $(field 6 'j["status"]') == stopped ]] || fail "run 6 stopped by ranklab is not stopped"
[[ $(field 6 'j["scheduler"]["state"]') == CANCELLED ]] || fail "ranklab's stop did not scancel the job"

echo "== 4. the node taken away, and the run resubmitted"
ckpt=$work/ckpt.bin
"$cli" run "$job" --ranks 2 --slurm --max-restarts 1 --set train.epochs=6 \
  --set train.checkpoint_every=100 --set "train.checkpoint_path=\"$ckpt\"" \
  --db "$db" --quiet >"$work/node-down.log" 2>&1 &
launcher=$!
wait_for 30 "run 7 past a checkpoint" bash -c "[[ -f '$ckpt' ]]"
scontrol update nodename=n1 state=down reason=ranklab-test
wait_for 30 "the failure named" grep -q "node n1 failed" "$work/node-down.log"
scontrol update nodename=n1 state=resume
wait $launcher || fail "the resubmitted run did not finish: $(cat "$work/node-down.log")"
cat "$work/node-down.log"
[[ $(field 7 'j["status"]') == done ]] || fail "run 7 did not end done after its restart"
[[ $(field 7 'j["restarts"]') == 1 ]] || fail "run 7 was not restarted once"
echo "== 5. the launcher killed: the job goes on, and runs attach takes it over"
run_then_kill 8 killed.log --ranks 2 --slurm --set train.epochs=8
[[ $(field 8 'j["status"]') == lost ]] || fail "run 8 whose launcher was killed is not lost"
job8=$(field 8 'j["scheduler"]["job_id"]')
[[ $(squeue -h -j "$job8" -o %T) == RUNNING ]] || fail "Slurm job $job8 did not go on without its launcher"
"$cli" runs attach 8 --db "$db" --quiet >"$work/attach.log" 2>&1 || fail "runs attach did not follow run 8 to done: $(cat "$work/attach.log")"
cat "$work/attach.log"
[[ $(field 8 'j["status"]') == done ]] || fail "run 8 taken over did not end done"
steps=$(field 8 '" ".join(str(r["steps"]) for r in j["ranks"])')
echo "run 8: steps stored per rank $steps (of 3744 each), messages lost while no launcher listened $(field 8 '[r["lost_messages"] for r in j["ranks"]]')"
# What was in flight to the killed launcher, or sent while none listened, is lost and
# counted (how much depends on how long the takeover took: no bound on the count); every
# step is stored or counted lost, and the steps after the takeover, the last one too, are
# stored.
[[ $(field 8 'all(r["steps"] + r["lost_messages"] >= 3744 for r in j["ranks"])') == True ]] ||
  fail "run 8 is missing steps it did not count as lost"
last=$("$cli" runs export 8 --csv - --db "$db" 2>/dev/null | python3 -c '
import csv, sys
last = {}
for row in csv.DictReader(sys.stdin):
    last[row["rank"]] = max(last.get(row["rank"], 0), int(row["step"]))
print(sorted(set(last.values())))')
[[ $last == "[3744]" ]] || fail "run 8's ranks did not store their last step after the takeover: $last"
[[ $(field 8 'j["test_accuracy"] is not None') == True ]] || fail "run 8's last evaluation did not arrive"
if [[ -n $workbench ]]; then
  echo "== 6. the launcher killed, the workbench reopened: it takes the run over"
  # Throttled to outlast the kill and the workbench's start on any CPU (562 steps of 50 ms at
  # least), short enough to end well inside the wait beside other tests.
  run_then_kill 9 killed-again.log --ranks 2 --slurm --set train.epochs=6 \
    --set data.train_limit=12000 --set fault.straggler_rank=0 --set fault.straggler_delay_ms=50
  # The workbench starts `ranklab runs attach 9` detached, follows it, and quits after its
  # screenshot; the launcher it started goes on to the run's end.
  QT_QPA_PLATFORM=offscreen "$workbench" --db "$db" --page live --screenshot-after-ms 3000 \
    --screenshot "$work/takeover.png" >"$work/workbench.log" 2>&1 || fail "the workbench failed: $(cat "$work/workbench.log")"
  wait_for 240 "run 9 done after the workbench took it over" status_is 9 done
  [[ $(field 9 'j["scheduler"]["state"]') == COMPLETED ]] || fail "run 9's job is not COMPLETED"
  echo "run 9: taken over by the workbench and done"
fi
echo "== 0, its end: the run at its 1-minute limit (Slurm checks about every 30 s)"
wait $limited || true  # failed: its launcher's status is not 0
cat "$work/limit.log"
[[ $(field 1 'j["status"]') == failed ]] || fail "run 1 at its time limit is not failed"
[[ $(field 1 'j["scheduler"]["state"]') == TIMEOUT ]] || fail "run 1's job is not TIMEOUT"
grep -q "time limit (launch.time_limit)" "$work/limit.log" || fail "run 1's failure does not name the time limit"
echo "slurm: PASSED"
