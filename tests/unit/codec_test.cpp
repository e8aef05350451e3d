// Gradient codecs alone: decode(encode(x)) within each codec's stated bound (its header),
// payload sizes exactly as the wire format says, and corrupt payloads rejected.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "comm/codecs/bf16_codec.h"
#include "comm/codecs/fp16_codec.h"
#include "comm/codecs/qsgd_codec.h"
#include "comm/codecs/randomk_codec.h"
#include "comm/codecs/sign_codec.h"
#include "comm/codecs/sparse_payload.h"
#include "comm/codecs/threshold_codec.h"
#include "comm/codecs/topk_codec.h"
#include "comm/codecs/wire_format.h"

namespace ranklab {
namespace {

const size_t kSizes[] = {0, 1, 7, 1000, 100003};

// Gradient-like values: mostly small, a few large, both signs, some exact zeros.
std::vector<float> gradient(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.f, 1e-3f);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = normal(rng) * (i % 97 == 0 ? 100.f : 1.f);
    if (i % 31 == 5) x[i] = 0.f;
  }
  return x;
}

std::vector<float> roundTrip(GradientCodec& codec, const std::vector<float>& x,
                             size_t* bytes = nullptr) {
  std::vector<uint8_t> payload;
  codec.encode(x.data(), x.size(), payload);
  if (bytes) *bytes = payload.size();
  std::vector<float> out(x.size(), 123.f);
  codec.decode(payload.data(), payload.size(), x.size(), out.data(), DecodeMode::kAssign);
  return out;
}

TEST(WireFormat, PacksEveryWidth) {
  std::mt19937 rng(3);
  for (int bits = 0; bits <= 32; ++bits) {
    std::vector<uint32_t> values(37);
    for (auto& v : values) v = bits == 0 ? 0 : (rng() & (bits == 32 ? ~0u : (1u << bits) - 1));
    std::vector<uint8_t> packed;
    wire::packBits(values.data(), values.size(), bits, packed);
    ASSERT_EQ(packed.size(), (values.size() * bits + 7) / 8) << bits;
    std::vector<uint32_t> back(values.size(), 99);
    wire::unpackBits(packed.data(), back.size(), bits, back.data());
    EXPECT_EQ(back, values) << "width " << bits;
  }
}

TEST(Fp16Codec, WithinHalfAnUlpAndTwoBytesPerElement) {
  Fp16Codec codec;
  for (size_t n : kSizes) {
    auto x = gradient(n, n + 1);
    size_t bytes = 0;
    const auto d = roundTrip(codec, x, &bytes);
    EXPECT_EQ(bytes, 2 * n);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_LE(std::fabs(d[i] - x[i]), std::ldexp(std::fabs(x[i]), -11) + std::ldexp(1.f, -25))
          << i << ": " << x[i] << " -> " << d[i];
    }
  }
  // Beyond fp16's range the value overflows to inf, as in a real fp16 gradient.
  const auto big = roundTrip(codec, {70000.f, -1e6f, 65504.f});
  EXPECT_TRUE(std::isinf(big[0]) && big[0] > 0);
  EXPECT_TRUE(std::isinf(big[1]) && big[1] < 0);
  EXPECT_EQ(big[2], 65504.f);
}

TEST(Bf16Codec, WithinRelativeTwoToMinusEight) {
  Bf16Codec codec;
  for (size_t n : kSizes) {
    auto x = gradient(n, n + 2);
    for (size_t i = 0; i < n; i += 13) x[i] *= 1e30f;  // bf16 keeps fp32's range
    size_t bytes = 0;
    const auto d = roundTrip(codec, x, &bytes);
    EXPECT_EQ(bytes, 2 * n);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_LE(std::fabs(d[i] - x[i]), std::ldexp(std::fabs(x[i]), -8)) << i;
    }
  }
}

class QsgdBits : public ::testing::TestWithParam<int> {};

TEST_P(QsgdBits, WithinOneLevelOfTheBucketScaleAndExactSize) {
  const int bits = GetParam(), bucket = 128;
  QsgdCodec codec(bits, bucket, 7);
  const int s = (1 << (bits - 1)) - 1;
  for (size_t n : kSizes) {
    const auto x = gradient(n, n + 3);
    size_t bytes = 0;
    const auto d = roundTrip(codec, x, &bytes);
    const size_t buckets = (n + bucket - 1) / bucket;
    EXPECT_EQ(bytes, 4 * buckets + (n * bits + 7) / 8) << n;
    for (size_t b = 0; b < buckets; ++b) {
      const size_t begin = b * bucket, end = std::min(n, begin + bucket);
      float scale = 0;
      for (size_t i = begin; i < end; ++i) scale = std::max(scale, std::fabs(x[i]));
      for (size_t i = begin; i < end; ++i) {
        ASSERT_LT(std::fabs(d[i] - x[i]), scale / s * (1 + 1e-6f) + 1e-30f) << i;
        ASSERT_TRUE(d[i] == 0 || (d[i] < 0) == (x[i] < 0)) << "sign flipped at " << i;
      }
    }
  }
}

