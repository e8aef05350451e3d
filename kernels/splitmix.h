// SplitMix64's output function, for the host and, compiled by nvcc, for GPU threads alike:
// the random stream behind comm/codecs/fast_rng.h and QSGD's stochastic rounding, so a
// device that draws its own numbers draws the host's (draw d of a stream whose state is s
// is splitMix64(s + (d + 1) * kSplitMixStep)).
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace ranklab::kernels {

constexpr uint64_t kSplitMixStep = 0x9e3779b97f4a7c15ull;

// The output for a state already advanced by kSplitMixStep.
RANKLAB_HOST_DEVICE inline uint64_t splitMix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace ranklab::kernels
