// Shards are disjoint, cover the same number of steps on every rank, and reshuffle per epoch.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "engine/data/shard_loader.h"
#include "tests/support/thread_ranks.h"

namespace ranklab {
namespace {

using testing::numberedSet;

std::vector<int64_t> epochSamples(const ShardLoader& loader, int batch) {
  std::vector<float> x(batch * 2);
  std::vector<uint8_t> y(batch);
  std::vector<int64_t> seen;
  for (int64_t s = 0; s < loader.stepsPerEpoch(); ++s) {
    loader.batch(s, x.data(), y.data());
    for (int b = 0; b < batch; ++b) seen.push_back(static_cast<int64_t>(x[b * 2]));
  }
  return seen;
}

TEST(ShardLoader, RanksSeeDisjointShardsWithEqualSteps) {
  const Dataset data = numberedSet(103);
  const int world = 4, batch = 5;
  std::set<int64_t> all;
  size_t total = 0;
  for (int r = 0; r < world; ++r) {
    ShardLoader loader(data, r, world, batch, 9);
    EXPECT_EQ(loader.stepsPerEpoch(), 103 / world / batch);
    loader.startEpoch(1);
    const auto seen = epochSamples(loader, batch);
    total += seen.size();
    all.insert(seen.begin(), seen.end());
  }
  EXPECT_EQ(all.size(), total) << "a sample was dealt to two ranks";
}

TEST(ShardLoader, EpochsReshuffleDeterministically) {
  const Dataset data = numberedSet(200);
  ShardLoader a(data, 1, 2, 10, 5), b(data, 1, 2, 10, 5);
  a.startEpoch(1);
  b.startEpoch(1);
  const auto first = epochSamples(a, 10);
  EXPECT_EQ(first, epochSamples(b, 10));
  a.startEpoch(2);
  EXPECT_NE(first, epochSamples(a, 10));
}

}  // namespace
}  // namespace ranklab
