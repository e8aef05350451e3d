#include "launch/calibrate.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "comm/codecs/codec.h"
#include "comm/codecs/compressed_allreduce.h"
#include "comm/collectives/allreduce_registry.h"
#include "comm/silent_peers.h"
#include "engine/optim/optimizer.h"
#include "engine/sim/model_parts.h"
#include "engine/sim/part_timing.h"
#include "engine/sim/simulator.h"
#include "engine/sim/step_actions.h"
#include "engine/train/gradient_sync.h"
#include "engine/train/model_part.h"
#include "engine/train/strategy_registry.h"
#include "engine/train/thread_policy.h"
#include "kernels/cpu/gemm.h"
#include "launch/job_runner.h"
#include "launch/private_dir.h"
#include "launch/run_observer.h"
#include "storage/analysis/step_measure.h"
#include "storage/atomic_file.h"
#include "storage/bounded_read.h"
#include "storage/private_files.h"

namespace ranklab {

namespace {

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

int microRows(const JobSpec& job) {
  return std::max(1, job.train.batch_size / std::max(1, job.parallel.microbatches));
}

struct LinkNeed {
  std::string key;  // linkKey(): the algorithm and where the job places its ranks
  std::string algorithm;
  int world;
  bool operator<(const LinkNeed& o) const {
    return std::tie(key, world) < std::tie(o.key, o.world);
  }
};

// Where the job's ranks run (its hosts, hostfile, MCA parameters): its all-reduces and its
// reference runs are measured there, not on this machine alone.
LaunchSpec placementOf(const JobSpec& job) {
  LaunchSpec where;
  where.hosts = job.launch.hosts;
  where.hostfile = job.launch.hostfile;
  where.telemetry_address = job.launch.telemetry_address;
  where.mca = job.launch.mca;
  return where;
}

// The largest world an all-reduce is measured on here: past it the simulator scales the
// nearest measured one by the ring's steps (Calibration::link), as it must for a cluster's
// thousands of ranks, which no one machine can start.
constexpr int kLargestMeasuredWorld = 8;

// The all-reduces the job's step runs (step_actions.cpp): its data group's algorithm, the ring
// of its slices, of its stages' messages (2 ranks) and of its small sums over every rank.
std::set<LinkNeed> linksFor(const JobSpec& job) {
  const LayoutDegrees d = degreesOf(job, job.parallel.ranks);
  std::set<LinkNeed> need;
  const auto add = [&](const std::string& algorithm, int world) {
    need.insert({linkKey(job, algorithm), algorithm, std::min(world, kLargestMeasuredWorld)});
  };
  if (d.data > 1) add(job.parallel.algorithm, d.data);
  if (d.tensor > 1) add("ring", d.tensor);
  if (d.pipeline > 1) add("ring", 2);
  if (d.pipeline > 1) add("ring", d.pipeline);
  if ((job.amp.dtype != AmpDtype::kFp32 || job.train.grad_clip > 0) && d.product() > 1)
    add("ring", d.product());
  return need;
}

bool hasLink(const Calibration& c, const LinkNeed& need) {
  for (const LinkFit& f : c.links)
    if (f.algorithm == need.key && f.world == need.world) return true;
  return false;
}

// time = latency + bytes * per_byte, least squares of the relative error (every size counts
// alike, the 4-byte sums as much as the megabytes).
LinkFit fitLink(const std::string& algorithm, int world,
                const std::vector<AllreduceBenchRow>& rows) {
  double a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0;
  for (const AllreduceBenchRow& r : rows) {
    const double t = r.seconds * 1e9, x = static_cast<double>(r.bytes), w = 1 / (t * t);
    a11 += w;
    a12 += w * x;
    a22 += w * x * x;
    b1 += w * t;
    b2 += w * x * t;
  }
  const double det = a11 * a22 - a12 * a12;
  LinkFit f{algorithm, world, 0, 0};
  if (det > 0) {
    f.latency_ns = std::max(0.0, (b1 * a22 - b2 * a12) / det);
    f.ns_per_byte = std::max(0.0, (a11 * b2 - a12 * b1) / det);
  }
  return f;
}

template <typename F>
double medianNs(int repeats, F&& work) {
  std::vector<double> ns;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    ns.push_back(
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(ns.begin(), ns.begin() + ns.size() / 2, ns.end());
  return ns[ns.size() / 2];
}

// The optimizer's update per parameter at 16 Ki to 4 Mi parameters: its state in L1 and L2
// at the small end, in memory at the large one (a part updates at its own size's rate).
void measureUpdate(const JobSpec& job, Calibration& c) {
  const std::string optimizer = nameText(job.train.optimizer);
  std::vector<std::pair<double, double>> by_size;
  for (size_t params = size_t{1} << 14; params <= size_t{1} << 22; params <<= 2) {
    std::vector<float> weights(params, 0.01f), grads(params, 0.001f);
    auto update = makeOptimizer(job.train, params);
    update->step(weights.data(), grads.data(), job.train.lr);  // its state allocated
    const int repeats = 5 * static_cast<int>(std::max<size_t>(1, (size_t{1} << 18) / params));
    const double ns =
        medianNs(repeats, [&] { update->step(weights.data(), grads.data(), job.train.lr); });
    by_size.emplace_back(static_cast<double>(params), ns / static_cast<double>(params));
    if (params == size_t{1} << 20) c.update_ns_per_param[optimizer] = by_size.back().second;
  }
  c.update_by_size[optimizer] = std::move(by_size);
}

// PowerSGD's compute per float of the part's gradient: its products, orthonormalisation and
// reconstruction, as the engine's own sync runs them on this rank's cores (over peers that
// move nothing: the sums are the link's, measured apart).
void measureLowRank(const JobSpec& job, const Network& part, Calibration& c) {
  JobSpec alone = job;
  alone.parallel.algorithm = "ring";  // silent peers have no shared memory
  alone.parallel.zero = 0;
  SilentPeers peers(0, 2);
  auto sync = makeGradientSync(alone, peers, weightMatrices(part)).sync;
  const size_t n = part.parameterCount();
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.f, 1e-3f);
  std::vector<float> params(n, 0.01f), gradient(n), grads(n);
  for (float& g : gradient) g = normal(rng);
  sync->start(params.data(), n);
  std::vector<double> ns;
  for (int i = 0; i < 5; ++i) {
    grads = gradient;
    ns.push_back(static_cast<double>(sync->sync(grads.data(), n).compress_ns));
  }
  std::nth_element(ns.begin(), ns.begin() + 2, ns.end());
  CodecTiming t;
  t.own_ns = ns[2] / static_cast<double>(std::max<size_t>(n, 1));
  c.codecs[describeCompression(codecOptions(job))] = t;
}

// The job's codec over a gradient-like buffer of the part's size: encode and decode per
// float, and the payload's bytes per float.
void measureCodec(const JobSpec& job, size_t floats, Calibration& c) {
  const CodecOptions options = codecOptions(job);
  auto codec = makeCodec(options, 0);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.f, 1e-3f);
  std::vector<float> gradient(std::max<size_t>(floats, 1024)), decoded(gradient.size());
  for (float& g : gradient) g = normal(rng);
  std::vector<uint8_t> payload;
  const double n = static_cast<double>(gradient.size());
  CodecTiming t;
  t.encode_ns = medianNs(5, [&] { codec->encode(gradient.data(), gradient.size(), payload); }) / n;
  t.payload = static_cast<double>(payload.size()) / n;
  t.decode_ns = medianNs(5,
                         [&] {
                           codec->decode(payload.data(), payload.size(), gradient.size(),
                                         decoded.data(), DecodeMode::kAdd);
                         }) /
                n;
  // The whole stack on one rank (no exchange): momentum correction, error feedback, its own
  // encode and decode, as the engine runs them on every step.
  SilentPeers alone(0, 1);
  CompressedAllreduce stack(alone, AllreduceChoice(job.parallel.algorithm), options,
                            gradient.size());
  std::vector<double> own;
  for (int i = 0; i < 5; ++i) {
    std::vector<float> g = gradient;
    own.push_back(static_cast<double>(stack.run(g.data(), g.size()).codec_ns));
  }
  std::nth_element(own.begin(), own.begin() + 2, own.end());
  t.own_ns = own[2] / n;
  c.codecs[describeCompression(options)] = t;
}

void measureDataCopy(Calibration& c) {
  constexpr size_t kBytes = size_t{8} << 20;
  std::vector<char> from(kBytes, 1), to(kBytes);
  c.data_ns_per_byte = medianNs(5, [&] { std::memcpy(to.data(), from.data(), kBytes); }) / kBytes;
}

// The key of the job's step overhead on this calibration's hosts.
std::string overheadKeyOf(const JobSpec& job, const Calibration& c) {
  return stepOverheadKey(ranksPerHost(job, c.cores), modelSignature(job));
}

constexpr int kReferenceRuns = 3;

// The job's own model, data parallel on `ranks` ranks of this machine, a short run without
// evaluations, faults or checkpoints: the reference of a step's fixed cost.
JobSpec referenceJob(const JobSpec& job, int ranks) {
  JobSpec ref = job;
  ParallelSpec& p = ref.parallel;
  p.ranks = ranks;
  p.strategy = "allreduce";
  p.pipeline = p.tensor = p.microbatches = 1;
  p.zero = 0;
  p.sequence_parallel = false;
  p.stage_layers.clear();
  ref.compression = {};
  ref.fault = {};
  ref.faults.clear();
  ref.launch = placementOf(job);
  ref.train.max_steps = 40;
  ref.train.eval_every = 0;
  ref.train.sample_chars = 0;
  ref.train.checkpoint_path.clear();
  ref.train.max_restarts = 0;
  return ref;
}

// A run's step rows, measured as a prediction's (storage/analysis/step_measure.h).
struct MeasuredSteps : RunObserver {
  StepMeasurer measurer;
  void onStep(const StepRow& s) override { measurer.add(s); }
};

// A real run of `ref` on this machine: its step period and median phases.
MeasuredStep measuredStep(const JobSpec& ref, const CalibrateOptions& options) {
  const PrivateDir dir;
  LaunchOptions launch;
  launch.db_path = dir.path() + "/runs.db";
  launch.worker_path = options.bench.worker_path;
  JobRunner runner(launch);
  MeasuredSteps steps;
  const RunOutcome outcome = runner.run(ref, "", steps);
  if (outcome.status != "done")
    throw std::runtime_error("the calibration's reference run (" +
                             std::to_string(ref.parallel.ranks) +
                             " ranks) failed: " + outcome.error);
  return steps.measurer.result();
}

// What a step spends past its own compute (data, passes, codec, update): its sync, exposed.
double exposedSyncSeconds(double step_s, const std::optional<PhaseTimes>& phases) {
  return phases ? step_s - 1e-9 * static_cast<double>(phaseSum(*phases, PhaseKind::kCompute)) : 0;
}

// Between hosts the link is most of a reference step, and the bench's best batches run it
// faster than a real step's sustained sync: the link's fits are scaled to what the run's
// own sync took (so a layout that hardly uses the link does not inherit the difference as a
// fixed cost). Returns the scale.
double fitLinkToRun(const JobSpec& ref, Calibration& have, const MeasuredStep& real,
                    const Prediction& simulated) {
  return scaleLinks(have, linkKey(ref, ref.parallel.algorithm),
                    exposedSyncSeconds(real.step_s, real.phases),
                    exposedSyncSeconds(simulated.step_s, simulated.phases));
}

}  // namespace

