// The job file (TOML): what to train, on what, across how many ranks, and how.
// Every key has a default; docs/job-file.md lists them with their allowed values.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "comm/codecs/codec_traits.h"
#include "engine/job/job_choices.h"

namespace ranklab {

// data.path where a job names none: it depends on data.dataset (defaultDataPath).
inline constexpr const char* kFashionMnistFolder = "/usr/share/datasets/fashion-mnist";
// Poems and songs from Debian's `fortunes` package, 234 KB of verse (scripts/install-deps).
inline constexpr const char* kDefaultTextCorpus = "/usr/share/games/fortunes/songs-poems";

// The data a dataset reads when the job names no data.path: the stored job says it.
inline std::string defaultDataPath(DatasetKind dataset) {
  return dataset == DatasetKind::kText ? kDefaultTextCorpus : kFashionMnistFolder;
}
// The same for a dataset named as a form holds it (a name outside the list: the images').
inline std::string defaultDataPath(std::string_view dataset) {
  return defaultDataPath(choiceNamed<DatasetKind>(dataset).value_or(DatasetKind::kFashionMnist));
}

struct DataSpec {
  DatasetKind dataset = DatasetKind::kFashionMnist;
  // fashion-mnist: the folder with the IDX .gz files; text: a UTF-8 file. Left out of a job
  // file, the dataset's own (defaultDataPath), resolved when the file is read.
  std::string path = kFashionMnistFolder;
  int64_t train_limit = 0;      // use the first N training samples; 0 = all
  int64_t test_limit = 0;       // use the first N test samples; 0 = all
  int64_t samples = 10000;      // spirals, moons: training samples drawn
  int64_t test_samples = 2000;  // spirals, moons: test samples drawn
  double noise = 0.1;           // spirals, moons: std. deviation of the Gaussian jitter
  int arms = 3;                 // spirals: arms (= classes)
  int prefetch = 4;  // batches loaded ahead on a background thread; 0 = on the training thread

  bool operator==(const DataSpec&) const = default;
};

struct ModelSpec {
  ModelKind kind = ModelKind::kMlp;
  std::vector<int> layers = {256, 128};  // hidden fc widths; input and output come from the data
  std::vector<int> channels = {32, 64};  // cnn: output channels of each conv+pool stage
  int kernel_size = 5;                   // cnn: square, odd, same padding
  double dropout = 0.0;                  // before each hidden Linear's successor; 0 = off
  int blocks = 4;                        // gpt: transformer blocks
  int heads = 4;                         // gpt: attention heads, dividing width
  int width = 128;                       // gpt: the embedding's (and the residual stream's)
  int context = 64;                      // gpt: tokens per sample

  bool operator==(const ModelSpec&) const = default;
};

struct TrainSpec {
  int epochs = 2;
  int batch_size = 64;       // per rank
  int accumulate_steps = 1;  // batches whose gradients add up before one update
  OptimizerKind optimizer = OptimizerKind::kSgd;
  double lr = 0.05;
  double momentum = 0.9;      // sgd
  bool nesterov = false;      // sgd
  double weight_decay = 0.0;  // L2 for sgd and adam, decoupled for adamw
  double beta1 = 0.9;         // adam, adamw
  double beta2 = 0.999;       // adam, adamw
  double eps = 1e-8;          // adam, adamw
  LrScheduleKind lr_schedule = LrScheduleKind::kConstant;
  int lr_step_epochs = 1;    // step: multiply by lr_gamma every N epochs
  double lr_gamma = 0.1;     // step
  double lr_min = 0.0;       // cosine: the rate at the last step
  int64_t warmup_steps = 0;  // linear warm-up from lr/warmup_steps to lr
  double grad_clip = 0.0;    // the gradient's largest global L2 norm; 0 = no clipping
  uint64_t seed = 1;
  int64_t max_steps = 0;         // stop after this many steps in all; 0 = run every epoch fully
  int eval_every = 0;            // steps between evaluations inside an epoch; 0 = at its end only
  int eval_batches = 20;         // batches per rank such an evaluation scores; 0 = all of them
  int sample_chars = 200;        // gpt: bytes the first rank writes at each evaluation; 0 = none
  std::string checkpoint_path;   // file rank 0 writes checkpoints to; "" = none
  int64_t checkpoint_every = 0;  // steps between checkpoints; 0 = only after the last step
  std::string resume_from;       // checkpoint file to continue from; "" = start afresh
  int max_restarts = 0;          // launcher restarts the world from the last checkpoint this often
  bool elastic = false;          // a checkpoint may resume on another world size; restarts shrink
  std::string device = "cpu";    // cpu | cuda (each rank's own GPU) | cuda:N
  bool tf32 = false;             // cuda: fp32 products on TF32 tensor cores (10-bit mantissa)

