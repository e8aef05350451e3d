#include "launch/job_runner.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <regex>

#include "comm/telemetry/collector.h"
#include "comm/telemetry/curve_keys.h"
#include "engine/job/job_argument.h"
#include "engine/job/job_file.h"
#include "engine/job/job_key_relevance.h"
#include "launch/attempt_end.h"
#include "launch/child_process.h"
#include "launch/command_ranks.h"
#include "launch/follow_record.h"
#include "launch/host_placement.h"
#include "launch/private_dir.h"
#include "launch/rank_watch.h"
#include "launch/rejection_log.h"
#include "launch/restart_plan.h"
#include "launch/run_recorder.h"
#include "launch/slurm_job.h"
#include "launch/slurm_queue.h"
#include "storage/run_origin.h"
#include "storage/run_store.h"

namespace ranklab {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string randomTag() {
  std::random_device device;
  char text[17];
  std::snprintf(text, sizeof text, "%08x%08x", device(), device());
  return text;
}

// The resolved job the ranks read, in a folder only this account can enter; removed with
// it when the run ends (and by the next launcher if this one is killed).
class ResolvedJobFile {
 public:
  ResolvedJobFile(const JobSpec& job, int64_t run_id)
      : path_(dir_.write("job-" + std::to_string(run_id) + ".toml", toTomlText(job))) {}
  const std::string& path() const { return path_; }

 private:
  PrivateDir dir_;
  std::string path_;
};

// "[1,3]<stderr>:text" (mpirun --tag-output) -> rank 3, "text".
void splitTaggedLine(const std::string& line, int& rank, std::string& text) {
  static const std::regex tag(R"(^\[\d+,(\d+)\]<std(?:out|err)>:(.*)$)");
  std::smatch match;
  if (std::regex_match(line, match, tag)) {
    rank = std::stoi(match[1]);
    text = match[2];
  } else {
    rank = -1;
    text = line;
  }
}

// Why a run that went quiet is stopped, naming the ranks that had not finished.
std::string silenceMessage(int limit_s, const std::vector<int>& unfinished) {
  std::string text = "no rank reported anything for " + std::to_string(limit_s) +
                     " s (telemetry.silence_limit_s): a rank is frozen or a collective is "
                     "blocked behind one; ranks not finished:";
  for (int rank : unfinished) text += " " + std::to_string(rank);
  return text;
}

NewRun newRunFor(const JobSpec& job, const std::string& job_path) {
  NewRun run;
  run.name = job.name;
  run.job_path = job_path;
  run.job_toml = toTomlText(job);
  run.world = processCount(job);
  if (runsCommand(job)) {  // the engine's keys say nothing of a command's training
    run.origin = originName(RunOrigin::kPytorchLive);
    run.strategy = "command";
    run.algorithm = nameText(job.launch.launcher);  // who started the ranks
    run.codec = "none";
    run.amp = "fp32";
    run.epochs = 0;
    return run;
  }
  run.strategy = job.parallel.strategy;
  // Only where it applies: a parameter server's run is "ps-sync", not "ps-sync/ring".
  if (keyApplies("parallel.algorithm", jobValues(job))) run.algorithm = job.parallel.algorithm;
  run.codec = job.compression.codec;
  run.amp = nameText(job.amp.dtype);
  run.epochs = job.train.epochs;
  return run;
}

}  // namespace

std::vector<std::string> shownCommand(std::vector<std::string> argv) {
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i - 1] == "--job-text")
      argv[i] = "<the resolved job, " + std::to_string(argv[i].size()) + " characters of base64>";
  }
  return argv;
}

// What Open MPI needs here: root allowed, more ranks than cores, and no ptrace-based
// single-copy (refused in containers); oversubscribed ranks yield instead of spinning.
std::vector<std::string> mpiEnvironment() {
  return {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
          "OMPI_MCA_rmaps_base_oversubscribe=1", "OMPI_MCA_btl_vader_single_copy_mechanism=none",
          "OMPI_MCA_mpi_yield_when_idle=1"};
}

