#include "engine/data/shard_loader.h"

#include <cstring>
#include <numeric>
#include <random>

namespace ranklab {

ShardLoader::ShardLoader(const Dataset& data, int rank, int world, int batch_size, uint64_t seed)
    : data_(data),
      rank_(rank),
      world_(world),
      batch_size_(batch_size),
      seed_(seed),
      steps_per_epoch_(data.count / world / batch_size) {}

void ShardLoader::startEpoch(int epoch) {
  // Every rank draws the same permutation (same seed), then takes its own stride of it.
  std::vector<int64_t> permutation(data_.count);
  std::iota(permutation.begin(), permutation.end(), 0);
  std::mt19937_64 rng(seed_ * 1000003 + static_cast<uint64_t>(epoch));
  for (int64_t i = data_.count - 1; i > 0; --i) {  // Fisher-Yates: same on every platform
    const int64_t j = static_cast<int64_t>(rng() % static_cast<uint64_t>(i + 1));
    std::swap(permutation[i], permutation[j]);
  }
  order_.clear();
  for (int64_t i = rank_; i < data_.count; i += world_) order_.push_back(permutation[i]);
}

void ShardLoader::batch(int64_t step, float* images, uint8_t* labels) const {
  const size_t row_bytes = static_cast<size_t>(data_.features) * sizeof(float);
  for (int b = 0; b < batch_size_; ++b) {
    const int64_t index = order_[step * batch_size_ + b];
    std::memcpy(images + static_cast<size_t>(b) * data_.features, data_.image(index), row_bytes);
    const size_t per = static_cast<size_t>(data_.labels_per_sample);
    std::memcpy(labels + b * per, data_.labels.data() + index * per, per);
  }
}

}  // namespace ranklab
