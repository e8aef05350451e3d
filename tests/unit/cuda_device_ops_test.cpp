// The CUDA device's memory, optimizer and codec operations against kernels/cpu, bit for bit
// where the CPU's loop is one pass, and its gemm to fp32 rounding. Skipped with the reason
// where no GPU is present. Differences are measured relative to the largest expected value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/model/compute_device.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/low_precision.h"
#include "kernels/cpu/optimizer_update.h"
#include "tests/support/cuda_device_support.h"

namespace ranklab {
namespace {

using testing::CudaDeviceTest;
using testing::expectClose;
using testing::expectSameBits;
using testing::Floats;
using testing::randomFloats;

// ---- memory and optimizer operations against kernels/cpu ----

TEST_F(CudaDeviceTest, SgdUpdateMatchesTheCpuBitForBit) {
  const size_t n = 10007;
  for (bool nesterov : {false, true}) {
    Floats params = randomFloats(n, 1), grads = randomFloats(n, 2), velocity = randomFloats(n, 3);
    auto p = onGpu(params), g = onGpu(grads), v = onGpu(velocity);
    kernels::sgdUpdate(params.data(), grads.data(), velocity.data(), n, 0.1f, 0.9f, 1e-3f,
                       nesterov);
    gpu().sgdUpdate(p->data(), g->data(), v->data(), n, 0.1f, 0.9f, 1e-3f, nesterov);
    expectSameBits(nesterov ? "sgd nesterov params" : "sgd params", toHost(p->data(), n), params);
    expectSameBits("sgd velocity", toHost(v->data(), n), velocity);
  }
}

TEST_F(CudaDeviceTest, AdamUpdateMatchesTheCpuBitForBit) {
  const size_t n = 10007;
  Floats params = randomFloats(n, 4), grads = randomFloats(n, 5);
  Floats m = randomFloats(n, 6, 0.1f), v = randomFloats(n, 7, 0.1f);
  for (float& value : v) value = std::abs(value);
  auto dp = onGpu(params), dg = onGpu(grads), dm = onGpu(m), dv = onGpu(v);
  kernels::AdamScalars s;
  s.step_size = 1e-3f / (1.f - 0.9f);
  s.sqrt_bias_correction2 = std::sqrt(1.f - 0.999f);
  s.l2 = 1e-2f;
  s.decay_factor = 0.999f;
  kernels::adamUpdate(params.data(), grads.data(), m.data(), v.data(), n, s);
  gpu().adamUpdate(dp->data(), dg->data(), dm->data(), dv->data(), n, s);
  expectSameBits("adam params", toHost(dp->data(), n), params);
  expectSameBits("adam first moment", toHost(dm->data(), n), m);
  expectSameBits("adam second moment", toHost(dv->data(), n), v);
}

TEST_F(CudaDeviceTest, ScaleAndCheckFiniteMatchesTheCpu) {
  const size_t n = 4099;
  Floats grads = randomFloats(n, 8);
  auto on_gpu = onGpu(grads);
  EXPECT_TRUE(kernels::scaleAndCheckFinite(grads.data(), n, 0.125f));
  EXPECT_TRUE(gpu().scaleAndCheckFinite(on_gpu->data(), n, 0.125f));
  expectSameBits("unscaled gradients", toHost(on_gpu->data(), n), grads);
  grads[n - 1] = std::numeric_limits<float>::infinity();
  gpu().upload(on_gpu->data() + n - 1, &grads[n - 1], 1);
  EXPECT_FALSE(gpu().scaleAndCheckFinite(on_gpu->data(), n, 0.5f));
  EXPECT_FALSE(gpu().scaleAndCheckFinite(on_gpu->data(), n, 1.f));  // still inf
}

// A gradient's squared norm (train.grad_clip) summed on the GPU, in double, as the CPU's:
// the same value to double rounding of different orders, for sizes across the block count.
TEST_F(CudaDeviceTest, SumOfSquaresMatchesTheCpu) {
  for (size_t n : {size_t{1}, size_t{255}, size_t{4099}, size_t{1} << 22}) {
    const Floats x = randomFloats(n, 9);
    auto on_gpu = onGpu(x);
    const double cpu = cpuDevice().sumOfSquares(x.data(), n);
    EXPECT_NEAR(gpu().sumOfSquares(on_gpu->data(), n), cpu, 1e-12 * cpu) << n << " floats";
  }
}

// The overflow check's flag is the calling thread's on the current GPU: one thread going from
// GPU to GPU, and threads checking at once on one GPU, each get their own verdict.
TEST_F(CudaDeviceTest, ScaleAndCheckFiniteOnEveryGpuAndFromSeveralThreads) {
  const size_t n = 1025;
  for (int index = 0; index < kernels::usableGpus(nullptr); ++index) {
    const ComputeDevice& device = cudaDevice(index);
    auto grads = device.allocate(n);
    device.fill(grads->data(), n, 2.f);
    EXPECT_TRUE(device.scaleAndCheckFinite(grads->data(), n, 0.5f)) << device.name();
    device.fill(grads->data() + n / 2, 1, std::numeric_limits<float>::infinity());
    EXPECT_FALSE(device.scaleAndCheckFinite(grads->data(), n, 0.5f)) << device.name();
  }
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  for (int t = 0; t < 4; ++t) {
    buffers.push_back(gpu().allocate(n));
    gpu().fill(buffers.back()->data(), n, t % 2 ? std::numeric_limits<float>::quiet_NaN() : 1.f);
  }
  gpu().synchronize();  // the fills are this thread's stream's: done before others read them
  std::vector<int> wrong(buffers.size(), 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < buffers.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round)
        wrong[t] += gpu().scaleAndCheckFinite(buffers[t]->data(), n, 1.f) != (t % 2 == 0);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong, std::vector<int>(buffers.size(), 0));
}

TEST_F(CudaDeviceTest, FillCopyUploadAndDownload) {
  const size_t n = 3001;
  const Floats values = randomFloats(n, 9);
  auto a = onGpu(values), b = gpu().allocate(n);
  gpu().copy(b->data(), a->data(), n);
  expectSameBits("copy", toHost(b->data(), n), values);
  gpu().fill(b->data() + 1, n - 2, 2.5f);
  Floats filled(n, 2.5f);
  filled.front() = values.front();
  filled.back() = values.back();
  expectSameBits("fill 2.5", toHost(b->data(), n), filled);
  gpu().fill(b->data(), n, 0.f);
  expectSameBits("fill 0", toHost(b->data(), n), Floats(n, 0.f));
  gpu().synchronize();
}

// The sparse codecs' device work (engine/train/device_codec_sync.h) selects what the CPU
// selects: topk with many ties at the k-th magnitude (values on a coarse grid, both signs),
// a NaN and infinities, k from 1 to n; threshold at several thresholds (one exactly on the
// grid); randomk's gather; sign's payload and residual for several bucket sizes (the
// scales summed in the CPU's order); the bf16 and fp16 casts and their residuals (one value
// beyond fp16's range); and error feedback's add, momentum correction's accumulation
// and the scatter give the CPU's bits.
TEST_F(CudaDeviceTest, CodecKernelsMatchTheCpuBitForBit) {
  const size_t n = 70001;
  Floats x = randomFloats(n, 11);
  for (size_t i = 0; i < n; i += 3) x[i] = std::round(x[i] * 8.f) / 8.f;  // ties
  x[17] = std::numeric_limits<float>::quiet_NaN();
  x[18] = -std::numeric_limits<float>::infinity();
  auto on_gpu = onGpu(x);
  for (size_t k : {size_t{1}, size_t{700}, size_t{23456}, n}) {
    std::vector<uint32_t> want_i, got_i;
    Floats want_v, got_v;
    cpuDevice().selectTopk(x.data(), n, k, want_i, want_v);
    gpu().selectTopk(on_gpu->data(), n, k, got_i, got_v);
    EXPECT_EQ(got_i, want_i) << "k " << k;
    expectSameBits("topk values, k " + std::to_string(k), got_v, want_v);
  }
  for (float threshold : {0.125f, 0.9f, 2.f}) {
    std::vector<uint32_t> want_i, got_i;
    Floats want_v, got_v;
    cpuDevice().selectAtLeast(x.data(), n, threshold, want_i, want_v);
    gpu().selectAtLeast(on_gpu->data(), n, threshold, got_i, got_v);
    EXPECT_EQ(got_i, want_i) << "threshold " << threshold;
    expectSameBits("threshold values, " + std::to_string(threshold), got_v, want_v);
  }
  const std::vector<uint32_t> picked = {0, 17, 18, 999, static_cast<uint32_t>(n - 1)};
  Floats want_picked(picked.size()), got_picked(picked.size());
  cpuDevice().gather(x.data(), picked.data(), picked.size(), want_picked.data());
  gpu().gather(on_gpu->data(), picked.data(), picked.size(), got_picked.data());
  expectSameBits("gather", got_picked, want_picked);
  // Arithmetic on a NaN gives CUDA's canonical NaN, not the x86 one: none from here on.
  x[17] = 0.5f;
  gpu().upload(on_gpu->data() + 17, &x[17], 1);
  x[18] = -70000.f;  // beyond fp16's range: inf, as on the CPU
  gpu().upload(on_gpu->data() + 18, &x[18], 1);
  for (auto precision : {kernels::Precision::kBf16, kernels::Precision::kFp16}) {
    std::vector<uint8_t> want_payload, got_payload;
    Floats want_residual(n);
    auto got_residual = gpu().allocate(n);
    cpuDevice().encodeHalf(x.data(), n, precision, want_payload, want_residual.data());
    gpu().encodeHalf(on_gpu->data(), n, precision, got_payload, got_residual->data());
    EXPECT_EQ(got_payload, want_payload) << "16-bit payload";
    expectSameBits("16-bit residual", toHost(got_residual->data(), n), want_residual);
  }
  for (size_t bucket : {size_t{1}, size_t{7}, size_t{512}, n + 1}) {
    std::vector<uint8_t> want_payload, got_payload;
    Floats want_residual(n);
    auto got_residual = gpu().allocate(n);
    cpuDevice().encodeSign(x.data(), n, bucket, want_payload, want_residual.data());
    gpu().encodeSign(on_gpu->data(), n, bucket, got_payload, got_residual->data());
    EXPECT_EQ(got_payload, want_payload) << "sign payload, buckets of " << bucket;
    expectSameBits("sign residual, buckets of " + std::to_string(bucket),
                   toHost(got_residual->data(), n), want_residual);
  }
  const Floats residual = randomFloats(n, 12);
  auto on_gpu_residual = onGpu(residual);
  Floats sum = x;
  cpuDevice().add(sum.data(), residual.data(), n);
  gpu().add(on_gpu->data(), on_gpu_residual->data(), n);
  const std::vector<uint32_t> at = {0, 5, 17, 4096, static_cast<uint32_t>(n - 1)};
  const Floats put = {1.f, -2.f, 0.5f, 3.f, -0.25f};
  cpuDevice().scatter(sum.data(), n, at.data(), put.data(), at.size());
  gpu().scatter(on_gpu->data(), n, at.data(), put.data(), at.size());
  expectSameBits("add then scatter", toHost(on_gpu->data(), n), sum);
  Floats velocity = randomFloats(n, 13);
  auto on_gpu_velocity = onGpu(velocity);
  cpuDevice().accumulateMomentum(velocity.data(), sum.data(), n, 0.9f);
  gpu().accumulateMomentum(on_gpu_velocity->data(), on_gpu->data(), n, 0.9f);
  expectSameBits("momentum's velocity", toHost(on_gpu_velocity->data(), n), velocity);
  expectSameBits("momentum's gradient", toHost(on_gpu->data(), n), sum);
}

// An index past the scatter's destination is refused on the host, naming it and the length,
// before the kernel could write past the buffer; the buffer keeps its values.
TEST_F(CudaDeviceTest, ScatterRefusesAnIndexOutOfRangeNamingItAndTheLength) {
  const size_t n = 1001;
  const Floats values = randomFloats(n, 18);
  auto on_gpu = onGpu(values);
  const std::vector<uint32_t> at = {3, static_cast<uint32_t>(n)};
  const Floats put = {1.f, 2.f};
  try {
    gpu().scatter(on_gpu->data(), n, at.data(), put.data(), at.size());
    FAIL() << "index " << n << " of " << n << " floats was not refused";
  } catch (const std::out_of_range& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("index 1001 "), std::string::npos) << message;
    EXPECT_NE(message.find("of 1001 floats"), std::string::npos) << message;
  }
  expectSameBits("after the refused scatter", toHost(on_gpu->data(), n), values);
}

