// Compressed collectives with ranks as threads: every rank must end with the same bits,
// equal to what the codec's stated bound allows; wire bytes as the format says.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include "comm/codecs/compressed_allreduce.h"
#include "comm/codecs/compressed_ring_allreduce.h"
#include "comm/codecs/payload_allgather.h"
#include "comm/codecs/qsgd_codec.h"
#include "comm/codecs/sign_codec.h"
#include "comm/codecs/topk_codec.h"
#include "comm/collectives/allreduce_registry.h"
#include "comm/memory/thread_communicator.h"

namespace ranklab {
namespace {

// Runs body(comm) on `world` threads and returns each rank's buffer.
std::vector<std::vector<float>> onThreads(
    int world, const std::function<void(Communicator&, std::vector<float>&)>& body) {
  ThreadRendezvous rendezvous(world);
  std::vector<std::vector<float>> buffers(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(rendezvous, r);
      body(comm, buffers[r]);
    });
  }
  for (auto& t : threads) t.join();
  return buffers;
}

void expectIdentical(const std::vector<std::vector<float>>& buffers, const char* what) {
  for (size_t r = 1; r < buffers.size(); ++r) {
    ASSERT_EQ(buffers[r], buffers[0]) << what << ": rank " << r << " differs from rank 0";
  }
}

// Rank r fills element i with r + i % 7 (small integers: exact in fp16 and bf16).
float fill(int rank, size_t i) {
  return static_cast<float>(rank + static_cast<int>(i % 7));
}
float closedForm(int world, size_t i) {
  return static_cast<float>(world * (world - 1) / 2 + world * static_cast<int>(i % 7));
}

class CompressedWorlds : public ::testing::TestWithParam<int> {};

TEST_P(CompressedWorlds, HalfFloatRingSumsExactlyWithHalfTheBytes) {
  const int world = GetParam();
  for (const char* codec : {"fp16", "bf16"}) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1001}, size_t{100003}}) {
      std::vector<int64_t> sent(world);
      CodecOptions options;
      options.codec = codec;
      const auto out = onThreads(world, [&](Communicator& comm, std::vector<float>& data) {
        data.resize(count);
        for (size_t i = 0; i < count; ++i) data[i] = fill(comm.rank(), i);
        CompressedAllreduce reduce(comm, AllreduceChoice("ring"), options, count);
        const auto stats = reduce.run(data.data(), count);
        sent[comm.rank()] = stats.bytes_tx;
      });
      expectIdentical(out, codec);
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[0][i], closedForm(world, i)) << i;
      if (world > 1 && count >= static_cast<size_t>(world)) {
        const double ideal = 2.0 * (world - 1) / world * count * 2;  // 2 bytes per element
        EXPECT_NEAR(static_cast<double>(sent[0]), ideal, 2.0 * world * 2) << codec;
      }
    }
  }
}

TEST_P(CompressedWorlds, QsgdRingStaysWithinOneLevelPerHop) {
  const int world = GetParam(), bits = 4, s = 7;
  const size_t count = 5003;
  CodecOptions options;
  options.codec = "qsgd";
  options.bits = bits;
  options.bucket = 64;
  options.error_feedback = false;
  const auto out = onThreads(world, [&](Communicator& comm, std::vector<float>& data) {
    data.resize(count);
    for (size_t i = 0; i < count; ++i) data[i] = std::sin(0.01f * i * (comm.rank() + 1));
    CompressedAllreduce reduce(comm, AllreduceChoice("ring"), options, count);
    reduce.run(data.data(), count);
  });
  expectIdentical(out, "qsgd");
  // A partial sum of k ranks has |x| <= k; each of the world hops (n-1 reduce, 1 final
  // encode) adds less than one level of its scale.
  for (size_t i = 0; i < count; ++i) {
    float exact = 0;
    for (int r = 0; r < world; ++r) exact += std::sin(0.01f * i * (r + 1));
    const float bound = static_cast<float>(world) * world / s;
    ASSERT_LE(std::fabs(out[0][i] - exact), bound) << i;
  }
}

