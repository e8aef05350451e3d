// Every choice the job file offers is registered once, with a description and a factory:
// the schema's lists, the all-reduce, codec and strategy registries agree.
#include <gtest/gtest.h>

#include <set>

#include "comm/codecs/codec.h"
#include "comm/codecs/codec_traits.h"
#include "comm/collectives/allreduce_registry.h"
#include "comm/registry.h"
#include "engine/job/job_keys.h"
#include "engine/job/strategy_traits.h"
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

// One codec sends the gradient as it is; any other name compresses, an unknown one too (the
// checks that ask then refuse it by name rather than pass it by).
TEST(Registries, OnlyThePlainCodecLeavesTheGradientAsItIs) {
  int plain = 0;
  for (const auto& t : codecTraits()) {
    plain += t.form == CodecForm::kPlain;
    EXPECT_EQ(compressesWith(t.name), t.form != CodecForm::kPlain) << t.name;
  }
  EXPECT_EQ(plain, 1);
  EXPECT_TRUE(compressesWith("zip"));
  EXPECT_EQ(findCodecTraits("zip"), nullptr);
  EXPECT_EQ(codecsAServerTakes(), "fp16, bf16, qsgd, topk, randomk, threshold or sign");
}

// A job's all-reduce is resolved once, into its entry and options; a wrong name fails there,
// naming the allowed ones.
TEST(Registries, AnAllreduceChoiceIsItsEntryAndOptions) {
  const AllreduceChoice choice("hierarchical", AllreduceOptions{3});
  EXPECT_EQ(&choice.algorithm(), findAllreduce("hierarchical"));
  EXPECT_EQ(choice.options().ranks_per_host, 3);
  try {
    AllreduceChoice("rings");
    FAIL() << "an unknown algorithm resolved";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"rings\"; allowed: ring, mpi"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(allreduceAlgorithmsWith(&AllreduceAlgorithm::shards), std::vector<std::string>{"ring"});
}

TEST(Registries, StrategyChoicesAreTheRegisteredStrategies) {
  EXPECT_EQ(schemaChoices("parallel.strategy"), strategyNames());
  EXPECT_EQ(namesOf(strategyTraits()), strategyNames());  // the light list and the factories agree
  EXPECT_EQ(strategiesWith(&StrategyTraits::parameter_servers),
            (std::vector<std::string>{"ps-sync", "ps-async"}));
  EXPECT_EQ(strategyTraitsOr("gossip").name, "");  // unknown: no trait, refused by the schema
}

TEST(Registries, EveryEntryIsDescribedAndMakesWhatItNames) {
  for (const auto& a : allreduceRegistry()) {
    EXPECT_FALSE(a.description.empty()) << a.name;
    EXPECT_TRUE(a.make) << a.name;
    EXPECT_TRUE(a.bytes_sent) << a.name;  // ring_allreduce_thread_test measures it
    EXPECT_FALSE(a.formula.empty()) << a.name;
  }
  for (const auto& s : strategyRegistry()) {
    EXPECT_FALSE(s.description.empty()) << s.name;
    EXPECT_TRUE(s.make) << s.name;
  }
  for (const auto& c : codecRegistry()) {
    EXPECT_FALSE(c.description.empty()) << c.name;
    // Only a flat-buffer codec has a factory: none and powersgd are collectives of their own.
    EXPECT_EQ(static_cast<bool>(c.make), codecTraitsOf(c.name).form == CodecForm::kFlat) << c.name;
    if (!c.make) continue;
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
