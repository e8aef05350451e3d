#include "engine/train/model_part.h"

#include <algorithm>
#include <stdexcept>

#include "engine/model/models.h"
#include "engine/model/part_values.h"
#include "engine/model/precision_of.h"
#include "engine/train/pipeline_schedule.h"

namespace ranklab {

namespace {

Shape sampleShape(const Dataset& data) {
  return {data.height, data.width, data.features / (data.height * data.width)};
}

bool headApart(const JobSpec& job) {
  return job.parallel.pipeline > 1;  // a GPT's head and its embedding on different stages
}

// The whole model's layers, made on the host without buffers: what a part is cut from.
ModelLayers wholeLayers(const JobSpec& job, const Dataset& train_set) {
  return modelLayers(job.model, sampleShape(train_set), train_set.classes, cpuDevice(),
                     headApart(job));
}

// The rank's layers on `device` (its slice of every layer under tensor parallelism, its
// stage's under a pipeline) and the whole model's index of the first. AMP's fp32 head is
// chosen on the whole model's layers, before the stages are cut.
std::pair<ModelLayers, size_t> partLayers(const JobSpec& job, const Dataset& train_set, int rank,
                                          int ranks, const ComputeDevice& device,
                                          TensorGroup* tensor) {
  ModelLayers layers = modelLayers(job.model, sampleShape(train_set), train_set.classes, device,
                                   headApart(job), tensor);
  setPrecisionOf(layers, precisionOf(job.amp.dtype), job.amp.head_fp32);
  if (job.parallel.pipeline == 1) return {std::move(layers), 0};
  const int stage = coordsOf(rank, degreesOf(job, ranks)).stage;
  const std::vector<size_t> bounds = stageBoundsOf(job, layers);
  ModelLayers stage_layers;
  for (size_t l = bounds[stage]; l < bounds[stage + 1]; ++l)
    stage_layers.push_back(std::move(layers[l]));
  return {std::move(stage_layers), bounds[stage]};
}

bool isWholeModel(const JobSpec& job, const TensorGroup* tensor) {
  return job.parallel.pipeline == 1 && !tensor;
}

}  // namespace

std::vector<size_t> stageBoundsOf(const JobSpec& job, const ModelLayers& layers) {
  const ParallelSpec& p = job.parallel;
  if (p.pipeline == 1) return {0, layers.size()};
  return p.stage_layers.empty() ? stageBoundaries(layers, p.pipeline)
                                : stageBoundaries(layers, p.stage_layers);
}

LayoutDegrees degreesOf(const JobSpec& job, int ranks) {
  const ParallelSpec& p = job.parallel;
  return {ranks / (p.pipeline * p.tensor), p.pipeline, p.tensor};
}

// Every rank draws the whole model from the seed, one layer at a time on the host, so the
// parts hold one model's parameters; its device holds its part alone.
Network stageModel(const JobSpec& job, const Dataset& train_set, int rank, int ranks,
                   const ComputeDevice& device, TensorGroup* tensor, PartValues values) {
  auto [layers, first] = partLayers(job, train_set, rank, ranks, device, tensor);
  if (isWholeModel(job, tensor)) {
    Network model(std::move(layers), job.train.seed, device);
    model.setDropoutStream(job.train.seed, rank);
    return model;
  }
  std::vector<float> drawn;
  if (values == PartValues::kDrawn) {
    ModelLayers whole = wholeLayers(job, train_set);
    drawn = drawPartValues(whole, layers, job.train.seed);
  }
  Network part(std::move(layers), Network::PartOfModel{first}, device);
  if (values == PartValues::kDrawn) device.upload(part.params(), drawn.data(), drawn.size());
  part.setDropoutStream(job.train.seed, rank);
  return part;
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

ModelPartMap mapModelPart(const JobSpec& job, const Dataset& train_set, TensorGroup* tensor,
                          const Network& part) {
  ModelPartMap map;
  if (isWholeModel(job, tensor)) {
    map.whole_model = part.describe();
    map.whole_count = part.parameterCount();
    return map;
  }
  const ModelLayers whole = wholeLayers(job, train_set);
  map.whole_model = describeLayers(whole);
  map.whole_count = parameterCountOf(whole);
  map.index = wholeIndexOfPart(whole, part.layers());
  return map;
}

std::vector<MatrixBlock> weightMatrices(const ModelLayers& layers, size_t first, size_t end) {
  std::vector<MatrixBlock> blocks;
  size_t offset = 0;
  for (size_t l = first; l < end; ++l) {
    for (const ParamTensor& t : layers[l]->paramTensors()) {
      if (t.rows > 0 && t.size % static_cast<size_t>(t.rows) == 0)
        blocks.push_back({offset, t.rows, static_cast<int>(t.size / static_cast<size_t>(t.rows))});
      offset += t.size;
    }
  }
  return blocks;
}

std::vector<MatrixBlock> weightMatrices(const Network& model) {
  return weightMatrices(model.layers(), 0, model.layers().size());
}

}  // namespace ranklab