std::string defaultCalibrationPath() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  const char* home = std::getenv("HOME");
  const std::string base =
      xdg && *xdg ? std::string(xdg) : std::string(home ? home : ".") + "/.local/share";
  return base + "/ranklab/calibration/" + thisMachine().machine + ".json";
}

Calibration thisMachine() {
  Calibration c;
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  c.machine = name;
  c.cpu = cpuModel();
  c.cores = std::max(1u, std::thread::hardware_concurrency());
  return c;
}

Calibration loadCalibration(const std::string& path) {
  if (access(path.c_str(), F_OK) != 0 && errno == ENOENT) return thisMachine();
  const ReadLimit limit{uint64_t{64} << 20, "calibrations"};
  return parseCalibration(readBoundedFile(path, limit), path);
}

void saveCalibration(const std::string& path, const Calibration& calibration) {
  const std::string dir = path.substr(0, path.find_last_of('/'));
  if (dir != path && !dir.empty()) ensurePrivateFolder(dir, "the calibration folder");
  const std::string text = calibrationJson(calibration);
  writeFileWhole(path, "the calibration", [&](std::ostream& out) {
    out << text;
    return static_cast<int64_t>(text.size());
  });
}

std::vector<std::string> missingFor(const JobSpec& job, const Calibration& have) {
  std::vector<std::string> missing;
  const int threads = blasThreadsFor(job.parallel, have.cores);
  const int rows = microRows(job);
  ModelParts parts(job);
  const int stages = parts.degrees().pipeline;
  for (int stage = 0; stage < stages; ++stage) {
    const Network& part = parts.part(stage, 0);
    for (const auto& layer : part.layers())
      if (!have.find(layerKey(*layer), rows, threads, nameText(job.amp.dtype)))
        missing.push_back(layerKey(*layer) + " at " + std::to_string(rows) + " rows");
    if (stage == stages - 1 && !have.find(lossKey(part), rows, threads, nameText(job.amp.dtype)))
      missing.push_back(lossKey(part) + " at " + std::to_string(rows) + " rows");
  }
  if (!have.update_ns_per_param.count(nameText(job.train.optimizer)))
    missing.push_back("the " + nameText(job.train.optimizer) + " update");
  if (job.compression.compresses() && !have.codecs.count(describeCompression(codecOptions(job))))
    missing.push_back("compression " + describeCompression(codecOptions(job)));
  if (have.data_ns_per_byte <= 0) missing.push_back("a batch's copy");
  for (const LinkNeed& need : linksFor(job))
    if (!hasLink(have, need))
      missing.push_back(need.key + " all-reduce on " + std::to_string(need.world) + " ranks");
  if (!have.step_overhead_ns.count(overheadKeyOf(job, have)))
    missing.push_back("a step's fixed cost, " + overheadKeyOf(job, have));
  return missing;
}

