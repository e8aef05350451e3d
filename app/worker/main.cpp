// ranklab-worker: one MPI rank of a training job, started by `mpirun` from the launcher.
// Usage: ranklab-worker --job RESOLVED.toml --run-id ID [--telemetry tcp://host:port]
//        [--simulate-live CALIBRATION.json [--rate R] [--steps N]] (a live simulation's
//        process: app/worker/simulation_feeder.h)
//        (--job-text BASE64 instead of --job on other hosts: engine/job/job_argument.h)
//        ranklab-worker --bench allreduce [options]   (see launch/bench/bench_args.h)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <thread>

#include "app/worker/fault_injector.h"
#include "app/worker/heartbeat_thread.h"
#include "app/worker/simulation_feeder.h"
#include "comm/mpi/mpi_communicator.h"
#include "comm/telemetry/reporter.h"
#include "comm/telemetry/step_wire.h"
#include "engine/data/datasets.h"
#include "engine/job/job_argument.h"
#include "engine/job/job_file.h"
#include "engine/job/job_spec.h"
#include "engine/train/ps_server.h"
#include "engine/train/thread_policy.h"
#include "engine/train/trainer.h"
#include "kernels/cpu/bf16_gemm.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/gemm.h"
#include "launch/bench/bench_args.h"
#include "storage/record_fields.h"

namespace ranklab {
namespace {

struct WorkerArgs {
  std::string job_path;
  std::string job_text;  // base64 of the job's TOML, for ranks on other hosts
  std::string run_id = "manual";
  std::string endpoint;
  FeederOptions feeder;  // a live simulation's process where its calibration is named
};

WorkerArgs parseArgs(int argc, char** argv) {
  WorkerArgs args;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("ranklab-worker: " + flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--job")
      args.job_path = value;
    else if (flag == "--job-text")
      args.job_text = value;
    else if (flag == "--run-id")
      args.run_id = value;
    else if (flag == "--telemetry")
      args.endpoint = value;
    else if (!parseFeederFlag(flag, value, args.feeder))
      throw std::invalid_argument("ranklab-worker: unknown option " + flag +
                                  " (allowed: --job, --job-text, --run-id, --telemetry, "
                                  "--simulate-live, --rate, --steps)");
  }
  if (args.job_path.empty() == args.job_text.empty())
    throw std::invalid_argument(
        "ranklab-worker: one of --job FILE or --job-text BASE64 is required");
  return args;
}

// Forwards the trainer's progress to telemetry, and runs the job's faults after each step.
class TelemetryBridge : public TrainObserver {
 public:
  TelemetryBridge(Reporter& reporter, int rank, const std::vector<InjectedFault>& faults)
      : reporter_(reporter), rank_(rank), faults_(faults, rank) {}

  void onStep(const StepStats& s) override {
    telemetry::Step step;
    step.set_step(s.step);
    step.set_epoch(s.epoch);
    step.set_samples(s.samples);
    encodeMeasures(s, step);
    reporter_.step(step);
    faults_.afterStep(s.step, reporter_);
  }

  void onSpan(const std::string& kind, int64_t step, int64_t start_ns, int64_t end_ns) override {
    reporter_.span(spanOf(kind, step, start_ns, end_ns));
  }

  void onCommSpans(int64_t step, const CommSpans& spans) override {
    for (const CommSpan& piece : spans) {
      telemetry::Span span = spanOf(piece.kind, step, piece.begin_ns, piece.end_ns);
      if (piece.part >= 0) span.set_part(piece.part);
      if (piece.peer >= 0) span.set_peer(piece.peer);
      if (piece.chunk >= 0) span.set_chunk(piece.chunk);
      span.set_bytes(piece.bytes);
      reporter_.span(span);
    }
  }

  void onDeviceSpans(int64_t step, const DeviceSpans& spans) override {
    for (const DeviceSpan& piece : spans) {
      telemetry::Span span = spanOf(piece.kind, step, piece.begin_ns, piece.end_ns);
      if (piece.layer >= 0) span.set_part(piece.layer);
      reporter_.span(span);
    }
  }

  void onEval(const EvalStats& e) override {
    if (rank_ != 0) return;  // the evaluation is global: every rank holds the same figures
    telemetry::Eval message;
    const EvalStats& from = e;
    RANKLAB_EVAL_FIELDS(RANKLAB_FIELD_TO_MESSAGE)  // storage/record_fields.h
    reporter_.eval(message);
  }

  void onEvent(const std::string& kind, const std::string& text, int64_t step) override {
    reporter_.event(kind, text, step);
  }

  void onPause() override { reporter_.flush(); }

  void onServerLoad(const ServerLoad& l) override {
    telemetry::ServerLoad load;
    load.set_shard(l.shard);
    load.set_key_begin(static_cast<int64_t>(l.range.begin));
    load.set_key_end(static_cast<int64_t>(l.range.end));
    load.set_interval_ns(l.interval_ns);
    load.set_pushes(l.pushes);
    load.set_pulls(l.pulls);
    load.set_bytes_rx(l.bytes_rx);
    load.set_bytes_tx(l.bytes_tx);
    load.set_bytes_raw(l.bytes_raw);
    load.set_busy_ns(l.busy_ns);
    load.set_idle_ns(l.idle_ns);
    load.set_held_ns(l.held_ns);
    load.set_max_staleness(l.max_staleness);
    load.set_version(l.version);
    reporter_.serverLoad(load);
  }

