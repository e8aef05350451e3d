#include "engine/sim/step_actions.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "comm/codecs/codec.h"
#include "comm/codecs/powersgd.h"
#include "engine/model/transformer_block.h"
#include "engine/sim/part_timing.h"
#include "engine/train/gradient_sync.h"
#include "engine/train/model_part.h"
#include "engine/train/pipeline_schedule.h"
#include "engine/train/thread_policy.h"
#include "engine/train/traffic_formula.h"

namespace ranklab {

namespace {

constexpr int kData = 0, kForward = 1, kBackward = 2, kComm = 5, kUpdate = 6;  // kStepPhaseNames
constexpr int kBackwardTag = 1 << 20;  // a gradient's message; an activation's is its micro

SimAction compute(int phase, double ns, int pass = 0) {
  SimAction a;
  a.kind = ActionKind::kCompute;
  a.phase = phase;
  a.ns = ns;
  a.pass = pass;
  return a;
}

SimAction collective(GroupKind group, double ns, int64_t bytes, ByteClass cls,
                     CollectiveCount counts) {
  SimAction a;
  a.kind = ActionKind::kCollective;
  a.group = group;
  a.ns = ns;
  a.bytes = bytes;
  a.bytes_class = cls;
  a.counts = counts;
  return a;
}

// A message to or from the neighbouring stage `offset` ranks away (a stage is `tensor` ranks).
SimAction message(ActionKind kind, int offset, int tag, int64_t bytes, double ns) {
  SimAction a;
  a.kind = kind;
  a.peer = offset;
  a.tag = tag;
  a.bytes = bytes;
  a.ns = ns;
  a.bytes_class = ByteClass::kPipeline;
  return a;
}

// The slices' collectives in one forward or backward pass of a part: a GPT block's two each
// way (attention's and the MLP's), and each f or g (one all-reduce, in one direction).
int sliceCollectives(const Network& part, bool forward) {
  int n = 0, single = 0;
  for (const auto& layer : part.layers()) {
    if (dynamic_cast<const TransformerBlock*>(layer.get()))
      n += 2;
    else if (layer->communicates())
      ++single;
  }
  return n + (forward ? (single + 1) / 2 : single / 2);
}

void checkModelled(const JobSpec& job) {
  const std::string& s = job.parallel.strategy;
  if (s != "allreduce")
    throw std::invalid_argument("parallel.strategy = \"" + s +
                                "\" is not simulated yet (simulate models \"allreduce\")");
  if (job.train.device != "cpu")
    throw std::invalid_argument("train.device = \"" + job.train.device +
                                "\" is not simulated yet (simulate models \"cpu\")");
}

}  // namespace

std::string linkKey(const JobSpec& job, const std::string& algorithm) {
  std::string hosts = job.launch.hostfile.empty() ? "" : "hostfile " + job.launch.hostfile;
  for (const std::string& host : job.launch.hosts) hosts += (hosts.empty() ? "" : ",") + host;
  return hosts.empty() ? algorithm : algorithm + " over " + hosts;
}

std::string modelSignature(const JobSpec& job) {
  const ModelSpec& m = job.model;
  std::string text = nameText(m.kind);
  const auto list = [](const std::vector<int>& v) {
    std::string t;
    for (int x : v) t += (t.empty() ? "" : ",") + std::to_string(x);
    return "[" + t + "]";
  };
  if (m.kind == ModelKind::kMlp) text += " " + list(m.layers);
  if (m.kind == ModelKind::kCnn)
    text += " " + list(m.channels) + " k" + std::to_string(m.kernel_size);
  if (m.kind == ModelKind::kGpt)
    text += " " + std::to_string(m.blocks) + "x" + std::to_string(m.width) + " h" +
            std::to_string(m.heads) + " t" + std::to_string(m.context);
  return text + " batch " + std::to_string(job.train.batch_size) + " " +
         nameText(job.data.dataset) + " " + linkKey(job, job.parallel.algorithm);
}

int ranksPerHost(const JobSpec& job, int cores) {
  const int ranks = job.parallel.ranks;
  int most = 0;
  for (const std::string& host : job.launch.hosts) {
    const size_t colon = host.rfind(':');
    most = std::max(most, colon == std::string::npos ? 1 : std::atoi(host.c_str() + colon + 1));
  }
  if (most > 0) return std::min(ranks, most);
  // A local launch puts every rank on this machine, whatever hosts ranks_per_host pretends.
  constexpr int kRanksOneMachineLaunches = 64;
  if (ranks <= kRanksOneMachineLaunches) return ranks;
  if (job.parallel.ranks_per_host > 0) return std::min(ranks, job.parallel.ranks_per_host);
  return std::max(1, cores);
}

StepModel::StepModel(const JobSpec& job, const Calibration& calibration, ModelParts& parts)
    : job_(job), calibration_(calibration), parts_(parts), degrees_(parts.degrees()) {
  checkModelled(job);
  const int here = ranksPerHost(job, calibration.cores);
  if (here < job.parallel.ranks)
    notes_.push_back("ranks on hosts of " + std::to_string(here) + " (" +
                     std::to_string(calibration.cores) + " cores each, as " + calibration.machine +
                     ")");
  threads_ = blasThreadsFor(job.parallel, calibration.cores, here);
  here_ = here;
  // Past the cores, a rank ready to compute waits for one (the replay queues them): a real
  // oversubscribed run's passes take their own time, its waits grow.
  if (here * threads_ > calibration.cores) at_once_ = std::max(1, calibration.cores / threads_);
  model_params_ = 0;
  for (int stage = 0; stage < degrees_.pipeline; ++stage)
    for (int slice = 0; slice < degrees_.tensor; ++slice)
      model_params_ += static_cast<double>(parts_.part(stage, slice).parameterCount());
  overhead_ns_ = stepOverheadNs(here);
  plans_.resize(static_cast<size_t>(degrees_.pipeline * degrees_.tensor));
  for (int stage = 0; stage < degrees_.pipeline; ++stage)
    for (int slice = 0; slice < degrees_.tensor; ++slice)
      plans_[stage * degrees_.tensor + slice] = planFor(stage, slice);
  plan_of_.resize(static_cast<size_t>(degrees_.product()));
  for (int rank = 0; rank < degrees_.product(); ++rank) {
    const LayoutCoords at = coordsOf(rank, degrees_);
    plan_of_[rank] = at.stage * degrees_.tensor + at.slice;
  }
}

double StepModel::stepOverheadNs(int here) {
  const std::string key = stepOverheadKey(here, modelSignature(job_));
  const auto found = calibration_.step_overhead_ns.find(key);
  if (found != calibration_.step_overhead_ns.end()) return found->second;
  // Another model or batch on hosts of as many ranks, the same all-reduce: the nearest
  // measure there is (a plan from a calibration it cannot add to).
  const std::string prefix = stepOverheadKey(here, "");
  const std::string algorithm = " " + job_.parallel.algorithm;
  for (const auto& [other, ns] : calibration_.step_overhead_ns) {
    const bool same_host = other.rfind(prefix, 0) == 0;
    const bool same_sync =
        other.size() >= algorithm.size() &&
        other.compare(other.size() - algorithm.size(), algorithm.size(), algorithm) == 0;
    if (!same_host || !same_sync) continue;
    // It grows with the parameters synced (as a slice pays its share): scaled by this
    // model's against the reference's, where the file says how many that held.
    const auto params = calibration_.step_overhead_params.find(other);
    const double scale = params != calibration_.step_overhead_params.end() && params->second > 0
                             ? model_params_ / params->second
                             : 1.0;
    char times[32];
    std::snprintf(times, sizeof times, "%.2f", scale);
    notes_.push_back("a step's fixed cost for " + key + " taken from " + other + ", x" + times +
                     " for its parameters");
    return ns * scale;
  }
  notes_.push_back("a step's fixed cost for " + key + " not measured (ranklab calibrate)");
  return 0;
}

int StepModel::groupSize(GroupKind kind) const {
  switch (kind) {
    case GroupKind::kData:
      return degrees_.data;
    case GroupKind::kTensor:
      return degrees_.tensor;
    case GroupKind::kPipeline:
      return degrees_.pipeline;
    case GroupKind::kTied:
      return 2;
    default:
      return degrees_.product();
  }
}

int StepModel::groupOf(int rank, GroupKind kind) const {
  const LayoutCoords at = coordsOf(rank, degrees_);
  switch (kind) {
    case GroupKind::kData:
      return at.stage * degrees_.tensor + at.slice;
    case GroupKind::kTensor:
      return at.data * degrees_.pipeline + at.stage;
    case GroupKind::kPipeline:
    case GroupKind::kTied:
      return at.data * degrees_.tensor + at.slice;
    default:
      return 0;
  }
}

double StepModel::computeNs(const Network& part, bool last_stage, int rows, bool forward) {
  const std::string precision = nameText(job_.amp.dtype);
  double ns = 0;
  const auto add = [&](const std::string& key, double macs) {
    if (const LayerTiming* t = calibration_.find(key, rows, threads_, precision)) {
      ns += forward ? t->forward_ns : t->backward_ns;
      return;
    }
    const auto fit = fittedCost(calibration_, layerKind(key), macs, threads_, precision);
    if (!fit)
      throw std::invalid_argument("no calibration for " + key + " at " + std::to_string(rows) +
                                  " rows, " + std::to_string(threads_) + " threads, " + precision +
                                  " on " + calibration_.machine +
                                  ": run ranklab calibrate with this job");
    notes_.push_back(key + " at " + std::to_string(rows) + " rows: fitted from its kind");
    ns += forward ? fit->forward_ns : fit->backward_ns;
  };
  for (const auto& layer : part.layers()) add(layerKey(*layer), layerMacs(*layer, rows));
  if (last_stage) add(lossKey(part), static_cast<double>(rows) * part.positions() * part.classes());
  return ns;
}

// The gradient encoded, moved as its codec's collective moves payloads, decoded
// (comm/codecs/compressed_allreduce.h): the rank's own work first (momentum correction, error
// feedback, its own encode and decode), then a ring that encodes each of its chunks once and
// decodes (2d - 1) of them, summed payloads decoded once, or every rank's payload decoded.
void StepModel::compressedSync(std::vector<SimAction>& out, const Network& part) {
  constexpr int kCompress = 3;  // kStepPhaseNames
  const CodecOptions options = codecOptions(job_);
  const std::string key = describeCompression(options);
  const auto found = calibration_.codecs.find(key);
  if (found == calibration_.codecs.end())
    throw std::invalid_argument("no calibration of compression " + key + " on " +
                                calibration_.machine + ": run ranklab calibrate with this job");
  const CodecTiming& c = found->second;
  if (options.codec == "powersgd") return lowRankSync(out, part, c);
  const double floats = static_cast<double>(part.parameterCount());
  const int d = degrees_.data;
  const double payload = c.payload * floats;
  const CodecCollective kind = makeCodec(options, 0)->collective();
  const bool ring = kind == CodecCollective::kRing;
  // A ring codec without error feedback sends raw chunks: no encode of its own first.
  const double own_ns = c.own_ns > 0 ? c.own_ns : c.encode_ns + c.decode_ns;
  double ns = ring && !options.error_feedback
                  ? std::max(0.0, own_ns - c.encode_ns - c.decode_ns) * floats
                  : own_ns * floats;
  double moved = payload;  // the all-reduce's bytes
  int64_t sent = static_cast<int64_t>(payload * 2 * (d - 1) / d);
  if (ring) {
    ns += (c.encode_ns + c.decode_ns * (2.0 * d - 1) / d) * floats;
  } else if (kind == CodecCollective::kAllgather) {
    ns += c.decode_ns * floats * d;
    moved = payload * d / 2;  // d payloads gathered: a ring's one pass over all of them
    sent = static_cast<int64_t>(payload * (d - 1));
  } else {
    ns += c.decode_ns * floats;
  }
  out.push_back(compute(kCompress, ns));
  out.push_back(collective(GroupKind::kData, linkNs(job_.parallel.algorithm, d, moved), sent,
                           ByteClass::kData, CollectiveCount::kAllreduce));
  out.back().raw_bytes = rawSyncBytes(floats);
}

// PowerSGD: its products on the rank's cores, then two all-reduces of the small matrices (P
// with the uncompressed rest, then Q), sized by the engine's own PowerSgd for the part.
void StepModel::lowRankSync(std::vector<SimAction>& out, const Network& part,
                            const CodecTiming& c) {
  constexpr int kCompress = 3;  // kStepPhaseNames
  const CodecOptions options = codecOptions(job_);
  const PowerSgd sizes(weightMatrices(part), part.parameterCount(), options.rank,
                       options.warm_start, options.seed);
  const double first = static_cast<double>(sizes.firstFloats()) * 4;
  const double second = static_cast<double>(sizes.secondFloats()) * 4;
  const int d = degrees_.data;
  out.push_back(compute(kCompress, c.own_ns * static_cast<double>(part.parameterCount())));
  const std::string& algorithm = job_.parallel.algorithm;
  out.push_back(collective(GroupKind::kData,
                           linkNs(algorithm, d, first) + linkNs(algorithm, d, second),
                           static_cast<int64_t>((first + second) * 2 * (d - 1) / d),
                           ByteClass::kData, CollectiveCount::kAllreduce));
  out.back().raw_bytes = rawSyncBytes(static_cast<double>(part.parameterCount()));
}

// What a ring all-reduce of the uncompressed gradient sends (the engine's bytes_raw).
int64_t StepModel::rawSyncBytes(double floats) const {
  const int d = degrees_.data;
  return static_cast<int64_t>(2.0 * (d - 1) / d * floats * sizeof(float));
}

double StepModel::linkNs(const std::string& algorithm, int world, double bytes) {
  if (world <= 1) return 0;
  const auto fit = calibration_.link(linkKey(job_, algorithm), world);
  if (!fit)
    throw std::invalid_argument("no calibration of parallel.algorithm = \"" +
                                linkKey(job_, algorithm) + "\" on " + calibration_.machine +
                                ": run ranklab calibrate with this job");
  return fit->at(bytes);
}

// What one (stage, slice) part's step costs and sends, worked out once for its plan.
struct StepModel::PartCosts {
  Network* part = nullptr;
  int stage = 0;
  bool last = false;
  int rows = 0;             // a micro-batch's
  double fwd = 0, bwd = 0;  // a micro-batch's passes
  TrafficFormula traffic;
  int tf = 0, tb = 0;       // the slices' sums in each forward and backward pass
  int64_t tensor_each = 0;  // the formula's bytes spread evenly over them
  int64_t tensor_left = 0;  // one more byte for the first few
  double tensor_ns = 0;
};

RankPlan StepModel::planFor(int stage, int slice) {
  const ParallelSpec& p = job_.parallel;
  PartCosts c;
  c.part = &parts_.part(stage, slice);
  c.stage = stage;
  c.last = stage == degrees_.pipeline - 1;
  c.rows = std::max(1, job_.train.batch_size / std::max(1, p.microbatches));
  c.fwd = computeNs(*c.part, c.last, c.rows, true);
  c.bwd = computeNs(*c.part, c.last, c.rows, false);
  c.traffic = trafficFormula(job_, *c.part, {0, stage, slice}, degrees_);
  c.tf = degrees_.tensor > 1 ? sliceCollectives(*c.part, true) : 0;
  c.tb = degrees_.tensor > 1 ? sliceCollectives(*c.part, false) : 0;
  const int64_t sums = int64_t{p.microbatches} * job_.train.accumulate_steps * (c.tf + c.tb);
  const int64_t total = c.traffic.tensor.value_or(0);
  c.tensor_each = sums > 0 ? total / sums : 0;
  c.tensor_left = total - c.tensor_each * sums;
  const double t = degrees_.tensor;
  c.tensor_ns = linkNs("ring", degrees_.tensor, c.tensor_each * t / std::max(1.0, 2 * (t - 1)));
  RankPlan plan;
  plan.stage = stage;
  plan.slice = slice;
  plan.counts_samples = c.last && slice == 0;
  addPasses(c, plan.actions);
  addSync(c, plan.actions);
  return plan;
}

// A pass with its slices' sums between its layers, as the engine meets them: the pass's
// compute split evenly into one piece before each sum (a rank sharing cores waits for one
// again after each), then the sums' bytes spread over them.
void StepModel::addPass(PartCosts& c, bool forward, int pass, std::vector<SimAction>& out) {
  const int n = forward ? c.tf : c.tb;
  const double ns = forward ? c.fwd : c.bwd;
  const int phase = forward ? kForward : kBackward;
  const int pieces = std::max(1, n);
  for (int i = 0; i < pieces; ++i) {
    out.push_back(compute(phase, ns / pieces, pass));
    if (n == 0) break;  // a pass without sums: one piece, nothing after it
    const int64_t bytes = c.tensor_each + (c.tensor_left > 0 ? 1 : 0);
    c.tensor_left -= c.tensor_left > 0 ? 1 : 0;
    out.push_back(collective(GroupKind::kTensor, c.tensor_ns, bytes, ByteClass::kTensor,
                             CollectiveCount::kAllreduce));
  }
}

void StepModel::addPasses(PartCosts& c, std::vector<SimAction>& out) {
  const ParallelSpec& p = job_.parallel;
  const Network& part = *c.part;
  const int64_t act = int64_t{c.rows} * static_cast<int64_t>(part.outputShape().size()) * 4;
  const int64_t grad = int64_t{c.rows} * static_cast<int64_t>(part.inputShape().size()) * 4;
  // With data.prefetch a loader thread copies the batch ahead and the step only takes it (a
  // real run's data phase: nil); without, the step copies it itself.
  const double data_ns = job_.data.prefetch > 0
                             ? 0.0
                             : calibration_.data_ns_per_byte * job_.train.batch_size *
                                   static_cast<double>(part.inputShape().size()) * 4;
  for (int k = 0; k < job_.train.accumulate_steps; ++k) {
    if (data_ns > 0) out.push_back(compute(kData, data_ns));
    if (degrees_.pipeline == 1) {
      for (int micro = 0; micro < p.microbatches; ++micro) {
        addPass(c, true, 0, out);
        addPass(c, false, 0, out);
      }
      continue;
    }
    addPipelinePasses(c, act, grad, out);
    // The stages share the step's loss: one float each.
    out.push_back(collective(GroupKind::kPipeline, linkNs("ring", degrees_.pipeline, 4), 0,
                             ByteClass::kPipeline, CollectiveCount::kAllreduce));
  }
}

// As PipelineSchedule::run moves them: a pass's input received, the pass, its output's send
// posted, the next pass's receive posted, the send waited for.
void StepModel::addPipelinePasses(PartCosts& c, int64_t act, int64_t grad,
                                  std::vector<SimAction>& out) {
  const ParallelSpec& p = job_.parallel;
  const int up = degrees_.tensor;  // the next stage's rank is a stage of slices away
  // Open MPI's eager limits: shared memory's 4 KB on one host, TCP's 64 KB between hosts.
  const bool placed = !job_.launch.hosts.empty() || !job_.launch.hostfile.empty();
  const int64_t eager = placed ? 64 << 10 : 4 << 10;
  // A message between stages: the ring's 2-rank fit is two hops of half the bytes each.
  const auto send = [&](int offset, int tag, int64_t bytes) {
    SimAction a =
        message(ActionKind::kSend, offset, tag, bytes, linkNs("ring", 2, 2.0 * bytes) / 2);
    a.rendezvous = bytes > eager;
    return a;
  };
  const auto incoming = [&](const PipelineSchedule::Pass& pass, ActionKind kind) {
    if (pass.forward && c.stage > 0) return std::optional(message(kind, -up, pass.micro, 0, 0));
    if (!pass.forward && !c.last)
      return std::optional(message(kind, up, kBackwardTag + pass.micro, 0, 0));
    return std::optional<SimAction>();
  };
  const auto passes =
      PipelineSchedule::passOrder(p.schedule, c.stage, degrees_.pipeline, p.microbatches);
  for (size_t k = 0; k < passes.size(); ++k) {
    const auto& pass = passes[k];
    if (k == 0)
      if (const auto post = incoming(pass, ActionKind::kPostRecv)) out.push_back(*post);
    if (const auto recv = incoming(pass, ActionKind::kRecv)) out.push_back(*recv);
    std::optional<SimAction> sent;
    if (pass.forward) {
      addPass(c, true, pass.micro + 1, out);
      if (!c.last) sent = send(up, pass.micro, act);
    } else {
      addPass(c, false, -(pass.micro + 1), out);
      if (c.stage > 0) sent = send(-up, kBackwardTag + pass.micro, grad);
    }
    if (sent) out.push_back(*sent);
    if (k + 1 < passes.size())
      if (const auto post = incoming(passes[k + 1], ActionKind::kPostRecv)) out.push_back(*post);
    if (sent) {
      sent->kind = ActionKind::kSendWait;
      out.push_back(*sent);
    }
  }
}

void StepModel::addSync(const PartCosts& c, std::vector<SimAction>& out) {
  const ParallelSpec& p = job_.parallel;
  SimAction straggle;  // where a slowed rank sleeps (the replay fills in its delay)
  straggle.kind = ActionKind::kSleep;
  straggle.phase = kBackward;
  out.push_back(straggle);
  // A GPT's token table: its copies on the first and last stage add each other's gradient.
  if (degrees_.pipeline > 1 && job_.model.kind == ModelKind::kGpt && (c.stage == 0 || c.last)) {
    int64_t table = 0;
    for (const ParamView& view : c.part->views())
      if (view.name == "embed.token" || view.name == "lm_head.weight")
        table += static_cast<int64_t>(view.size) * 4;
    out.push_back(collective(GroupKind::kTied, linkNs("ring", 2, table), table,
                             ByteClass::kPipeline, CollectiveCount::kAllreduce));
  }
  if (job_.amp.dtype != AmpDtype::kFp32)  // every rank skips together: one flag summed
    out.push_back(collective(GroupKind::kWorld, linkNs("ring", degrees_.product(), 4), 0,
                             ByteClass::kData, CollectiveCount::kAllreduce));
  const double grad_bytes = static_cast<double>(c.part->parameterCount()) * 4;
  if (degrees_.data > 1 && job_.compression.compresses()) {
    compressedSync(out, *c.part);
  } else if (degrees_.data > 1) {
    const double zero3 = p.zero == 3 ? 1.5 : 1.0;  // ZeRO 3 gathers the parameters once more
    const int64_t sent = c.traffic.data.value_or(
        static_cast<int64_t>(grad_bytes * 2 * (degrees_.data - 1) / degrees_.data));
    out.push_back(collective(
        GroupKind::kData, zero3 * linkNs(p.algorithm, degrees_.data, grad_bytes), sent,
        ByteClass::kData,
        p.zero > 0 ? CollectiveCount::kReduceScatterAllGather : CollectiveCount::kAllreduce));
  }
  if (job_.train.grad_clip > 0)  // the gradient's norm: one sum over every rank
    out.push_back(collective(GroupKind::kWorld, linkNs("ring", degrees_.product(), 4), 0,
                             ByteClass::kData, CollectiveCount::kAllreduce));
  const double updated = p.zero > 0 ? grad_bytes / 4 / degrees_.data : grad_bytes / 4;
  const std::optional<double> per_param =
      calibration_.updateNsPerParam(nameText(job_.train.optimizer), updated);
  if (!per_param)
    throw std::invalid_argument("no calibration of train.optimizer = \"" +
                                nameText(job_.train.optimizer) + "\" on " + calibration_.machine +
                                ": run ranklab calibrate");
  // What a real data-parallel step spends beyond its compute and the bench's all-reduce,
  // measured on hosts of as many ranks: waits on ranks not yet there at a collective,
  // telemetry, the cores' turns (the bench's back-to-back best shows none of it). It grows
  // with the part a rank holds: a tensor slice of half the model pays half of it. A
  // pipeline's stages alone meet no collective in the step (their sends pass one way).
  if (degrees_.data > 1 || degrees_.tensor > 1 || degrees_.product() == 1) {
    const double held =
        static_cast<double>(c.part->parameterCount()) / std::max(1.0, model_params_);
    SimAction fixed = compute(kComm, std::max(0.0, overhead_ns_) * std::min(1.0, held));
    fixed.shared = false;
    out.push_back(fixed);
  }
  out.push_back(compute(kUpdate, *per_param * updated));
}

}  // namespace ranklab