// qsgd's encode (kernels/cpu/qsgd_quantize.h) on the GPU: each element's coin drawn from
// the host's stream at its own position, the codes packed across byte boundaries (3, 5 and
// 7 bits), buckets of one, of a few and of more than n, both roundings, zeros and values
// tied at a level: the same payload and residual as the CPU's.
TEST_F(CudaDeviceTest, QsgdKernelsMatchTheCpuBitForBit) {
  const size_t n = 70001;
  Floats x = randomFloats(n, 14);
  for (size_t i = 0; i < n; i += 5) x[i] = std::round(x[i] * 4.f) / 4.f;  // on a level
  for (size_t i = 1; i < n; i += 97) x[i] = 0.f;
  auto on_gpu = onGpu(x);
  for (int bits : {2, 3, 4, 5, 7, 8}) {
    for (size_t bucket : {size_t{1}, size_t{6}, size_t{512}, n + 1}) {
      for (bool nearest : {true, false}) {
        const kernels::QsgdRounding rounding{nearest, 0x1234567ull * bits + bucket};
        std::vector<uint8_t> want_payload, got_payload;
        Floats want_residual(n);
        auto got_residual = gpu().allocate(n);
        cpuDevice().encodeQsgd(x.data(), n, bits, bucket, rounding, want_payload,
                               want_residual.data());
        gpu().encodeQsgd(on_gpu->data(), n, bits, bucket, rounding, got_payload,
                         got_residual->data());
        const std::string what = std::to_string(bits) + " bits, buckets of " +
                                 std::to_string(bucket) + (nearest ? ", nearest" : ", stochastic");
        EXPECT_EQ(got_payload, want_payload) << "qsgd payload, " << what;
        expectSameBits("qsgd residual, " + what, toHost(got_residual->data(), n), want_residual);
      }
    }
  }
}

