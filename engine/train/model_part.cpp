#include "engine/train/model_part.h"

#include <algorithm>
#include <stdexcept>

#include "engine/model/models.h"
#include "engine/model/precision_of.h"
#include "engine/model/tensor_parallel.h"
#include "engine/train/pipeline_schedule.h"
#include "kernels/cpu/mixed_gemm.h"

namespace ranklab {

namespace {

Shape sampleShape(const Dataset& data) {
  return {data.height, data.width, data.features / (data.height * data.width)};
}

Network wholeModel(const JobSpec& job, const Dataset& train_set, const ComputeDevice& device) {
  return makeModel(job.model, sampleShape(train_set), train_set.classes, job.train.seed, device,
                   job.parallel.pipeline > 1);
}

// The job's dropout stream and AMP precision on a model or a part of it.
Network setUp(Network model, const JobSpec& job, int rank) {
  model.setDropoutStream(job.train.seed, rank);
  model.setPrecision(precisionOf(job.amp.dtype), job.amp.head_fp32);
  return model;
}

// `whole` cut as stageModel says (AMP's fp32 head is chosen on the whole model, before the
// stages are cut).
Network cutPart(Network whole, const JobSpec& job, int rank, int ranks, TensorGroup* tensor) {
  if (tensor) whole = sliceForTensorParallel(whole, *tensor);
  whole = setUp(std::move(whole), job, rank);
  if (job.parallel.pipeline == 1) return whole;
  const int stage = coordsOf(rank, degreesOf(job, ranks)).stage;
  const std::vector<size_t> bounds = job.parallel.stage_layers.empty()
                                         ? stageBoundaries(whole, job.parallel.pipeline)
                                         : stageBoundaries(whole, job.parallel.stage_layers);
  return std::move(whole).takeStage(bounds[stage], bounds[stage + 1]);
}

// Floats hold integers exactly below 2^24: an index travels as two digits base 4096.
constexpr uint64_t kDigit = 4096;

}  // namespace

LayoutDegrees degreesOf(const JobSpec& job, int ranks) {
  const ParallelSpec& p = job.parallel;
  return {ranks / (p.pipeline * p.tensor), p.pipeline, p.tensor};
}

// Every rank draws the whole model from the seed first, so the parts hold one model's
// parameters.
Network stageModel(const JobSpec& job, const Dataset& train_set, int rank, int ranks,
                   const ComputeDevice& device, TensorGroup* tensor) {
  return cutPart(wholeModel(job, train_set, device), job, rank, ranks, tensor);
}

std::vector<float> ModelPartMap::partOf(const std::vector<float>& whole) const {
  if (isWhole()) return whole;
  std::vector<float> part(index.size());
  for (size_t i = 0; i < index.size(); ++i) part[i] = whole[index[i]];
  return part;
}

void ModelPartMap::placeInWhole(const float* part, std::vector<float>& whole) const {
  if (isWhole()) {
    std::copy(part, part + whole.size(), whole.begin());
    return;
  }
  for (size_t i = 0; i < index.size(); ++i) whole[index[i]] = part[i];
}

ModelPartMap mapModelPart(const JobSpec& job, const Dataset& train_set, int rank, int ranks,
                          TensorGroup* tensor, const Network& part) {
  ModelPartMap map;
  if (job.parallel.pipeline == 1 && !tensor) {
    map.whole_model = part.describe();
    map.whole_count = part.parameterCount();
    return map;
  }
  // On the host whatever the job's device: cutting only copies parameters.
  std::vector<float> digits[2];
  for (int d = 0; d < 2; ++d) {
    Network whole = wholeModel(job, train_set, cpuDevice());
    map.whole_model = whole.describe();
    map.whole_count = whole.parameterCount();
    float* values = whole.params();
    for (uint64_t i = 0; i < map.whole_count; ++i)
      values[i] = static_cast<float>(d == 0 ? i % kDigit : i / kDigit);
    Network cut = cutPart(std::move(whole), job, rank, ranks, tensor);
    digits[d].assign(cut.params(), cut.params() + cut.parameterCount());
  }
  if (digits[0].size() != part.parameterCount())
    throw std::logic_error("mapModelPart: the part's cut differs from the model's");
  map.index.resize(digits[0].size());
  for (size_t i = 0; i < map.index.size(); ++i) {
    map.index[i] =
        static_cast<uint64_t>(digits[1][i]) * kDigit + static_cast<uint64_t>(digits[0][i]);
  }
  return map;
}

std::vector<MatrixBlock> weightMatrices(const Network& model) {
  std::vector<MatrixBlock> blocks;
  for (const auto& view : model.views()) {
    if (view.rows > 0 && view.size % static_cast<size_t>(view.rows) == 0)
      blocks.push_back({view.offset, view.rows, static_cast<int>(view.size / view.rows)});
  }
  return blocks;
}

}  // namespace ranklab