namespace {

std::string segmentParent() {
  std::error_code error;
  return std::filesystem::is_directory("/dev/shm", error)
             ? "/dev/shm"
             : std::filesystem::temp_directory_path().string();
}

}  // namespace

MpiSegmentFolder::MpiSegmentFolder() : dir_(segmentParent()) {}

std::vector<std::string> MpiSegmentFolder::environment() const {
  auto env = mpiEnvironment();
  env.push_back("OMPI_MCA_btl_vader_backing_directory=" + path());
  return env;
}

std::string executableDir() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string(".") : self.parent_path().string();
}

JobRunner::JobRunner(LaunchOptions options) : options_(std::move(options)) {
  if (options_.worker_path.empty()) options_.worker_path = executableDir() + "/ranklab-worker";
}

std::vector<std::string> JobRunner::command(const JobSpec& job,
                                            const std::string& resolved_job_path,
                                            const std::string& run_id,
                                            const std::string& endpoint) const {
  if (runsCommand(job))
    return commandLine(job, options_.mpirun, placementArguments(job.launch), command_dir_,
                       builtPythonDir(executableDir()));
  std::vector<std::string> argv{options_.mpirun, "--oversubscribe", "--bind-to", "none",
                                "--tag-output"};
  const auto placement = placementArguments(job.launch);
  argv.insert(argv.end(), placement.begin(), placement.end());
  // Every rank gets the run's telemetry keys from mpirun (unset, -x would warn); on hosts
  // the job goes inline: other hosts lack this machine's resolved file.
  const bool on_hosts = runsOnHosts(job);
  if (job.telemetry.encrypt) argv.insert(argv.end(), {"-x", kTelemetryKeysVariable});
  const int processes = options_.feeders > 0 ? options_.feeders : processCount(job);
  argv.insert(argv.end(),
              {"-np", std::to_string(processes), options_.worker_path,
               on_hosts ? "--job-text" : "--job", on_hosts ? jobArgument(job) : resolved_job_path,
               "--run-id", run_id, "--telemetry", endpoint});
  argv.insert(argv.end(), options_.worker_args.begin(), options_.worker_args.end());
  return argv;
}

RunOutcome JobRunner::run(const JobSpec& job, const std::string& job_path, RunObserver& observer) {
  try {
    return launch(job, job_path, observer);
  } catch (const StoreError&) {
    // A run deleted while it ran (runs delete, the workbench) fails every later write with
    // a bare "FOREIGN KEY constraint failed"; say what happened instead.
    if (last_run_id_ > 0 && !RunStore(options_.db_path).summary(last_run_id_)) {
      throw StoreError(options_.db_path + ": run " + std::to_string(last_run_id_) +
                       " was deleted from the store while it ran; its ranks were stopped");
    }
    throw;
  }
}

RunOutcome JobRunner::runJobText(const std::string& toml_text, const std::string& job_path,
                                 const std::vector<std::string>& overrides, RunObserver& observer) {
  const std::string name = job_path.empty() ? "job.toml" : job_path;
  JobSpec job;
  try {
    job = toml_text.empty() ? loadJob(name, overrides) : parseJob(toml_text, name, overrides);
  } catch (const JobError& e) {
    RunOutcome outcome;
    outcome.status = "failed";
    for (const JobIssue& issue : e.issues())
      outcome.error += (outcome.error.empty() ? "" : "\n") + issue.str();
    if (outcome.error.empty()) outcome.error = e.what();
    return outcome;
  }
  return run(job, job_path, observer);
}

