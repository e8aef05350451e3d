// Compressed push and pull on the parameter server, workers and servers as threads: the
// bytes on the wire are the codec's payload per shard, the server applies what the codec
// decodes (within its bound), error feedback holds per shard, and every worker's model is
// bit for bit the copy its server keeps for it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/ps/shard_codecs.h"
#include "tests/support/ps_thread_ranks.h"

namespace ranklab {
namespace {

using testing::PsSetup;

constexpr size_t kKeys = 1001;  // three uneven shards: 334, 334, 333

CodecOptions codecOf(const std::string& name) {
  CodecOptions o;
  o.codec = name;
  o.bits = 4;
  o.bucket = 64;
  o.ratio = 0.1;
  o.threshold = 1.0;
  return o;
}

std::vector<float> randomVector(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

PsSetup setupFor(const std::string& codec, int workers, int servers, bool sync) {
  PsSetup setup;
  setup.workers = workers;
  setup.servers = servers;
  setup.sync = sync;
  setup.keys = kKeys;
  setup.codec = codecOf(codec);
  return setup;
}

// What a fresh codec of the same kind makes of x: the first push of a worker encodes just
// that (no residual yet), with rounding to nearest as under error feedback.
std::vector<uint8_t> referencePayload(const std::string& codec, const float* x, size_t n) {
  auto fresh = makeCodec(codecOf(codec), 0);
  fresh->roundToNearest(true);
  std::vector<uint8_t> payload;
  fresh->encode(x, n, payload);
  return payload;
}

std::vector<float> referenceDecode(const std::string& codec, const float* x, size_t n) {
  auto fresh = makeCodec(codecOf(codec), 0);
  fresh->roundToNearest(true);
  std::vector<uint8_t> payload;
  fresh->encode(x, n, payload);
  std::vector<float> out(n);
  fresh->decode(payload.data(), payload.size(), n, out.data(), DecodeMode::kAssign);
  return out;
}

class PsCodecs : public ::testing::TestWithParam<std::string> {};

TEST_P(PsCodecs, PushBytesAreTheCodecPayloadPerShard) {
  const std::string codec = GetParam();
  const auto ranges = evenKeyRanges(kKeys, 3);
  const auto params0 = randomVector(kKeys, 1), grads = randomVector(kKeys, 2);
  PsRoundStats stats;
  std::vector<ServerLoad> loads;
  testing::runPs(
      setupFor(codec, 1, 3, true),
      [&](Communicator&, KvWorker& kv) {
        std::vector<float> params = params0;
        kv.init(params.data());
        stats = kv.pushPull(grads.data(), params.data(), 1.0).wait();
      },
      &loads);
  int64_t expected_tx = 0, raw_tx = 0;
  std::vector<int64_t> payload(3);
  for (size_t s = 0; s < 3; ++s) {
    const size_t n = ranges[s].size();
    payload[s] = int64_t(referencePayload(codec, grads.data() + ranges[s].begin, n).size());
    // Codecs of a fixed size: exactly the format's size (codec.h).
    const size_t fixed = makeCodec(codecOf(codec), 0)->payloadBytes(n);
    if (fixed > 0) {
      EXPECT_EQ(payload[s], int64_t(fixed)) << "shard " << s;
    }
    if (codec == "fp16" || codec == "bf16") {
      EXPECT_EQ(payload[s], int64_t(2 * n));
    }
    expected_tx += int64_t(sizeof(PsRequest)) + payload[s];
    raw_tx += int64_t(sizeof(PsRequest) + n * sizeof(float));
  }
  EXPECT_EQ(stats.bytes_tx, expected_tx);
  EXPECT_EQ(stats.bytes_raw_tx, raw_tx);
  EXPECT_LT(double(stats.bytes_tx), 0.6 * double(stats.bytes_raw_tx));
  EXPECT_EQ(stats.bytes_raw_rx, int64_t(3 * sizeof(PsReply) + kKeys * sizeof(float)));
  ASSERT_EQ(loads.size(), 3u);
  int64_t servers_tx = 0;
  for (const ServerLoad& load : loads) {
    // The push's header and payload, then the stop's header.
    EXPECT_EQ(load.bytes_rx, int64_t(2 * sizeof(PsRequest)) + payload[load.shard]);
    EXPECT_EQ(load.bytes_raw, int64_t(sizeof(PsReply) + load.range.size() * sizeof(float)));
    servers_tx += load.bytes_tx;
  }
  EXPECT_EQ(servers_tx, stats.bytes_rx) << "what the servers sent is what the worker took";
}

TEST_P(PsCodecs, ServerAppliesWhatTheCodecDecodes) {
  const std::string codec = GetParam();
  const auto ranges = evenKeyRanges(kKeys, 2);
  const auto params0 = randomVector(kKeys, 3), grads = randomVector(kKeys, 4);
  std::vector<float> applied(kKeys), replied(kKeys);
  testing::runPs(setupFor(codec, 1, 2, true), [&](Communicator&, KvWorker& kv) {
    std::vector<float> params = params0;
    kv.init(params.data());
    kv.pushPull(grads.data(), params.data(), 1.0).wait();
    replied = params;
    kv.pull(applied.data()).wait();  // exactly what the servers hold
  });
  for (size_t s = 0; s < 2; ++s) {
    const size_t b = ranges[s].begin, n = ranges[s].size();
    const auto decoded = referenceDecode(codec, grads.data() + b, n);
    double worst_decode = 0, worst_bound = 0;
    for (size_t i = 0; i < n; ++i) {
      const float step = params0[b + i] - applied[b + i];  // lr 1, plain SGD
      worst_decode = std::max(worst_decode, double(std::fabs(step - decoded[i])));
      const double error = std::fabs(step - grads[b + i]), g = std::fabs(grads[b + i]);
      // The codecs' stated bounds (codec headers), plus the ulps of p0 - (p0 - step).
      if (codec == "fp16") worst_bound = std::max(worst_bound, error - std::ldexp(g, -11));
      if (codec == "bf16") worst_bound = std::max(worst_bound, error - std::ldexp(g, -8));
    }
    EXPECT_LT(worst_decode, 1e-6) << "shard " << s << ": the server applied the decoded push";
    EXPECT_LT(worst_bound, 1e-6) << "shard " << s;
    if (codec == "topk" || codec == "randomk") {
      size_t changed = 0;
      for (size_t i = 0; i < n; ++i) changed += applied[b + i] != params0[b + i];
      EXPECT_EQ(changed, size_t(std::ceil(0.1 * double(n)))) << "shard " << s;
    }
  }
  if (pullCodecName(codec) == "exact-delta") {
    EXPECT_EQ(replied, applied) << "a sparse change travels back without loss";
  } else {
    for (size_t i = 0; i < kKeys; ++i) {
      const float delta = applied[i] - params0[i];
      // fp16 deltas for sign: 2^-11; bf16: 2^-8; qsgd 4-bit nearest: half a level of the
      // bucket's largest |delta| (at most the largest |g| here).
      const double bound = codec == "bf16"   ? std::ldexp(std::fabs(delta), -8)
                           : codec == "qsgd" ? 8.0 / 14
                                             : std::ldexp(std::fabs(delta), -11);
      ASSERT_LE(std::fabs(replied[i] - applied[i]), bound + 1e-6) << "key " << i;
    }
  }
}

TEST_P(PsCodecs, SentPlusResidualEqualsRawPerShard) {
  const std::string codec = GetParam();
  const auto ranges = evenKeyRanges(kKeys, 3);
  const auto params0 = randomVector(kKeys, 5);
  constexpr int kRounds = 20;
  std::vector<double> raw(kKeys, 0), sent(kKeys, 0);
  std::vector<float> residual(kKeys), final_params(kKeys);
  testing::runPs(setupFor(codec, 1, 3, true), [&](Communicator&, KvWorker& kv) {
    std::vector<float> params = params0;
    kv.init(params.data());
    for (int round = 0; round < kRounds; ++round) {
      auto grads = randomVector(kKeys, 100 + round);
      for (size_t i = 0; i < kKeys; ++i) grads[i] = 0.1f * grads[i] + 0.05f;  // a drift
      for (size_t i = 0; i < kKeys; ++i) raw[i] += grads[i];
      kv.pushPull(grads.data(), params.data(), 1.0).wait();
      for (size_t s = 0; s < 3; ++s) {
        const auto& shard_sent = kv.pushEncoder(s).sent();
        ASSERT_EQ(shard_sent.size(), ranges[s].size());
        for (size_t i = 0; i < shard_sent.size(); ++i) sent[ranges[s].begin + i] += shard_sent[i];
      }
    }
    for (size_t s = 0; s < 3; ++s) {
      const ErrorFeedback* feedback = kv.pushEncoder(s).errorFeedback();
      ASSERT_NE(feedback, nullptr);
      ASSERT_EQ(feedback->residual().size(), ranges[s].size()) << "one residual per shard";
      std::copy(feedback->residual().begin(), feedback->residual().end(),
                residual.begin() + ranges[s].begin);
    }
    kv.pull(final_params.data()).wait();
  });
  double worst = 0, worst_server = 0, residual_norm = 0;
  for (size_t i = 0; i < kKeys; ++i) {
    worst = std::max(worst, std::fabs(sent[i] + residual[i] - raw[i]));
    worst_server = std::max(worst_server, std::fabs(params0[i] - final_params[i] - sent[i]));
    residual_norm += double(residual[i]) * residual[i];
  }
  std::printf("%s: |sent + residual - raw| <= %.2e, server vs sent %.2e, |residual| %.3f\n",
              codec.c_str(), worst, worst_server, std::sqrt(residual_norm));
  EXPECT_LT(worst, 1e-4);
  EXPECT_LT(worst_server, 1e-4) << "the servers applied what the workers sent";
  if (codec != "fp16" && codec != "bf16") {
    EXPECT_GT(residual_norm, 0.0) << "a lossy codec";
  }
}

TEST_P(PsCodecs, WorkersHoldBitForBitTheServersCopy) {
  const std::string codec = GetParam();
  const auto params0 = randomVector(kKeys, 7);
  std::vector<std::vector<float>> worker_params(2);
  std::vector<std::vector<float>> held(2, std::vector<float>(kKeys));
  const auto ranges = evenKeyRanges(kKeys, 2);
  testing::runPs(
      setupFor(codec, 2, 2, false),
      [&](Communicator& workers, KvWorker& kv) {
        std::vector<float> params = params0;  // every worker starts from the same model
        if (workers.rank() == 0) kv.init(params.data());
        for (int round = 0; round < 10; ++round) {
          const auto grads = randomVector(kKeys, 1000 * workers.rank() + round);
          kv.pushPull(grads.data(), params.data(), 0.1).wait();
        }
        worker_params[workers.rank()] = params;
      },
      nullptr,
      [&](int shard, const ParameterShard& state) {
        for (int w = 0; w < 2; ++w)
          std::memcpy(held[w].data() + ranges[shard].begin, state.heldBy(w),
                      ranges[shard].size() * sizeof(float));
      });
  for (int w = 0; w < 2; ++w) {
    EXPECT_EQ(std::memcmp(worker_params[w].data(), held[w].data(), kKeys * sizeof(float)), 0)
        << "worker " << w;
    EXPECT_NE(worker_params[w], params0) << "the pushes moved the model";
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, PsCodecs,
                         ::testing::Values("fp16", "bf16", "qsgd", "topk", "randomk", "threshold",
                                           "sign"));

TEST(PsCompression, EmptyShardsAndOneKeyShardsWork) {
  for (const char* codec : {"fp16", "topk", "randomk", "sign"}) {
    PsSetup setup = setupFor(codec, 1, 3, true);
    setup.keys = 2;  // shards of 1, 1 and 0 keys
    std::vector<float> after;
    testing::runPs(setup, [&](Communicator&, KvWorker& kv) {
      std::vector<float> params{1.f, 2.f}, grads{0.5f, -0.25f};
      kv.init(params.data());
      kv.pushPull(grads.data(), params.data(), 1.0).wait();
      after = params;
    });
    // One element per shard: topk and randomk keep it, fp16 and sign carry it exactly.
    EXPECT_EQ(after, (std::vector<float>{0.5f, 2.25f})) << codec;
  }
}

TEST(PsCompression, PowerSgdIsRefusedWithTheReason) {
  ThreadRendezvous rendezvous(1);
  ThreadCommunicator comm(rendezvous, 0);
  try {
    KvWorker kv(comm, 0, {1}, 10, evenKeyRanges, codecOf("powersgd"));
    FAIL() << "powersgd over a parameter server must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("two all-reduces per step"), std::string::npos)
        << e.what();
  }
}

TEST(PsCompression, PullCodecsFollowThePushCodec) {
  EXPECT_EQ(pullCodecName("fp16"), "fp16");
  EXPECT_EQ(pullCodecName("bf16"), "bf16");
  EXPECT_EQ(pullCodecName("qsgd"), "qsgd");
  EXPECT_EQ(pullCodecName("sign"), "fp16");
  for (const char* sparse : {"topk", "randomk", "threshold"})
    EXPECT_EQ(pullCodecName(sparse), "exact-delta");
}

}  // namespace
}  // namespace ranklab
