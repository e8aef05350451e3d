// Each rank's disjoint shard of a dataset, reshuffled every epoch from the seed.
// Every rank gets the same number of full batches, so synchronous ranks stay in step.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/data/idx_dataset.h"

namespace ranklab {

class ShardLoader {
 public:
  ShardLoader(const Dataset& data, int rank, int world, int batch_size, uint64_t seed);

  int64_t stepsPerEpoch() const { return steps_per_epoch_; }
  int batchSize() const { return batch_size_; }
  int labelsPerSample() const { return data_.labels_per_sample; }

  // Deals this epoch's permutation: rank r takes positions r, r + world, ...
  void startEpoch(int epoch);
  // Copies batch `step` of the current epoch into images (B, features) and labels
  // (B, labelsPerSample()).
  void batch(int64_t step, float* images, uint8_t* labels) const;

 private:
  const Dataset& data_;
  int rank_;
  int world_;
  int batch_size_;
  uint64_t seed_;
  int64_t steps_per_epoch_;
  std::vector<int64_t> order_;  // this rank's sample indices for the current epoch
};

}  // namespace ranklab