namespace {

constexpr auto kStartupGrace = std::chrono::seconds(30);

// telemetry.silence_limit_s; but MPI start-up is silent and slow on a loaded machine, so
// until every rank has spoken the limit is at least kStartupGrace: a short limit catches
// hangs in training, not a slow wire-up.
std::chrono::steady_clock::duration silenceLimit(const JobSpec& job, const RunRecorder& recorder) {
  const std::chrono::steady_clock::duration limit =
      std::chrono::seconds(job.telemetry.silence_limit_s);
  return recorder.allRanksReported()
             ? limit
             : std::max<std::chrono::steady_clock::duration>(limit, kStartupGrace);
}

// Two heartbeats missed: a rank stopped is named within two beats (1 to 2 s at the default
// telemetry.heartbeat_ms), long before telemetry.hang_limit_s ends the run.
std::chrono::milliseconds quietLimit(const JobSpec& job) {
  return std::chrono::milliseconds(std::max(500, 2 * job.telemetry.heartbeat_ms));
}

void requireWorker(const std::string& path) {
  if (!std::filesystem::exists(path))
    throw std::runtime_error(path + ": ranklab-worker not found (build it, or pass its path)");
}

// "rank 2 died after step 5 (signal 9 (Killed))..." or "rank 1 hung after step 5 ...".
std::string failureMessage(const RankFailure& f, const std::string& cause, int hang_limit_s) {
  const std::string after =
      f.last_step < 0 ? " before its first step" : " after step " + std::to_string(f.last_step);
  char quiet[32];
  std::snprintf(quiet, sizeof quiet, "%.2f", f.quiet_s);
  if (!f.hung) {
    return "rank " + std::to_string(f.rank) + " died" + after +
           (cause.empty() ? "" : " (" + cause + ")") + ", found " + quiet +
           " s after its last message";
  }
  return "rank " + std::to_string(f.rank) + " hung" + after +
         ": no message, not even a heartbeat, for " + quiet + " s (" +
         (f.starting
              ? std::to_string(std::max<int64_t>(hang_limit_s, RankWatch::kStartupLimit.count())) +
                    " s while starting, "
              : std::string()) +
         "telemetry.hang_limit_s = " + std::to_string(hang_limit_s) + "); its process is " +
         f.process;
}

// "rank 333 silent for 2.0 s after step 500 (no message, not even a heartbeat)".
std::string quietText(const QuietChange& c) {
  const std::string after =
      c.last_step < 0 ? " before its first step" : " after step " + std::to_string(c.last_step);
  if (!c.quiet) return "rank " + std::to_string(c.rank) + " heard again" + after;
  char quiet[32];
  std::snprintf(quiet, sizeof quiet, "%.1f", c.quiet_s);
  return "rank " + std::to_string(c.rank) + " silent for " + quiet + " s" + after +
         " (no message, not even a heartbeat)";
}

// Keeps the last 8 lines.
void keepTail(std::deque<std::string>& tail, std::string line) {
  tail.push_back(std::move(line));
  if (tail.size() > 8) tail.pop_front();
}

}  // namespace

namespace {

// What mpirun and the ranks print: shown live, the tail of stderr kept for a failure
// message, and mpirun's own words on how a rank ended.
struct MpirunOutput {
  RunObserver& observer;
  std::deque<std::string> last_errors;
  MpirunVerdict verdict;

  void operator()(bool is_stderr, const std::string& line) {
    int rank = -1;
    std::string text;
    splitTaggedLine(line, rank, text);
    if (rank < 0) verdict.read(text);
    if (is_stderr)
      keepTail(last_errors, rank >= 0 ? "rank " + std::to_string(rank) + ": " + text : text);
    observer.onOutput(rank, is_stderr, text);
  }
};

// The ranks' telemetry: into the recorder and the watch, with the last time the run moved.
struct TelemetryIntake {
  Collector& collector;
  RunRecorder& recorder;
  RankWatch& watch;
  int world;
  Clock::time_point last_heard = Clock::now();  // launch counts: MPI start-up is silent too
  RejectionLog rejections{};

  // Returns how many messages it took in.
  size_t operator()(int timeout_ms) {
    const auto envelopes = collector.receive(timeout_ms);
    const auto now = Clock::now();
    for (const auto& envelope : envelopes) {
      watch.heard(envelope, now);
      // Heartbeats say a rank lives, not that the run moves: silence counts without them.
      if (!envelope.has_heartbeat()) last_heard = now;
      recorder.ingest(envelope);
    }
    for (const auto& rejected : collector.takeRejected())
      rejections.add(rejected.peer, rejected.reason, now);
    for (const std::string& text : rejections.due(now)) recorder.launcherEvent("error", text);
    for (int r = 0; r < world; ++r) recorder.setGaps(r, collector.gaps(r));
    recorder.flushIfDue();
    return envelopes.size();
  }

