#include "engine/sim/model_parts.h"

#include "engine/sim/silent_peers.h"
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
  d.labels_per_sample = job.data.dataset == "text" ? job.model.context : 1;
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

Network& ModelParts::part(int stage, int slice) {
  auto& built = parts_[{stage, slice}];
  if (!built) {
    const int rank = rankOf({0, stage, slice}, degrees_);
    built = std::make_unique<Built>(job_, shape_, rank, slice);
  }
  return built->net;
}

}  // namespace ranklab
