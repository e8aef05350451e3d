// Each rank's part of a job's model, built as the rank builds it (stageModel: the whole model
// drawn, sliced, its stage taken) but with no peers: one per distinct (stage, slice), so a
// layout of 4,096 ranks builds as many parts as it has stages times slices. The simulator
// times them, reads their traffic from the engine's formula and their layers' shapes. Parts
// are kept for the process (the last few dozen): plan's hundreds of layouts cut the same
// few parts, and drawing a model's parameters is most of what building one costs.
#pragma once

#include <map>
#include <memory>
#include <utility>

#include "engine/data/datasets.h"
#include "engine/job/job_spec.h"
#include "engine/model/network.h"
#include "engine/model/tensor_group.h"
#include "engine/train/parallel_layout.h"

namespace ranklab {

// A data set's shape alone (no samples): what stageModel reads of it.
Dataset shapeOnlyDataset(const JobSpec& job);

class ModelParts {
 public:
  explicit ModelParts(const JobSpec& job);
  ~ModelParts();
  const LayoutDegrees& degrees() const { return degrees_; }
  // The part of the ranks at (stage, slice), built on first use.
  Network& part(int stage, int slice);

 private:
  struct Built;
  JobSpec job_;
  Dataset shape_;
  LayoutDegrees degrees_;
  std::map<std::pair<int, int>, std::shared_ptr<Built>> parts_;
};

}  // namespace ranklab