  // Takes in what waits unread, for up to kCatchUp. Silence is judged only after this: a
  // launcher that stalled (a slow flush to disk, a descheduled process) still has the
  // ranks' heartbeats of that time in its socket, and they are not silence.
  void catchUp() {
    constexpr auto kCatchUp = std::chrono::seconds(2);
    // Until the socket stays empty a while: ZeroMQ's I/O thread may still be reading what a
    // process sent just before it ended (a simulation's feeder: 512 ranks' last steps).
    constexpr int kQuietMs = 100;
    const auto start = Clock::now();
    while ((*this)(kQuietMs) > 0 && Clock::now() - start < kCatchUp) {
    }
  }

  // The first rank found dead or hung, judged after catching up.
  std::optional<RankFailure> failedRank() {
    if (!watch.check(Clock::now())) return std::nullopt;
    catchUp();
    return watch.check(Clock::now());
  }

  // Ranks gone silent for `limit` (or heard again), as events while the run goes on: the
  // live "who is stuck" long before the hang limit ends the run. Judged after catching up;
  // a host of silent ranks is named rank by rank up to kQuietNamed, then in one line.
  void reportQuiet(Clock::duration limit) {
    constexpr size_t kQuietNamed = 64;
    if (watch.anyNewlyQuiet(Clock::now(), limit)) catchUp();
    size_t named = 0, more = 0;
    for (const QuietChange& c : watch.quietChanges(Clock::now(), limit)) {
      if (c.quiet && named == kQuietNamed) {
        ++more;
        continue;
      }
      named += c.quiet;
      recorder.launcherEvent(c.quiet ? "quiet" : "heard", quietText(c), c.rank,
                             std::max<int64_t>(0, c.last_step), recorder.nowNs());
    }
    if (more > 0)
      recorder.launcherEvent("quiet", "and " + std::to_string(more) + " more ranks silent");
  }

  // Whether no step, eval or event came for `limit`, judged after catching up.
  bool silentFor(Clock::duration limit) {
    if (Clock::now() - last_heard <= limit) return false;
    catchUp();
    return Clock::now() - last_heard > limit;
  }
};

// After mpirun exited: the ranks' last messages and lines may still be in flight. Waits
// drain_s for every Bye, and on while messages keep coming (a launcher that fell behind the
// ranks stores their backlog rather than drop it), then for the output, longer while
// `failed` has no verdict.
void drainLate(double drain_s, TelemetryIntake& intake, RankProcess& child, MpirunOutput& output,
               const std::optional<RankFailure>& failed) {
  const auto start = Clock::now();
  // Waited this long with no message: the backlog is in. Counted in waits only, not in the
  // time the intake spends storing what it read (a slow flush on a loaded machine is no
  // silence: the byes of a thousand ranks may still wait unread behind it).
  constexpr double kBacklogQuietS = 1.0;
  constexpr int kWaitMs = 50;
  double quiet_s = 0;
  while (!intake.recorder.allRanksSaidBye() &&
         (secondsSince(start) < drain_s || quiet_s < kBacklogQuietS))
    quiet_s = intake(kWaitMs) > 0 ? 0 : quiet_s + kWaitMs / 1e3;
  for (int i = 0; i < 20; ++i) child.pump(10, std::ref(output));
  // mpirun's verdict on the failed rank is among its last lines: give them a little longer.
  for (int i = 0; i < 30 && failed && output.verdict.causeOf(failed->rank).empty(); ++i)
    child.pump(10, std::ref(output));
  intake(0);
  for (const std::string& text : intake.rejections.rest())
    intake.recorder.launcherEvent("error", text);
}

}  // namespace

