#include "engine/sim/model_parts.h"

#include "comm/silent_peers.h"
#include "engine/job/job_file.h"
#include "engine/train/memory_estimate.h"
#include "engine/train/model_part.h"

namespace ranklab {

Dataset shapeOnlyDataset(const JobSpec& job) {
  const DataShape shape = dataShapeOf(job);
  Dataset d;
  d.height = shape.sample.height;
  d.width = shape.sample.width;
  d.features = static_cast<int>(shape.sample.size());
  d.classes = shape.classes;
  d.labels_per_sample = job.data.dataset == DatasetKind::kText ? job.model.context : 1;
  return d;
}

// A part and the silent slice group it was cut with (its layers keep a reference to it).
struct ModelParts::Built {
  SilentPeers peers;
  TensorGroup group;
  Network net;
  Built(const JobSpec& job, const Dataset& shape, int rank, int slice)
      : peers(slice, job.parallel.tensor),
        group(peers, job.parallel.sequence_parallel),
        net(stageModel(job, shape, rank, job.parallel.ranks, cpuDevice(),
                       job.parallel.tensor > 1 ? &group : nullptr)) {}
};

ModelParts::ModelParts(const JobSpec& job)
    : job_(job), shape_(shapeOnlyDataset(job)), degrees_(degreesOf(job, job.parallel.ranks)) {}

ModelParts::~ModelParts() = default;

namespace {

// What a part depends on: the model, the data's shape, how it is cut and its precision.
std::string partKey(const JobSpec& job, int stage, int slice) {
  JobSpec cut;
  cut.model = job.model;
  cut.data = job.data;
  cut.train.seed = job.train.seed;
  cut.amp = job.amp;
  cut.parallel.pipeline = job.parallel.pipeline;
  cut.parallel.tensor = job.parallel.tensor;
  cut.parallel.sequence_parallel = job.parallel.sequence_parallel;
  cut.parallel.stage_layers = job.parallel.stage_layers;
  cut.parallel.ranks = job.parallel.pipeline * job.parallel.tensor;
  return toTomlText(cut) + "\n" + std::to_string(stage) + "/" + std::to_string(slice);
}

}  // namespace

Network& ModelParts::part(int stage, int slice) {
  static std::map<std::string, std::shared_ptr<Built>> kept;  // a simulation runs on one thread
  constexpr size_t kKeptParts = 64;
  auto& built = parts_[{stage, slice}];
  if (built) return built->net;
  const std::string key = partKey(job_, stage, slice);
  auto found = kept.find(key);
  if (found == kept.end()) {
    if (kept.size() >= kKeptParts) kept.clear();
    const int rank = rankOf({0, stage, slice}, degrees_);
    found = kept.emplace(key, std::make_shared<Built>(job_, shape_, rank, slice)).first;
  }
  built = found->second;
  return built->net;
}

}  // namespace ranklab
