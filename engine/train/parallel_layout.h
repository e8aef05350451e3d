// How the training ranks divide the work: data × pipeline × tensor groups, each with its own
// sub-communicator. Ranks are numbered as in Megatron-LM: the ranks of one tensor-parallel
// group are adjacent (they exchange the most), then the stages of one pipeline, then the
// data-parallel replicas: rank = (data * pipeline + stage) * tensor + slice.
#pragma once

#include <memory>
#include <string>

#include "comm/communicator.h"

namespace ranklab {

struct LayoutDegrees {
  int data = 1, pipeline = 1, tensor = 1;
  int product() const { return data * pipeline * tensor; }
  std::string str() const;  // "data 2 x pipeline 2 x tensor 1"
};

// Where one rank sits in the layout.
struct LayoutCoords {
  int data = 0;   // which replica
  int stage = 0;  // which pipeline stage
  int slice = 0;  // which tensor-parallel slice
  bool operator==(const LayoutCoords&) const = default;
};

LayoutCoords coordsOf(int rank, const LayoutDegrees& degrees);
int rankOf(const LayoutCoords& coords, const LayoutDegrees& degrees);

class ParallelLayout {
 public:
  // Collective over `ranks`: splits them into the three families of groups (a group that
  // spans every rank is `ranks` itself, nothing split). Throws std::invalid_argument naming
  // both numbers when the degrees' product is not ranks.size().
  ParallelLayout(Communicator& ranks, LayoutDegrees degrees);

  const LayoutDegrees& degrees() const { return degrees_; }
  const LayoutCoords& coords() const { return coords_; }
  // Same stage and slice, one rank per replica: where gradients are combined and the data
  // is divided. Ordered by replica.
  Communicator& dataGroup() { return *data_; }
  // One replica's stages, ordered by stage: activations forward, gradients backward.
  Communicator& pipelineGroup() { return *pipeline_; }
  // One stage's slices, ordered by slice: the tensor-parallel all-reduces.
  Communicator& tensorGroup() { return *tensor_; }

 private:
  Communicator* group(Communicator& ranks, int size, int color, int key,
                      std::unique_ptr<Communicator>& owned);

  LayoutDegrees degrees_;
  LayoutCoords coords_;
  std::unique_ptr<Communicator> owned_data_, owned_pipeline_, owned_tensor_;
  Communicator* data_ = nullptr;
  Communicator* pipeline_ = nullptr;
  Communicator* tensor_ = nullptr;
};

}  // namespace ranklab
