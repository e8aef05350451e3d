# Shared by the Slurm tests (sourced): the temporary folder and its cleanup, a cluster made
# by slurm_cluster, and the checks' helpers. Needs `cli`, `src` and `name` (the test's
# name in its messages) set before it is sourced.

skip() { echo "$name: SKIPPED: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root to run slurmctld and slurmd as a cluster of its own"
for tool in slurmctld slurmd sbatch squeue scontrol scancel munged mungekey; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (slurmctld slurmd slurm-client munge)"
done

work=$(mktemp -d "/tmp/ranklab-$name.XXXXXX")
chmod 755 "$work"  # munged's socket folder, inside, must be reachable by every account
db=$work/runs.db
job=$src/resources/jobs/quickstart.toml
after_cluster() { :; }  # a test's own cleanup after the cluster's, if it defines one
cleanup() {
  local launchers
  launchers=$(jobs -p)  # a launcher a failed check left following its job
  [[ -z $launchers ]] || kill $launchers 2>/dev/null || true
  "$src/tests/slurm/slurm_cluster" down "$work/cluster" || true
  after_cluster
  rm -rf "$work"
}
trap cleanup EXIT

# cluster_up ARGS...: slurm_cluster up ARGS in $work/cluster, SLURM_CONF exported.
cluster_up() {
  local up
  up=$("$src/tests/slurm/slurm_cluster" "$@") || {
    echo "$name: FAILED: the test cluster did not start"
    tail -n 20 "$work"/cluster/log/*.log 2>/dev/null || true
    exit 1
  }
  eval "$up"
  export SLURM_CONF
}

fail() {
  echo "$name: FAILED: $*"
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
status_is() { [[ $(field "$1" 'j["status"]') == "$2" ]]; }  # status_is RUN_ID STATUS
# True once run RUN_ID has stored more than STEPS steps.
has_steps() { [[ $(field "$1" "j['steps'] > $2") == True ]]; }

# run_then_kill RUN_ID LOG ARGS...: `ranklab run` the quickstart with ARGS in the
# background, and kill -9 its launcher once the run has trained 100 steps.
run_then_kill() {
  local id=$1 log=$2 launcher
  shift 2
  "$cli" run "$job" --db "$db" --quiet "$@" >"$work/$log" 2>&1 &
  launcher=$!
  wait_for 30 "run $id training" has_steps "$id" 100
  kill -9 $launcher
  wait $launcher 2>/dev/null || true
}