namespace {

// The machine's speed drifts over seconds (a shared VM's cores): each stage's layers are
// timed in rounds at different moments of the calibration, and each layer keeps the median
// of the rounds' medians.
constexpr int kLayerRounds = 3;

struct LayerRounds {
  ModelParts& parts;
  std::vector<int> stages;  // those with a layer not measured yet
  int rows, labels, threads;
  std::string precision;
  std::vector<Calibration> rounds;

  void time() {
    Calibration round;
    const int last = parts.degrees().pipeline - 1;
    for (int stage : stages)
      timePart(parts.part(stage, 0), stage == last, rows, labels, threads, precision, round);
    rounds.push_back(std::move(round));
  }
  void keepMedians(Calibration& have) const {
    if (rounds.empty()) return;
    for (LayerTiming t : rounds.front().layers) {
      std::vector<double> forward, backward;
      for (const Calibration& r : rounds) {
        const LayerTiming* same = r.find(t.layer, t.rows, t.threads, t.precision);
        forward.push_back(same->forward_ns);
        backward.push_back(same->backward_ns);
      }
      std::sort(forward.begin(), forward.end());
      std::sort(backward.begin(), backward.end());
      t.forward_ns = forward[forward.size() / 2];
      t.backward_ns = backward[backward.size() / 2];
      have.add(t);
    }
  }
};

// The all-reduces the job runs that the calibration lacks, measured where the job runs.
void measureLinks(const JobSpec& job, Calibration& have, const CalibrateOptions& options,
                  bool everything) {
  const auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  std::map<std::pair<std::string, std::string>, std::vector<int>> worlds;  // by key, algorithm
  for (const LinkNeed& need : linksFor(job))
    if (everything || !hasLink(have, need))
      worlds[{need.key, need.algorithm}].push_back(need.world);
  for (const auto& [named, sizes] : worlds) {
    const auto& [key, algorithm] = named;
    BenchLaunch launch = options.bench;
    launch.placement = placementOf(job);
    launch.worlds = sizes;
    launch.options.algorithms = {algorithm};
    launch.options.ranks_per_host = job.parallel.ranks_per_host;  // hierarchical's hosts
    launch.options.min_bytes = 4;
    launch.options.max_bytes = size_t{16} << 20;
    launch.options.seconds_per_size = 0.02;
    launch.options.repeats = 2;
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<AllreduceBenchRow> rows_measured = runAllreduceBenchmark(launch);
    for (int world : sizes) {
      std::vector<AllreduceBenchRow> mine;
      for (const AllreduceBenchRow& r : rows_measured)
        if (r.world == world) mine.push_back(r);
      const LinkFit fit = fitLink(key, world, mine);
      have.links.erase(
          std::remove_if(have.links.begin(), have.links.end(),
                         [&](const LinkFit& f) { return f.algorithm == key && f.world == world; }),
          have.links.end());
      have.links.push_back(fit);
    }
    say(key + " all-reduce on " + std::to_string(sizes.size()) + " world size(s): " +
        std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count())
            .substr(0, 4) +
        " s");
  }
}