  bool operator==(const TrainSpec&) const = default;
};

// How the ranks' gradients become the next parameters: each rank's replica updated after an
// all-reduce (every parallel.algorithm but one), or one model shared per host, its gradient
// sum and update split among the host's ranks (engine/train/shm_sharded_sync.h). The job
// file spells the second as parallel.algorithm = "shm-sharded", a contract kept as it is;
// the engine asks ParallelSpec::updateMode() rather than compare that name.
enum class UpdateMode { kReplicas, kSharedModel };
inline constexpr std::string_view kSharedModelAlgorithm = "shm-sharded";

// The most ranks a job file may name: a cluster's job, for `simulate` and `plan` (a launch
// checks them against what the machine or allocation has; app/cli/rank_capacity.h).
inline constexpr int kMaxRanks = 65'536;

struct ParallelSpec {
  int ranks = 2;                       // training ranks (ps-*: workers; servers come on top)
  std::string strategy = "allreduce";  // allreduce | ps-sync | ps-async | local-sgd
  std::string algorithm = "ring";      // ring | mpi | hierarchical | shm | naive | shm-sharded
  int threads = 0;                     // BLAS threads per rank; 0 = cores / ranks
  int ranks_per_host = 0;              // hierarchical: ranks per host; 0 = shared-memory split
  int bucket_kb = 0;                   // allreduce: gradient bucket size; 0 = one bucket
  CommSchedule comm_schedule = CommSchedule::kFifo;  // allreduce: priority = first layer first
  int partition_kb = 64;  // priority: the pieces the gradient is cut into
  int credit_kb = 0;      // priority: bytes handed to the wire at once; 0 = a piece
  DeviceCollectives device_collectives = DeviceCollectives::kAuto;  // train.device cuda
  int servers = 1;                  // ps-*: server ranks, each holding a key range
  int staleness = -1;               // ps-async: max versions ahead of the slowest; -1 = no bound
  double delay_compensation = 0.0;  // ps-async: DC-ASGD lambda; 0 = off
  int average_every = 4;            // local-sgd: steps between model averages
  int microbatches = 1;             // slices of each rank's batch, gradients accumulated
  int pipeline = 1;                 // pipeline stages; ranks / pipeline data replicas
  PipelineOrder schedule = PipelineOrder::k1F1B;  // the pipeline's order of passes
  std::vector<int> stage_layers;                  // blocks per pipeline stage; empty = balanced
  int tensor = 1;                                 // tensor-parallel slices of each layer pair (MLP)
  bool sequence_parallel = false;                 // a GPT's slices split its LayerNorms' rows too
  int zero = 0;  // ZeRO stage: 0 off, 1 optimizer state, 2 also gradients

  UpdateMode updateMode() const {
    return algorithm == kSharedModelAlgorithm ? UpdateMode::kSharedModel : UpdateMode::kReplicas;
  }
  bool sharesOneModel() const { return updateMode() == UpdateMode::kSharedModel; }

  bool operator==(const ParallelSpec&) const = default;
};

// How gradients travel (docs/compression.md): the codec and its parameters.
struct CompressionSpec {
  std::string codec = "none";  // none fp16 bf16 qsgd topk randomk threshold sign powersgd
  bool error_feedback = true;  // keep what a codec did not send, add it to the next gradient
  int bits = 4;                // qsgd: bits per element, sign included
  int bucket = 512;            // qsgd, sign: elements sharing one scale
  double ratio = 0.01;         // topk, randomk: fraction of elements sent
  double threshold = 0.05;     // threshold: send elements with |g| >= this
  ValueDtype value_dtype = ValueDtype::kFp32;  // topk, threshold: the values on the wire
  int rank = 2;                                // powersgd: rank of the approximation
  bool warm_start = true;                      // powersgd: reuse last step's Q
  bool momentum_correction = true;             // momentum before compression (not powersgd)

  bool compresses() const { return compressesWith(codec); }  // "none": plain fp32 gradients

  bool operator==(const CompressionSpec&) const = default;
};

struct AmpSpec {
  AmpDtype dtype = AmpDtype::kFp32;  // the matrix products'; weights stay fp32
  double init_scale = 65536.0;       // dynamic loss scale to start from (bf16, fp16)
  int growth_interval = 2000;        // clean steps in a row before the loss scale doubles
  bool head_fp32 = true;             // the layer producing the logits computes in fp32

  bool operator==(const AmpSpec&) const = default;
};

struct FaultSpec {
  int straggler_rank = -1;      // -1 = none
  int straggler_delay_ms = 0;   // extra sleep per step on straggler_rank
  int moving_straggler_ms = 0;  // extra sleep per step on a rank drawn anew each step