TEST_P(QsgdBits, UnbiasedOverManyDraws) {
  const int bits = GetParam();
  QsgdCodec codec(bits, 64, 11);
  const auto x = gradient(256, 5);
  const int draws = 4000;
  std::vector<double> mean(x.size(), 0.0);
  for (int t = 0; t < draws; ++t) {
    const auto d = roundTrip(codec, x);
    for (size_t i = 0; i < x.size(); ++i) mean[i] += d[i] / draws;
  }
  const int s = (1 << (bits - 1)) - 1;
  for (size_t b = 0; b < 4; ++b) {
    float scale = 0;
    for (size_t i = b * 64; i < b * 64 + 64; ++i) scale = std::max(scale, std::fabs(x[i]));
    // Each draw is within one level of x; the mean's standard error is <= level / (2 sqrt T).
    const double tolerance = 6.0 * scale / s / (2.0 * std::sqrt(draws));
    for (size_t i = b * 64; i < b * 64 + 64; ++i) {
      ASSERT_NEAR(mean[i], x[i], tolerance) << "element " << i << " bits " << bits;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Bits, QsgdBits, ::testing::Values(2, 4, 8));

TEST(SignCodec, MeanMagnitudeScaleAndItsErrorIdentity) {
  const int bucket = 100;
  SignCodec codec(bucket);
  for (size_t n : kSizes) {
    const auto x = gradient(n, n + 4);
    size_t bytes = 0;
    const auto d = roundTrip(codec, x, &bytes);
    const size_t buckets = (n + bucket - 1) / bucket;
    EXPECT_EQ(bytes, 4 * buckets + (n + 7) / 8);
    for (size_t b = 0; b < buckets; ++b) {
      const size_t begin = b * bucket, end = std::min(n, begin + bucket);
      double l1 = 0, l2 = 0, err = 0;
      for (size_t i = begin; i < end; ++i) l1 += std::fabs(x[i]), l2 += double(x[i]) * x[i];
      const double scale = l1 / (end - begin);
      for (size_t i = begin; i < end; ++i) {
        ASSERT_NEAR(d[i], x[i] < 0 ? -scale : scale, 1e-6 * scale) << i;
        err += (double(d[i]) - x[i]) * (double(d[i]) - x[i]);
      }
      EXPECT_NEAR(err, l2 - l1 * l1 / (end - begin), 1e-5 * l2 + 1e-30) << "bucket " << b;
    }
  }
}

// The size the sparse format must have, computed independently of the encoder.
size_t expectedSparseBytes(const std::vector<uint32_t>& indices, size_t n, size_t value_bytes = 4) {
  uint32_t widest = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    widest = std::max(widest, i == 0 ? indices[0] : indices[i] - indices[i - 1] - 1);
  }
  int width = 0;
  while (width < 32 && (widest >> width) != 0) ++width;
  const size_t packed = (indices.size() * width + 7) / 8;
  return 7 + std::min(packed, (n + 7) / 8) + value_bytes * indices.size();
}

std::vector<uint32_t> nonzeroIndices(const std::vector<float>& d) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] != 0.f) out.push_back(static_cast<uint32_t>(i));
  }
  return out;
}

TEST(TopkCodec, KeepsTheKLargestExactlyInCompactForm) {
  for (double ratio : {0.001, 0.01, 0.3, 1.0}) {
    TopkCodec codec(ratio);
    for (size_t n : kSizes) {
      auto x = gradient(n, n + 5);
      for (auto& v : x) v = v == 0.f ? 1e-9f : v;  // no exact zeros: kept = nonzero
      size_t bytes = 0;
      const auto d = roundTrip(codec, x, &bytes);
      const size_t k = codec.keptCount(n);
      const auto kept = nonzeroIndices(d);
      ASSERT_EQ(kept.size(), k) << "ratio " << ratio << " n " << n;
      EXPECT_EQ(bytes, expectedSparseBytes(kept, n));
      float smallest_kept = INFINITY, largest_dropped = 0;
      for (size_t i = 0; i < n; ++i) {
        if (d[i] != 0.f) {
          ASSERT_EQ(d[i], x[i]);
          smallest_kept = std::min(smallest_kept, std::fabs(x[i]));
        } else {
          largest_dropped = std::max(largest_dropped, std::fabs(x[i]));
        }
      }
      EXPECT_GE(smallest_kept, largest_dropped);
    }
  }
  // 1% of the MLP's 235,146 gradients: packed deltas, well under 8 bytes per entry.
  TopkCodec codec(0.01);
  size_t bytes = 0;
  roundTrip(codec, gradient(235146, 9), &bytes);
  EXPECT_LT(bytes, 2352 * 6);
}

