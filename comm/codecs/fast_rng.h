// A small, fast random stream for codecs that draw one number per element (stochastic
// rounding, random index sets): SplitMix64, reproducible from a seed.
#pragma once

#include <cstdint>

#include "kernels/splitmix.h"

namespace ranklab {

class FastRng {
 public:
  explicit FastRng(uint64_t seed) : state_(seed) {}

  uint64_t next() { return kernels::splitMix64(state_ += kernels::kSplitMixStep); }
  // Moves past `draws` numbers without drawing them (a device drew them).
  void skip(uint64_t draws) { state_ += draws * kernels::kSplitMixStep; }

  // Uniform in [0, 1) with 24 random bits: exactly representable floats.
  float uniform() { return static_cast<float>(next() >> 40) * 0x1.0p-24f; }

  // Uniform integer in [0, bound), bound > 0 (multiply-shift; bias below 2^-32 for our sizes).
  // The stream's position, for checkpoints: FastRng(position()) continues this stream.
  uint64_t position() const { return state_; }

  uint32_t below(uint32_t bound) {
    return static_cast<uint32_t>(((next() >> 32) * static_cast<uint64_t>(bound)) >> 32);
  }

 private:
  uint64_t state_;
};

// Mixes several values into one seed, so (seed, rank, step) streams do not overlap.
inline uint64_t mixSeed(uint64_t a, uint64_t b, uint64_t c = 0) {
  FastRng rng(a ^ (b * 0x9e3779b97f4a7c15ull) ^ (c * 0xc2b2ae3d27d4eb4full));
  rng.next();
  return rng.next();
}

}  // namespace ranklab