void settle(RunOutcome& outcome, RunRecorder& recorder, const AttemptEnd& end) {
  const std::string& failure = end.failure_text;
  const std::optional<RankFailure>& failed = end.failure;
  const bool stopped = end.stopped;
  const std::deque<std::string>& last_errors = end.last_errors;
  outcome.error.clear();  // a restarted run is judged by its last attempt
  if (!failure.empty()) {
    outcome.status = "failed";
    outcome.error = failure + (end.final ? "" : "; the ranks were stopped");
    // On the failed rank's row at its last step (the timeline marks it there).
    if (failed)
      recorder.launcherEvent("failure", outcome.error, failed->rank, failed->last_step,
                             recorder.lastStepEndNs(failed->rank));
    else
      recorder.launcherEvent("failure", outcome.error);
  } else if (stopped) {
    outcome.status = "stopped";
  } else if (outcome.exit_code == 0 && recorder.allRanksSaidBye() && !recorder.anyRankFailed()) {
    outcome.status = "done";
  } else {
    outcome.status = "failed";
    outcome.error = end.ended_who + " exited with status " + std::to_string(outcome.exit_code);
    if (!recorder.allRanksSaidBye()) outcome.error += "; not every rank finished";
    if (!end.hint.empty()) outcome.error += ": " + end.hint;
    for (const auto& line : last_errors) outcome.error += "\n  " + line;
    recorder.launcherEvent("error", outcome.error);
  }
}

RunOutcome JobRunner::launch(const JobSpec& job, const std::string& job_path,
                             RunObserver& observer) {
  last_run_id_ = 0;
  command_dir_ = commandDir(job_path);
  // A command not found fails here, before a run is stored.
  if (runsCommand(job))
    requireProgram(job.launch.launcher == Launcher::kTorchrun ? "torchrun"
                                                              : job.launch.command.front());
  else
    requireWorker(options_.worker_path);
  // An unknown host or an unreadable hostfile fails here, before a run is stored.
  telemetryAddress(job.launch);
  const auto started = Clock::now();
  stop_requested_ = false;
  RunStore store(options_.db_path);
  RunOutcome outcome;
  NewRun fresh = newRunFor(job, job_path);
  if (!options_.origin.empty()) fresh.origin = options_.origin;
  outcome.run_id = store.createRun(fresh);
  last_run_id_ = outcome.run_id;
  RunRecorder recorder(store, outcome.run_id, processCount(job), observer);
  RestartPlan restarts(job);
  for (int attempt = 0;; ++attempt) {
    const AttemptEnd end =
        runAttempt(restarts.jobFor(attempt), attempt, outcome.run_id, recorder, restarts, observer);
    outcome.exit_code = end.exit_code;
    settle(outcome, recorder, end);
    if (outcome.status != "failed" || !restarts.canRestart() || stop_requested_ || end.final) break;
    try {
      restarts.prepareRestart(store, recorder, outcome.run_id, end.failure ? end.failure->rank : -1,
                              end.failure_found);
    } catch (const std::exception& e) {
      outcome.error += "\ncannot restart: " + std::string(e.what());
      recorder.launcherEvent("error", "cannot restart: " + std::string(e.what()));
      break;
    }
  }
  recorder.flush();
  store.finishRun(outcome.run_id, outcome.status, secondsSince(started),
                  recorder.slowestTrainNs() / 1e9);
  if (auto summary = store.summary(outcome.run_id)) observer.onFinished(*summary);
  return outcome;
}

namespace {

// A turn of the launcher's loop waits 50 ms at most for telemetry; one that took seconds
// means the launcher itself was held up (a loaded machine, a slow store), which the run's
// events should say rather than leave the gap to be read as the ranks'.
void noteStall(RunRecorder& recorder, Clock::time_point& last_turn) {
  constexpr auto kStall = std::chrono::seconds(2);
  const auto now = Clock::now();
  if (now - last_turn >= kStall) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "the launcher was held up for %.1f s (a loaded machine or a slow store); what "
                  "the ranks sent meanwhile was read before judging them",
                  std::chrono::duration<double>(now - last_turn).count());
    recorder.launcherEvent("log", text);
  }
  last_turn = now;
}

// What the ranks' processes get in their environment: Open MPI's settings, the segment
// folder on one machine (other hosts lack it: there Open MPI picks its own), and the
// telemetry keys (mode 0400 in /proc, never argv; mpirun forwards them with -x).
std::vector<std::string> rankEnvironment(const JobSpec& job, const MpiSegmentFolder& segments,
                                         const std::optional<RunCurveKeys>& keys) {
  auto environment = runsOnHosts(job) ? mpiEnvironment() : segments.environment();
  if (keys)
    environment.push_back(std::string(kTelemetryKeysVariable) + "=" + keysText(keys->ranks));
  return environment;
}