  bool operator==(const FaultSpec&) const = default;
};

// One [[faults]] table: a fault a rank injects into its own run, after reporting a step.
struct InjectedFault {
  int rank = 0;
  int64_t at_step = 0;  // the step (numbered as in the run's records, from 1) after which it fires
  FaultAction action = FaultAction::kKill;
  int ms = 0;       // slow: extra ms per step from at_step on
  int seconds = 0;  // stop: how long the rank stays stopped; 0 = until the run is ended
  int attempt = 0;  // the launch it fires in: 0 the first, n after the n-th restart

  // The rank does not go on after it: killed, exited or stopped until the run is ended.
  bool endsTheRank() const {
    return action == FaultAction::kKill || action == FaultAction::kExit ||
           (action == FaultAction::kStop && seconds == 0);
  }
  bool operator==(const InjectedFault&) const = default;
};

// `ranklab simulate --live`: how fast the simulated ranks report.
struct SimulateSpec {
  double rate = 0;  // steps per second per rank; 0 = the predicted pace

  bool operator==(const SimulateSpec&) const = default;
};

struct TelemetrySpec {
  int heartbeat_ms = 1000;    // ranks beat from a thread of their own, also inside collectives
  int spool = 4096;           // messages a rank keeps while the collector is unreachable
  int silence_limit_s = 120;  // launcher stops a run no rank has reported from for this long
  int hang_limit_s = 10;      // a rank without a heartbeat this long is hung: the run ends
  int span_every = 50;        // every n-th step records its communication's pieces; 0 = none
  bool encrypt = true;  // CURVE keys of the run's own; false: plain, one machine only (a bench)

  bool operator==(const TelemetrySpec&) const = default;
};

// Where the ranks run: this machine (the default), or hosts Open MPI places them on.
struct LaunchSpec {
  std::vector<std::string> hosts;  // "name:slots" or "name" (one slot); empty = this machine
  std::string hostfile;            // an Open MPI hostfile instead of hosts; "" = none
  std::string telemetry_address;   // this machine's address the ranks reach; "" = by route
  std::vector<std::string> mca;    // "name=value" Open MPI parameters, passed as --mca
  // Who places the ranks: "local" (this machine or the hosts above, through mpirun) or
  // "slurm" (a batch job submitted with sbatch; mpirun inside the allocation).
  Scheduler scheduler = Scheduler::kLocal;
  std::string partition;            // sbatch --partition; "" = the cluster's default
  int nodes = 0;                    // sbatch --nodes; 0 = as Slurm places the tasks
  std::string time_limit;           // sbatch --time ("30", "1:00:00", "1-00"); "" = default
  std::string account;              // sbatch --account; "" = the user's default
  std::vector<std::string> sbatch;  // more sbatch options, "--name" or "--name=value"
  // A program to run as the job's ranks instead of ranklab's engine (a PyTorch script that
  // calls ranklab.torch.watch, docs/pytorch.md); empty = the engine.
  std::vector<std::string> command;
  // Who starts the command's ranks: "ranklab" (parallel.ranks local processes), "mpirun"
  // (Open MPI places them, on hosts too), "torchrun", or "command" (the command is itself a
  // launcher that starts its own ranks: mpirun, srun, a working torchrun).
  Launcher launcher = Launcher::kRanklab;

  bool operator==(const LaunchSpec&) const = default;
};

struct JobSpec {
  std::string name = "job";
  DataSpec data;
  ModelSpec model;
  TrainSpec train;
  ParallelSpec parallel;
  CompressionSpec compression;
  AmpSpec amp;
  FaultSpec fault;
  std::vector<InjectedFault> faults;
  TelemetrySpec telemetry;
  LaunchSpec launch;
  SimulateSpec simulate;

  bool operator==(const JobSpec&) const = default;
};

// One problem in a job file: where it is and what is allowed.
struct JobIssue {
  std::string file;
  int line = 0;  // 0 when the problem has no place in the file (e.g. from --set)
  int column = 0;
  std::string key;          // section.key
  std::string message;      // what is wrong and what is allowed
  std::string str() const;  // "file:line:col: key: message"
};

class JobError : public std::runtime_error {
 public:
  explicit JobError(std::vector<JobIssue> issues);
  const std::vector<JobIssue>& issues() const { return issues_; }

 private:
  std::vector<JobIssue> issues_;
};

// MPI processes the job needs: the training ranks, plus the servers of a ps-* strategy.
int processCount(const JobSpec& job);
// True when the ranks may run on other machines than this one: the job names hosts
// (launch.hosts or launch.hostfile) or Slurm places them (launch.scheduler = "slurm").
bool runsOnHosts(const JobSpec& job);
// True when the job is submitted to Slurm (launch.scheduler = "slurm").
bool runsUnderSlurm(const JobSpec& job);
// True when the job's ranks are a command of the user's (launch.command), not the engine.
bool runsCommand(const JobSpec& job);
// True for ps-sync and ps-async.
bool usesParameterServer(const JobSpec& job);

}  // namespace ranklab