// The device's gemm (powersgd's projections) for every transposition, alpha -1 (the
// residual's negated product) and a beta that keeps C: the CPU's product to fp32 rounding
// of k sums (cuBLAS sums in another order; TF32 off), where a wrong operand is off by O(10).
TEST_F(CudaDeviceTest, GemmMatchesTheCpuForEveryTransposition) {
  const int m = 37, n = 5, k = 300;
  const Floats a = randomFloats(static_cast<size_t>(m) * k, 15);
  const Floats b = randomFloats(static_cast<size_t>(k) * n, 16);
  const Floats c0 = randomFloats(static_cast<size_t>(m) * n, 17);
  auto on_a = onGpu(a), on_b = onGpu(b);
  using kernels::Trans;
  for (Trans ta : {Trans::kNo, Trans::kYes}) {
    for (Trans tb : {Trans::kNo, Trans::kYes}) {
      for (float alpha : {1.f, -1.f}) {
        const float beta = alpha < 0 ? 0.f : 0.5f;
        const int lda = ta == Trans::kNo ? k : m, ldb = tb == Trans::kNo ? n : k;
        Floats want = c0;
        cpuDevice().gemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, want.data(),
                         n);
        auto on_c = onGpu(c0);
        gpu().gemm(ta, tb, m, n, k, alpha, on_a->data(), lda, on_b->data(), ldb, beta, on_c->data(),
                   n);
        const Floats got = toHost(on_c->data(), want.size());
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_NEAR(got[i], want[i], 1e-5 * k)  // k products of normal values
              << "element " << i << ", alpha " << alpha << ", transposes " << (ta == Trans::kYes)
              << (tb == Trans::kYes);
      }
    }
  }
}

TEST_F(CudaDeviceTest, AnotherThreadUsesTheSameGpu) {
  const Floats values = randomFloats(257, 10);
  auto buffer = gpu().allocate(values.size());
  Floats back(values.size());
  std::thread other([&] {
    gpu().upload(buffer->data(), values.data(), values.size());
    gpu().fill(buffer->data(), 1, -1.f);
    gpu().download(back.data(), buffer->data(), values.size());
  });
  other.join();
  Floats expected = values;
  expected[0] = -1.f;
  expectSameBits("from another thread", back, expected);
}

}  // namespace
}  // namespace ranklab
