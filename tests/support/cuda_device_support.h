// What the CUDA device tests share: a fixture that skips without a GPU and moves buffers up
// and down, seeded inputs, and comparisons against the CPU's values that print the gap.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/model/compute_device.h"
#include "engine/model/cuda_device.h"
#include "kernels/gpu_probe.h"

namespace ranklab::testing {

using Floats = std::vector<float>;

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (kernels::usableGpus(&why) == 0) GTEST_SKIP() << "CUDA tests skipped: " << why;
  }
  const ComputeDevice& gpu() const { return cudaDevice(0); }

  std::unique_ptr<DeviceBuffer> onGpu(const Floats& host) const {
    auto buffer = gpu().allocate(host.size());
    gpu().upload(buffer->data(), host.data(), host.size());
    return buffer;
  }
  Floats toHost(const float* from, size_t n) const {
    Floats host(n);
    gpu().download(host.data(), from, n);
    return host;
  }
};

inline Floats randomFloats(size_t n, unsigned seed, float scale = 1.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, scale);
  Floats values(n);
  for (float& v : values) v = normal(rng);
  return values;
}

inline std::vector<uint8_t> randomLabels(size_t n, int classes, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> label(0, classes - 1);
  std::vector<uint8_t> labels(n);
  for (auto& l : labels) l = static_cast<uint8_t>(label(rng));
  return labels;
}

// max |got - want| / max |want| (absolute when want is all zeros), printed under `what`.
inline double relativeDifference(const std::string& what, const Floats& got, const Floats& want) {
  EXPECT_EQ(got.size(), want.size()) << what;
  double largest = 0, scale = 0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    largest = std::max(largest, std::abs(static_cast<double>(got[i]) - want[i]));
    if (std::isnan(got[i]) != std::isnan(want[i]))
      largest = std::numeric_limits<double>::infinity();
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  const double relative = scale > 0 ? largest / scale : largest;
  std::printf("  %-40s largest |cuda - cpu| = %.3g (relative %.3g, %zu values)\n", what.c_str(),
              largest, relative, want.size());
  return relative;
}

inline void expectClose(const std::string& what, const Floats& got, const Floats& want,
                        double tolerance) {
  EXPECT_LE(relativeDifference(what, got, want), tolerance) << what;
}

inline void expectSameBits(const std::string& what, const Floats& got, const Floats& want) {
  relativeDifference(what, got, want);
  ASSERT_EQ(got.size(), want.size()) << what;
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << what;
}

}  // namespace ranklab::testing
