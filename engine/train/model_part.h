// This rank's part of the model (its tensor slice's pipeline stage), built alone and given
// its values from the whole model every rank draws from the seed (part_values.h), and
// where each of the part's parameters sits in that whole model: a checkpoint holds the
// whole model, so a split run saves and resumes on any layout that cuts the same whole
// model (another data-parallel degree among them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/codecs/codec.h"
#include "engine/data/idx_dataset.h"
#include "engine/job/job_spec.h"
#include "engine/model/network.h"
#include "engine/model/tensor_group.h"
#include "engine/train/parallel_layout.h"

namespace ranklab {

// The layout of `ranks` training ranks the job asks for.
LayoutDegrees degreesOf(const JobSpec& job, int ranks);

// Where the job's pipeline cuts `layers` (a slice's, as its rank builds them, or the whole
// model's): stages + 1 layer indices (pipeline_schedule.h), {0, size} without a pipeline.
std::vector<size_t> stageBoundsOf(const JobSpec& job, const ModelLayers& layers);

// Rank `rank`'s part of the job's model on `device`: the whole model, under tensor
// parallelism its slice of every layer (`tensor`, null otherwise), under a pipeline the stage
// its place in the layout gives it (of its slice: each stage's slices cut the same layers, as
// in Megatron), with the job's dropout stream and AMP precision. The device allocates the
// part alone; the whole model is drawn on the host one layer at a time.
// kUnset: a split part's values are left for the caller (a pipeline's micro-batch copy,
// bound to its stage's buffers), not drawn.
enum class PartValues { kDrawn, kUnset };
Network stageModel(const JobSpec& job, const Dataset& train_set, int rank, int ranks,
                   const ComputeDevice& device, TensorGroup* tensor,
                   PartValues values = PartValues::kDrawn);

// Where a part's parameters sit in the whole model: part[i] = whole[index[i]]. A tensor
// every slice replicates appears in each slice's part, at the same whole index.
struct ModelPartMap {
  std::string whole_model;      // the whole model's describe()
  size_t whole_count = 0;       // its parameters
  std::vector<uint64_t> index;  // empty: the part is the whole model
  bool isWhole() const { return index.empty(); }
  // The part of `whole` (whole_count values).
  std::vector<float> partOf(const std::vector<float>& whole) const;
  // Writes `part` (index.size() values) where it sits in `whole`.
  void placeInWhole(const float* part, std::vector<float>& whole) const;
};

// The map of `part` (a rank's stageModel()): each of its tensors cut from the whole model's
// indices by the part it says it holds, as stageModel cuts the drawn values, so the map
// follows every way a model is split without a second description of the splits.
ModelPartMap mapModelPart(const JobSpec& job, const Dataset& train_set, TensorGroup* tensor,
                          const Network& part);

// The matrices inside the flat buffer (rows, the rest), for codecs that use shapes: a Linear
// weight is (out, in), a Conv2d kernel (out, in*k*k), a GPT block's Linears theirs, an
// embedding table (vocab or positions, width); as PyTorch's PowerSGD hook, every tensor of
// two dimensions.
std::vector<MatrixBlock> weightMatrices(const Network& model);
// The same for layers [first, end) of a model's layers, offsets from the first's.
std::vector<MatrixBlock> weightMatrices(const ModelLayers& layers, size_t first, size_t end);

}  // namespace ranklab
