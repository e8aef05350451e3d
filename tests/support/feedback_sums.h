// Test support: error feedback's invariant on one rank, where what a step returns is what it
// sent: over many steps sum(sent) + residual == sum(raw), up to float rounding.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

namespace ranklab::testing {

// What 60 steps of gradients added up to, as they were and as they were sent.
struct FeedbackSums {
  std::vector<double> raw, sent;
  double largest = 0;  // the largest |sum(raw)| seen along the way
};

// Hands `send` 60 steps of `count` small normal values with a drift (so residuals build up);
// `send(g)` replaces g with what was sent.
template <typename Send>
FeedbackSums sumDriftingSteps(size_t count, Send&& send) {
  std::mt19937_64 rng(17);
  std::normal_distribution<float> normal(0.f, 1e-3f);
  FeedbackSums sums;
  sums.raw.assign(count, 0);
  sums.sent.assign(count, 0);
  std::vector<float> g(count);
  for (int step = 0; step < 60; ++step) {
    for (size_t i = 0; i < count; ++i) {
      g[i] = normal(rng) + (i % 5 == 0 ? 1e-3f : 0.f);
      sums.raw[i] += g[i];
      sums.largest = std::max(sums.largest, std::fabs(sums.raw[i]));
    }
    send(g);
    for (size_t i = 0; i < count; ++i) sums.sent[i] += g[i];
  }
  return sums;
}

// How far sum(sent) + residual is from sum(raw), and how much the residual holds.
struct FeedbackGap {
  double worst = 0;          // the largest |sum(sent) + residual - sum(raw)|
  double residual_norm = 0;  // the residual's squared norm
};

inline FeedbackGap feedbackGap(const FeedbackSums& sums, const std::vector<float>& residual) {
  FeedbackGap gap;
  for (size_t i = 0; i < sums.raw.size(); ++i) {
    gap.worst = std::max(gap.worst, std::fabs(sums.sent[i] + residual[i] - sums.raw[i]));
    gap.residual_norm += double(residual[i]) * residual[i];
  }
  return gap;
}

}  // namespace ranklab::testing