// The attempt's end, once mpirun (or the Slurm job) is over: its status, the failed rank's
// words with mpirun's verdict on it, and the ranks' last lines of stderr.
void concludeAttempt(AttemptEnd& end, int exit_code, const MpirunOutput& output, int hang_limit_s) {
  end.exit_code = exit_code;
  if (!end.failure && end.failure_text.empty()) end.failure_found = Clock::now();
  if (end.failure)
    end.failure_text =
        failureMessage(*end.failure, output.verdict.causeOf(end.failure->rank), hang_limit_s);
  end.stopped = end.stopped && !end.failure;
  end.last_errors = output.last_errors;
}

}  // namespace

std::unique_ptr<RankProcess> JobRunner::startRanks(const JobSpec& job, int64_t run_id,
                                                   const std::vector<std::string>& argv,
                                                   const std::vector<std::string>& environment,
                                                   std::vector<std::string>& shown,
                                                   AttemptEnd& end) {
  shown = shownCommand(argv);
  if (runsCommand(job) && job.launch.launcher == Launcher::kRanklab && !runsUnderSlurm(job))
    return std::make_unique<LocalRanks>(processCount(job), argv, environment, command_dir_);
  if (!runsUnderSlurm(job))
    return std::make_unique<ChildProcess>(argv, environment,
                                          runsCommand(job) ? command_dir_ : std::string());
  const std::string name = "ranklab-" + std::to_string(run_id);
  try {
    const std::string output_dir = slurmOutputDir(options_.db_path);
    const auto sbatch =
        shownSubmission(job.launch, processCount(job), name, output_dir + "/" + name + "-");
    shown.insert(shown.begin(), sbatch.begin(), sbatch.end());
    return std::make_unique<SlurmJob>(job.launch, processCount(job), name, argv, environment,
                                      output_dir);
  } catch (const std::exception& e) {
    end.failure_text = e.what();  // refused, or Slurm's client missing: nothing is queued
    end.final = true;
    end.exit_code = 1;
    return nullptr;
  }
}

AttemptEnd JobRunner::runAttempt(const JobSpec& job, int attempt, int64_t run_id,
                                 RunRecorder& recorder, RestartPlan& restarts,
                                 RunObserver& observer) {
  const int world = processCount(job);
  const std::string wire_id = std::to_string(run_id) + "-" + randomTag();
  // A new wire id: a failed attempt's stragglers are refused. Bound where the ranks reach,
  // encrypted and admitting only this attempt's ranks (CURVE keys of its own), loopback
  // included: the wire id and port are on mpirun's command line, which every account reads.
  std::optional<RunCurveKeys> keys;
  if (job.telemetry.encrypt) keys = newRunCurveKeys();  // false: a bench of what it costs
  Collector collector(wire_id, world, "tcp://" + telemetryAddress(job.launch) + ":*",
                      keys ? std::optional(keys->collector) : std::nullopt);
  ResolvedJobFile resolved(job, run_id);
  const auto argv = command(job, resolved.path(), wire_id, collector.endpoint());
  const MpiSegmentFolder segments;
  AttemptEnd end;
  std::vector<std::string> shown;
  auto environment = rankEnvironment(job, segments, keys);
  if (runsCommand(job)) {
    const auto told = commandEnvironment(
        job, {collector.endpoint(), wire_id, job.telemetry.heartbeat_ms, job.telemetry.span_every},
        builtPythonDir(executableDir()));
    environment.insert(environment.end(), told.begin(), told.end());
  }
  const std::unique_ptr<RankProcess> started =
      startRanks(job, run_id, argv, environment, shown, end);
  if (!started) return end;
  if (attempt == 0) observer.onStarted(run_id, shown);
  auto* slurm = dynamic_cast<SlurmJob*>(started.get());
  // A launcher killed from now on leaves the job running: what a new one needs to follow it.
  const std::string follow =
      slurm ? followRecordPath(slurmOutputDir(options_.db_path), run_id, slurm->id()) : "";
  if (slurm)
    writeFollowRecord(
        follow, {slurm->id(), wire_id, collector.endpoint(),
                 keys ? std::optional(keys->collector) : std::nullopt, recorder.timeOffsetNs()});
  end = watchAttempt(job, *started, collector, recorder, restarts, observer);
  if (slurm && slurm->state().ended()) std::filesystem::remove(follow);
  return end;
}

