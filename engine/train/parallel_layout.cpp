#include "engine/train/parallel_layout.h"

#include <stdexcept>

namespace ranklab {

std::string LayoutDegrees::str() const {
  return "data " + std::to_string(data) + " x pipeline " + std::to_string(pipeline) + " x tensor " +
         std::to_string(tensor);
}

LayoutCoords coordsOf(int rank, const LayoutDegrees& degrees) {
  LayoutCoords c;
  c.slice = rank % degrees.tensor;
  c.stage = rank / degrees.tensor % degrees.pipeline;
  c.data = rank / (degrees.tensor * degrees.pipeline);
  return c;
}

int rankOf(const LayoutCoords& coords, const LayoutDegrees& degrees) {
  return (coords.data * degrees.pipeline + coords.stage) * degrees.tensor + coords.slice;
}

ParallelLayout::ParallelLayout(Communicator& ranks, LayoutDegrees degrees) : degrees_(degrees) {
  if (degrees.data < 1 || degrees.pipeline < 1 || degrees.tensor < 1 ||
      degrees.product() != ranks.size()) {
    throw std::invalid_argument("parallel layout " + degrees.str() + " needs " +
                                std::to_string(degrees.product()) + " ranks, but there are " +
                                std::to_string(ranks.size()));
  }
  coords_ = coordsOf(ranks.rank(), degrees);
  const LayoutCoords& c = coords_;
  // Colours name the group (the coordinates a group shares); keys order it.
  data_ = group(ranks, degrees.data, c.stage * degrees.tensor + c.slice, c.data, owned_data_);
  pipeline_ =
      group(ranks, degrees.pipeline, c.data * degrees.tensor + c.slice, c.stage, owned_pipeline_);
  tensor_ =
      group(ranks, degrees.tensor, c.data * degrees.pipeline + c.stage, c.slice, owned_tensor_);
}

Communicator* ParallelLayout::group(Communicator& ranks, int size, int color, int key,
                                    std::unique_ptr<Communicator>& owned) {
  // Every rank takes this branch alike (size is the same everywhere): split is collective.
  if (size == ranks.size()) return &ranks;
  owned = ranks.split(color, key);
  return owned.get();
}

}  // namespace ranklab