// What the job's step costs: its layers, its update, a batch's copy, its all-reduces.
void calibrateCosts(const JobSpec& job, Calibration& have, const CalibrateOptions& options,
                    bool everything) {
  const int threads = blasThreadsFor(job.parallel, have.cores);
  kernels::setBlasThreads(threads);
  ModelParts parts(job);
  LayerRounds layers{parts,
                     {},
                     microRows(job),
                     job.data.dataset == DatasetKind::kText ? job.model.context : 1,
                     threads,
                     nameText(job.amp.dtype),
                     {}};
  for (int stage = 0; stage < parts.degrees().pipeline; ++stage) {
    bool known = !everything;
    for (const auto& layer : parts.part(stage, 0).layers())
      known = known && have.find(layerKey(*layer), layers.rows, threads, nameText(job.amp.dtype));
    if (!known) layers.stages.push_back(stage);
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (!layers.stages.empty()) layers.time();
  if (everything || !have.update_by_size.count(nameText(job.train.optimizer)))
    measureUpdate(job, have);
  if (everything || have.data_ns_per_byte <= 0) measureDataCopy(have);
  if (job.compression.compresses() &&
      (everything || !have.codecs.count(describeCompression(codecOptions(job))))) {
    if (job.compression.codec == "powersgd")
      measureLowRank(job, parts.part(0, 0), have);
    else
      measureCodec(job, parts.part(0, 0).parameterCount(), have);
  }
  if (!layers.stages.empty()) layers.time();
  measureLinks(job, have, options, everything);
  if (layers.stages.empty()) {
    have.measured = utcNow();
    return;
  }
  for (int round = 2; round < kLayerRounds; ++round) layers.time();
  layers.keepMedians(have);
  if (options.progress)
    options.progress(
        "layers of " + std::to_string(layers.stages.size()) + " stage(s) (" +
        std::to_string(layers.rows) + " rows, " + std::to_string(threads) + " threads), " +
        std::to_string(kLayerRounds) + " rounds: " +
        std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count())
            .substr(0, 4) +
        " s with what came between");
  have.measured = utcNow();
}

}  // namespace

