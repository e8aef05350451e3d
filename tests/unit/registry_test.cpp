// Every choice the job file offers is registered once, with a description and a factory:
// the schema's lists, the all-reduce, codec and strategy registries agree.
#include <gtest/gtest.h>

#include <set>

#include "comm/codecs/codec.h"
#include "comm/codecs/codec_traits.h"
#include "comm/collectives/allreduce_registry.h"
#include "engine/job/job_keys.h"
#include "engine/train/strategy_registry.h"

namespace ranklab {
namespace {

std::vector<std::string> schemaChoices(const char* path) {
  const JobKey* key = findJobKey(path);
  EXPECT_NE(key, nullptr) << path;
  return key ? key->choices : std::vector<std::string>{};
}

TEST(Registries, AlgorithmChoicesAreTheRegisteredAllreducesAndShmSharded) {
  std::vector<std::string> expected = allreduceAlgorithms();
  expected.push_back("shm-sharded");
  EXPECT_EQ(schemaChoices("parallel.algorithm"), expected);
  EXPECT_EQ(allreduceAlgorithmList(), "ring, mpi, hierarchical, shm, naive");
}

TEST(Registries, CodecChoicesAreTheRegisteredCodecs) {
  EXPECT_EQ(schemaChoices("compression.codec"), codecNames());
}

// The codecs' traits (the light half of the registry) name the registry's codecs, in its
// order; each key a trait names is a compression key of the job file, each reply a codec.
TEST(Registries, EveryCodecHasItsTraitsAndTheyNameRealKeysAndCodecs) {
  std::vector<std::string> names;
  for (const auto& t : codecTraits()) names.push_back(t.name);
  EXPECT_EQ(names, codecNames());
  for (const auto& t : codecTraits()) {
    for (const auto& key : t.keys)
      EXPECT_NE(findJobKey("compression." + key), nullptr) << t.name << ": " << key;
    if (t.ps_reply.empty() || t.ps_reply == "exact-delta") continue;
    CodecOptions reply;
    reply.codec = t.ps_reply;
    EXPECT_NE(makeCodec(reply, 0), nullptr) << t.name << " replies in " << t.ps_reply;
  }
  EXPECT_THROW(codecTraitsOf("zip"), std::invalid_argument);
}

// A device encode belongs to one codec (DeviceEncoder switches on it), and a ring re-encodes
// exactly the codecs whose collective is the ring (the GPU then encodes a rank's own
// gradient first only where the host does).
TEST(Registries, EachDeviceEncodeIsOneCodecsAndTheRingOnesAreTheRingCodecs) {
  std::set<DeviceEncode> seen;
  for (const auto& t : codecTraits()) {
    if (t.device_encode == DeviceEncode::kNone) continue;
    EXPECT_TRUE(seen.insert(t.device_encode).second) << t.name << " shares its device encode";
    CodecOptions options;
    options.codec = t.name;
    EXPECT_EQ(reencodedOnTheRing(t.device_encode),
              makeCodec(options, 0)->collective() == CodecCollective::kRing)
        << t.name;
  }
  EXPECT_EQ(seen.size(), 7u);
}

TEST(Registries, StrategyChoicesAreTheRegisteredStrategies) {
  EXPECT_EQ(schemaChoices("parallel.strategy"), strategyNames());
}

TEST(Registries, EveryEntryIsDescribedAndMakesWhatItNames) {
  for (const auto& a : allreduceRegistry()) {
    EXPECT_FALSE(a.description.empty()) << a.name;
    EXPECT_TRUE(a.make) << a.name;
  }
  for (const auto& s : strategyRegistry()) {
    EXPECT_FALSE(s.description.empty()) << s.name;
    EXPECT_TRUE(s.make) << s.name;
  }
  for (const auto& c : codecRegistry()) {
    EXPECT_FALSE(c.description.empty()) << c.name;
    if (!c.make) continue;  // none and powersgd are collectives of their own
    CodecOptions options;
    options.codec = c.name;
    EXPECT_NE(makeCodec(options, 0), nullptr) << c.name;
  }
  CodecOptions bogus;
  bogus.codec = "zip";
  EXPECT_THROW(makeCodec(bogus, 0), std::invalid_argument);
}

}  // namespace
}  // namespace ranklab