AttemptEnd JobRunner::watchAttempt(const JobSpec& job, RankProcess& child, Collector& collector,
                                   RunRecorder& recorder, RestartPlan& restarts,
                                   RunObserver& observer) {
  const int world = processCount(job);
  MpirunOutput output{observer, {}, {}};
  RankWatch watch(world, std::chrono::seconds(job.telemetry.hang_limit_s));
  TelemetryIntake collect{collector, recorder, watch, world};
  AttemptEnd end;
  QueueFollower queue{dynamic_cast<SlurmJob*>(&child), recorder, {}};
  const std::string how =
      queue.job ? "scancel job " + queue.job->id() : "SIGTERM to " + child.name();
  std::optional<Clock::time_point> stop_sent;
  bool kill_sent = false;
  auto terminate = [&](const std::string& kind, const std::string& why) {
    recorder.launcherEvent(kind, why + ": " + how);
    child.terminate();
    stop_sent = Clock::now();
  };
  auto last_turn = Clock::now();
  while (child.running()) {
    noteStall(recorder, last_turn);
    queue(collect.last_heard, watch);
    child.pump(0, std::ref(output));
    collect(50);
    restarts.noticeProgress(recorder);
    sendRequestedFaults(watch, recorder);
    if (!stop_sent) collect.reportQuiet(quietLimit(job));
    if (!end.failure && !stop_sent && (end.failure = collect.failedRank())) {
      end.failure_found = Clock::now();
      watch.killLiveRanks();  // mpirun then says how the first one ended
    }
    // mpirun usually reports and exits within the second; one already aborting gets longer.
    const auto verdict_wait = std::chrono::seconds(output.verdict.aborting() ? 5 : 1);
    const bool end_for_failure =
        end.failure && (end.failure->hung || Clock::now() - end.failure_found > verdict_wait);
    if (!stop_sent && end_for_failure) {
      terminate("log", "rank " + std::to_string(end.failure->rank) +
                           (end.failure->hung ? " hung" : " died"));
    } else if (!stop_sent && collect.silentFor(silenceLimit(job, recorder))) {
      end.failure_text = silenceMessage(job.telemetry.silence_limit_s, recorder.ranksWithoutBye());
      end.failure_found = Clock::now();
      terminate("error", end.failure_text);
    } else if (stop_requested_ && !stop_sent) {
      terminate("log", "stop requested");
      end.stopped = true;
    } else if (stop_sent && !kill_sent &&
               Clock::now() - *stop_sent > std::chrono::milliseconds(options_.stop_grace_ms)) {
      recorder.launcherEvent("log", std::string("ranks still running after the grace period: ") +
                                        (queue.job ? "scancel --signal=KILL" : "SIGKILL"));
      child.kill();
      kill_sent = true;
    }
    if (queue.givesUp(stop_sent, recorder.allRanksSaidBye())) break;
  }
  // The last turn's stall too: the ranks may have ended while the launcher was held up.
  noteStall(recorder, last_turn);
  // Stopped or failed ranks send no Bye: do not wait long for it.
  drainLate(end.failure                          ? 0.2
            : stop_sent || child.exitCode() != 0 ? 0.5
                                                 : 3.0,
            collect, child, output, end.failure);
  restarts.noticeProgress(recorder);
  concludeAttempt(end, child.exitCode(), output, job.telemetry.hang_limit_s);
  end.ended_who = child.name();
  if (runsCommand(job)) end.hint = commandHint(end.last_errors, recorder.ranksNeverHeard());
  queue(collect.last_heard, watch);  // its final state
  queue.settle(end);
  return end;
}

}  // namespace ranklab