void calibrateFor(const JobSpec& job, Calibration& have, const CalibrateOptions& options,
                  bool everything) {
  calibrateCosts(job, have, options, everything);
  if (everything || !have.step_overhead_ns.count(overheadKeyOf(job, have)))
    measureStepOverhead(job, have, options);
}

void measureStepOverhead(const JobSpec& job, Calibration& have, const CalibrateOptions& options) {
  // On hosts the job names, the reference runs there with all its ranks (its links cross them).
  const bool placed = !job.launch.hosts.empty() || !job.launch.hostfile.empty();
  const int ranks = placed ? job.parallel.ranks : ranksPerHost(job, have.cores);
  const JobSpec ref = referenceJob(job, ranks);
  const std::string key = overheadKeyOf(ref, have);
  calibrateCosts(ref, have, options, false);  // what it lacks; its links again below, per run
  have.step_overhead_ns.erase(key);
  have.step_overhead_params.erase(key);
  const auto t0 = std::chrono::steady_clock::now();
  // A run's step on a host its ranks share varies by tens of percent from one run to the
  // next, and so does the all-reduce the bench times: each reference run is paired with its
  // links measured just before it, and the pair whose difference is the median is kept, so
  // the fixed cost does not carry one moment's link into another's step.
  struct Pair {
    MeasuredStep measured;
    Prediction simulated;
    std::vector<LinkFit> links;
    double overhead() const { return measured.step_s - simulated.step_s; }
  };
  CalibrateOptions quiet = options;
  quiet.progress = nullptr;
  std::vector<Pair> pairs;
  for (int run = 0; run < kReferenceRuns; ++run) {
    measureLinks(ref, have, quiet, true);
    const Prediction simulated = predictRun(ref, have);
    pairs.push_back({measuredStep(ref, options), simulated, have.links});
  }
  std::sort(pairs.begin(), pairs.end(),
            [](const Pair& a, const Pair& b) { return a.overhead() < b.overhead(); });
  Pair kept = pairs[pairs.size() / 2];
  have.links = kept.links;
  char scaled[80] = "";
  if (placed) {
    const double scale = fitLinkToRun(ref, have, kept.measured, kept.simulated);
    kept.simulated = predictRun(ref, have);
    std::snprintf(scaled, sizeof scaled, " (the link's fit x%.2f to the run's own sync)", scale);
  }
  have.step_overhead_ns[key] = kept.overhead() * 1e9;
  ModelParts whole(ref);
  have.step_overhead_params[key] = static_cast<double>(whole.part(0, 0).parameterCount());
  char line[300];
  std::snprintf(line, sizeof line,
                "a step's fixed cost, %s: a real data-parallel run's step %.2f ms against %.2f ms "
                "simulated%s: %+.0f us: %.1f s",
                key.c_str(), kept.measured.step_s * 1e3, kept.simulated.step_s * 1e3, scaled,
                kept.overhead() * 1e6,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (options.progress) options.progress(line);
}

}  // namespace ranklab