 private:
  // An interval on the rank's steady clock, as the wire's ns since the rank's start.
  telemetry::Span spanOf(const std::string& kind, int64_t step, int64_t begin_ns,
                         int64_t end_ns) const {
    telemetry::Span span;
    span.set_phase(kind);
    span.set_step(step);
    span.set_start_ns(reporter_.sinceStart(begin_ns));
    span.set_end_ns(reporter_.sinceStart(end_ns));
    return span;
  }

  Reporter& reporter_;
  int rank_;
  FaultInjector faults_;
};

std::string hostName() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// The ranks Open MPI put on this host (it exports the count to each rank); 0 if unknown.
int ranksOnThisHost() {
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  return local ? std::atoi(local) : 0;
}

int runRank(const WorkerArgs& args, MpiCommunicator& comm) {
  const JobSpec job =
      args.job_text.empty() ? loadJob(args.job_path) : parseJobArgument(args.job_text);
  if (!args.feeder.calibration_path.empty()) {
    FeederOptions feeder = args.feeder;
    feeder.endpoint = args.endpoint;
    feeder.run_id = args.run_id;
    feeder.process = comm.rank();
    feeder.processes = comm.size();
    return runSimulationFeeder(job, feeder);
  }
  ReporterOptions options;
  options.endpoint = args.endpoint;
  options.run_id = args.run_id;
  options.rank = comm.rank();
  options.spool_limit = static_cast<size_t>(job.telemetry.spool);
  // Steps leave in batches of up to 20 ms: one message per ~1 ms step woke zmq's I/O
  // thread and the collector each time, on cores the ranks need (bench/LOG.md).
  options.step_batch_ms = 20;
  // Ranks on other hosts: the run's CURVE keys, from the launcher through mpirun -x.
  if (const char* keys = std::getenv(kTelemetryKeysVariable)) {
    options.curve = parseKeysText(keys);
    unsetenv(kTelemetryKeysVariable);  // not for anything this rank starts
  }
  Reporter reporter(options);
  reporter.hello(comm.size(), hostName(), static_cast<int64_t>(getpid()));
  // Beats while the data loads and while a collective waits, until Bye.
  std::optional<HeartbeatThread> heartbeats(std::in_place, reporter,
                                            std::chrono::milliseconds(job.telemetry.heartbeat_ms),
                                            std::chrono::milliseconds(options.step_batch_ms));
  try {
    if (isServerRank(job, comm.rank())) {
      // Train time is the workers' figure; a server reports its work as load instead.
      TelemetryBridge bridge(reporter, comm.rank(), job.faults);
      serveParameters(job, comm, bridge);
      heartbeats.reset();
      reporter.bye(0, 0, "");
      return 0;
    }
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    const int ranks_here = runsOnHosts(job) ? ranksOnThisHost() : 0;
    kernels::setBlasThreads(blasThreadsFor(job.parallel, cores, ranks_here));
    if (comm.rank() == 0) {
      reporter.event(
          "log",
          std::to_string(kernels::blasThreads()) + " BLAS thread(s) per rank (" +
              (job.parallel.threads > 0
                   ? "parallel.threads"
                   : std::to_string(cores) + " cores / " +
                         std::to_string(ranks_here > 0 ? ranks_here : comm.size()) + " ranks") +
              "), kernels built for " + kernels::isaName(kernels::activeIsa()),
          0);
      // Which bf16 GEMM runs, and why not oneDNN's where it cannot (a CPU below AVX-512).
      if (job.amp.dtype == AmpDtype::kBf16) {
        reporter.event("log", "bf16 GEMM: " + kernels::bf16GemmBackend(), 0);
      }
    }
    const DataSplits data = loadJobData(job.data, job.train.seed, job.model.context);
    TelemetryBridge bridge(reporter, comm.rank(), job.faults);
    const TrainResult result = train(job, comm, data.train, data.test, bridge);
    heartbeats.reset();
    reporter.bye(0, result.train_ns, "");
    return 0;
  } catch (const std::exception& e) {
    heartbeats.reset();
    reporter.event("error", e.what(), 0);
    reporter.bye(1, 0, e.what());
    throw;
  }
}

}  // namespace
}  // namespace ranklab

int main(int argc, char** argv) {
  ranklab::FaultInjector::listenForSlowSignal();  // before anything can tell the launcher our pid
  ranklab::MpiSession mpi(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    ranklab::MpiCommunicator comm;
    if (argc > 1 && std::string(argv[1]) == "--bench") {
      return ranklab::runBenchRank(comm, std::vector<std::string>(argv + 1, argv + argc));
    }
    const auto args = ranklab::parseArgs(argc, argv);
    return ranklab::runRank(args, comm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ranklab-worker rank %d: %s\n", rank, e.what());
    std::fflush(stderr);
    // One failed rank would leave the others blocked in a collective: end them all.
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
  }
}
