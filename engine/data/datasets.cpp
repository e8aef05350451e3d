#include "engine/data/datasets.h"

#include <cmath>
#include <numbers>
#include <random>

#include "engine/data/text_dataset.h"

namespace ranklab {

namespace {

Dataset pointSet(int64_t count, int classes) {
  Dataset d;
  d.count = count;
  d.features = 2;
  d.classes = classes;
  d.images.resize(static_cast<size_t>(count) * 2);
  d.labels.resize(count);
  return d;
}

}  // namespace

Dataset makeSpirals(int64_t count, int arms, double noise, uint64_t seed) {
  Dataset d = pointSet(count, arms);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> radius(0.0, 1.0);
  std::normal_distribution<double> jitter(0.0, 1.0);
  for (int64_t i = 0; i < count; ++i) {
    const int arm = static_cast<int>(i % arms);
    const double r = radius(rng);
    // Each arm turns about 0.64 times around the centre, arms evenly spaced in angle.
    const double theta = 4.0 * r + 2.0 * std::numbers::pi * arm / arms;
    d.images[2 * i] = static_cast<float>(r * std::cos(theta) + noise * jitter(rng));
    d.images[2 * i + 1] = static_cast<float>(r * std::sin(theta) + noise * jitter(rng));
    d.labels[i] = static_cast<uint8_t>(arm);
  }
  return d;
}

Dataset makeMoons(int64_t count, double noise, uint64_t seed) {
  Dataset d = pointSet(count, 2);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> angle(0.0, std::numbers::pi);
  std::normal_distribution<double> jitter(0.0, 1.0);
  for (int64_t i = 0; i < count; ++i) {
    const int moon = static_cast<int>(i % 2);
    const double t = angle(rng);
    // The upper moon is centred at (0, 0); the lower one at (1, 0.5), upside down.
    const double x = moon == 0 ? std::cos(t) : 1.0 - std::cos(t);
    const double y = moon == 0 ? std::sin(t) : 0.5 - std::sin(t);
    d.images[2 * i] = static_cast<float>(x + noise * jitter(rng));
    d.images[2 * i + 1] = static_cast<float>(y + noise * jitter(rng));
    d.labels[i] = static_cast<uint8_t>(moon);
  }
  return d;
}

DataSplits loadJobData(const DataSpec& data, uint64_t seed, int context) {
  // The test set is its own draw from a different stream of the same seed.
  const uint64_t test_seed = seed ^ 0x5eed7e57ULL;
  switch (data.dataset) {
    case DatasetKind::kFashionMnist:
      return {loadFashionMnist(data.path, "train", data.train_limit),
              loadFashionMnist(data.path, "t10k", data.test_limit)};
    case DatasetKind::kSpirals:
      return {makeSpirals(data.samples, data.arms, data.noise, seed),
              makeSpirals(data.test_samples, data.arms, data.noise, test_seed)};
    case DatasetKind::kMoons:
      return {makeMoons(data.samples, data.noise, seed),
              makeMoons(data.test_samples, data.noise, test_seed)};
    case DatasetKind::kText: {
      TextSplits text = loadText(data.path, context);
      return {std::move(text.train), std::move(text.validation)};
    }
  }
  throw DataError("data.dataset: no loader for " + nameText(data.dataset));
}

}  // namespace ranklab