// topk, threshold and sign: the result is the sum of every rank's decoded payload, in
// rank order, bit for bit; randomk: the exact sum over the shared indices.
TEST_P(CompressedWorlds, AllgatheredPayloadsSumInRankOrder) {
  const int world = GetParam();
  const size_t count = 3001;
  for (const char* name : {"topk", "threshold", "sign"}) {
    CodecOptions options;
    options.codec = name;
    options.ratio = 0.02;
    options.threshold = 0.9;
    options.bucket = 100;
    std::vector<int64_t> sent(world);
    std::vector<size_t> payload(world);
    auto input = [](int rank, size_t i) { return std::cos(0.003f * i * (rank + 2)); };
    const auto out = onThreads(world, [&](Communicator& comm, std::vector<float>& data) {
      data.resize(count);
      for (size_t i = 0; i < count; ++i) data[i] = input(comm.rank(), i);
      CompressedAllreduce reduce(comm, AllreduceChoice("ring"), options, count);
      sent[comm.rank()] = reduce.run(data.data(), count).bytes_tx;
    });
    expectIdentical(out, name);
    std::vector<float> expected(count, 0.f), x(count);
    std::vector<size_t> sizes(world);
    for (int r = 0; r < world; ++r) {
      auto codec = makeCodec(options, r);
      for (size_t i = 0; i < count; ++i) x[i] = input(r, i);
      std::vector<uint8_t> bytes;
      codec->encode(x.data(), count, bytes);
      sizes[r] = bytes.size();
      codec->decode(bytes.data(), bytes.size(), count, expected.data(),
                    r == 0 ? DecodeMode::kAssign : DecodeMode::kAdd);
    }
    EXPECT_EQ(out[0], expected) << name;
    // Rank 0 forwards every payload but rank 1's, each after an 8-byte size.
    int64_t forwarded = 0;
    for (int r = 0; r < world; ++r) forwarded += r == 1 % world ? 0 : int64_t(sizes[r]) + 8;
    if (world > 1) {
      EXPECT_EQ(sent[0], forwarded) << name;
    }
  }
}

TEST_P(CompressedWorlds, RandomkSumsTheSharedIndices) {
  const int world = GetParam();
  const size_t count = 2000;
  CodecOptions options;
  options.codec = "randomk";
  options.ratio = 0.1;
  options.error_feedback = false;
  const auto out = onThreads(world, [&](Communicator& comm, std::vector<float>& data) {
    data.resize(count);
    for (size_t i = 0; i < count; ++i) data[i] = fill(comm.rank(), i) + 1;
    CompressedAllreduce reduce(comm, AllreduceChoice("ring"), options, count);
    reduce.run(data.data(), count);
  });
  expectIdentical(out, "randomk");
  size_t kept = 0;
  for (size_t i = 0; i < count; ++i) {
    if (out[0][i] == 0.f) continue;
    ++kept;
    ASSERT_EQ(out[0][i], closedForm(world, i) + world) << i;
  }
  EXPECT_EQ(kept, 200u);
}

INSTANTIATE_TEST_SUITE_P(Worlds, CompressedWorlds, ::testing::Values(1, 2, 3, 4, 5, 8, 16));

TEST(PayloadAllgather, VariableSizesIncludingEmpty) {
  const int world = 5;
  std::vector<std::vector<std::vector<uint8_t>>> all(world);
  onThreads(world, [&](Communicator& comm, std::vector<float>&) {
    auto& mine = all[comm.rank()];
    mine.resize(world);
    mine[comm.rank()].assign(comm.rank() * 3, static_cast<uint8_t>(comm.rank()));
    PayloadAllgather gather(comm);
    gather.run(mine);
  });
  for (int r = 0; r < world; ++r) {
    for (int p = 0; p < world; ++p) {
      EXPECT_EQ(all[r][p], std::vector<uint8_t>(p * 3, static_cast<uint8_t>(p))) << r << " " << p;
    }
  }
}

TEST(CompressedRingAllreduce, RefusesCodecsWithoutAFixedSize) {
  ThreadRendezvous rendezvous(1);
  ThreadCommunicator comm(rendezvous, 0);
  TopkCodec topk(0.1);
  EXPECT_THROW(CompressedRingAllreduce(comm, topk), std::invalid_argument);
}

}  // namespace
}  // namespace ranklab
