// Test support: reproducible normally distributed floats, one stream per seed.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace ranklab::testing {

inline std::vector<float> normalFloats(unsigned seed, size_t count) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> v(count);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace ranklab::testing