TEST(TopkCodec, HalfValuesTakeTwoBytesWithinFp16Rounding) {
  TopkCodec codec(0.01, /*half_values=*/true);
  const auto x = gradient(100003, 12);
  size_t bytes = 0;
  const auto d = roundTrip(codec, x, &bytes);
  const auto kept = nonzeroIndices(d);
  ASSERT_EQ(kept.size(), codec.keptCount(x.size()));
  EXPECT_EQ(bytes, expectedSparseBytes(kept, x.size(), 2));
  for (uint32_t i : kept) ASSERT_LE(std::fabs(d[i] - x[i]), std::ldexp(std::fabs(x[i]), -11));
}

TEST(ThresholdCodec, SendsExactlyTheLargeOnes) {
  const float tau = 2e-3f;
  ThresholdCodec codec(tau);
  for (size_t n : kSizes) {
    const auto x = gradient(n, n + 6);
    size_t bytes = 0;
    const auto d = roundTrip(codec, x, &bytes);
    std::vector<uint32_t> kept;
    for (size_t i = 0; i < n; ++i) {
      if (std::fabs(x[i]) >= tau) {
        ASSERT_EQ(d[i], x[i]);
        kept.push_back(static_cast<uint32_t>(i));
      } else {
        ASSERT_EQ(d[i], 0.f);
      }
      ASSERT_LT(std::fabs(d[i] - x[i]), tau);
    }
    EXPECT_EQ(bytes, expectedSparseBytes(kept, n));
  }
}

TEST(RandomkCodec, SameIndicesOnEveryRankNewOnesEveryStep) {
  RandomkCodec rank0(0.05, 42), rank1(0.05, 42);
  const auto x = gradient(1000, 7);
  std::vector<uint8_t> payload;
  std::vector<uint32_t> first;
  for (int step = 0; step < 3; ++step) {
    size_t bytes = 0;
    const auto d = roundTrip(rank0, x, &bytes);
    rank1.encode(x.data(), x.size(), payload);
    EXPECT_EQ(bytes, 4 * rank0.keptCount(1000));
    EXPECT_EQ(rank0.indices(), rank1.indices()) << "step " << step;
    const auto& idx = rank0.indices();
    EXPECT_EQ(idx.size(), 50u);
    EXPECT_TRUE(std::adjacent_find(idx.begin(), idx.end()) == idx.end()) << "duplicate index";
    size_t exact = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const bool chosen = std::binary_search(idx.begin(), idx.end(), static_cast<uint32_t>(i));
      ASSERT_EQ(d[i], chosen ? x[i] : 0.f);
      exact += chosen;
    }
    EXPECT_EQ(exact, 50u);
    if (step == 0) first = idx;
    if (step > 0) {
      EXPECT_NE(idx, first);
    }
  }
}

TEST(SparsePayload, DenseSelectionsFallBackToABitmap) {
  const size_t n = 1000;
  std::vector<uint32_t> indices;
  std::vector<float> values;
  // 995 of 1000 with one gap of 5: 3-bit deltas would take 374 bytes, the bitmap 125.
  for (uint32_t i = 0; i < n; ++i) {
    if (i < 10 || i >= 15) indices.push_back(i), values.push_back(float(i));
  }
  std::vector<uint8_t> payload;
  sparse::encode(indices.data(), values.data(), indices.size(), n, sparse::ValueType::kF32,
                 payload);
  EXPECT_EQ(payload[0], 1) << "bitmap form";
  EXPECT_EQ(payload.size(), 7 + n / 8 + 4 * indices.size());
  std::vector<float> out(n, 5.f);
  sparse::decode(payload.data(), payload.size(), n, out.data(), DecodeMode::kAdd, "test");
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 5.f + (i < 10 || i >= 15 ? float(i) : 0.f));
}

TEST(Codecs, RejectCorruptPayloads) {
  const auto x = gradient(1000, 8);
  Fp16Codec fp16;
  QsgdCodec qsgd(4, 64, 1);
  SignCodec sign(64);
  TopkCodec topk(0.05);
  for (GradientCodec* codec : std::vector<GradientCodec*>{&fp16, &qsgd, &sign, &topk}) {
    std::vector<uint8_t> payload;
    codec->encode(x.data(), x.size(), payload);
    std::vector<float> out(x.size());
    auto truncated = payload;
    truncated.pop_back();
    EXPECT_THROW(codec->decode(truncated.data(), truncated.size(), x.size(), out.data(),
                               DecodeMode::kAssign),
                 std::runtime_error)
        << codec->name();
    auto longer = payload;
    longer.push_back(0);
    EXPECT_THROW(
        codec->decode(longer.data(), longer.size(), x.size(), out.data(), DecodeMode::kAssign),
        std::runtime_error)
        << codec->name();
  }
  // A sparse index pointing past the buffer.
  std::vector<uint8_t> payload;
  const uint32_t index = 50;
  const float value = 1.f;
  sparse::encode(&index, &value, 1, 100, sparse::ValueType::kF32, payload);
  std::vector<float> out(10);
  EXPECT_THROW(
      sparse::decode(payload.data(), payload.size(), 10, out.data(), DecodeMode::kAssign, "test"),
      std::runtime_error);
}

}  // namespace
}  // namespace ranklab
